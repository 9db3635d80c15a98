/**
 * The `issue` handler: complete when the GitHub issue is closed.
 *
 * @module
 */

import type { GhComment, GhIssue, GitHubCli } from "../github.ts";
import { BaseHandler, type HandlerContext } from "./_base.ts";
import type { CompletionCriteria, CompletionHandler, IterationSummary } from "./types.ts";

/** Marks comments finishline posts, so they are not fed back as human steering. */
export const COMMENT_MARKER = "<!-- finishline -->";

/** Options of {@linkcode IssueCompletionHandler}. */
export interface IssueHandlerOptions {
  /** The issue, read once before the run. */
  issue: GhIssue;
  /** The gh port. */
  github: GitHubCli;
  /** Comments already on the issue when the run started (not fed back as new). */
  knownComments?: GhComment[];
  /** Collects the port's faults for the iteration record. */
  faults?: string[];
}

/**
 * Completes when the issue is CLOSED, checked once after each iteration.
 * Reads the issue once at the start so the agent gets the task without
 * fetching it, feeds new human comments into each continuation prompt, and
 * manages the `github.labels` of the definition.
 *
 * @example
 * ```ts ignore
 * const issue = await github.issue(42);
 * const handler = new IssueCompletionHandler(context, { issue, github });
 * ```
 */
export class IssueCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "issue". */
  readonly type = "issue" as const;
  #issue: GhIssue;
  #github: GitHubCli;
  #seen: Set<string>;
  #faults: string[];
  #lastState: "OPEN" | "CLOSED" | undefined;

  /**
   * @param context Definition, arguments, resolver and cap.
   * @param options The issue, the gh port, known comments and a fault sink.
   */
  constructor(context: HandlerContext, options: IssueHandlerOptions) {
    super(context);
    this.#issue = options.issue;
    this.#github = options.github;
    this.#seen = new Set((options.knownComments ?? []).map((comment) => comment.id));
    this.#faults = options.faults ?? [];
  }

  /** The issue as read at the start. */
  get issue(): GhIssue {
    return this.#issue;
  }

  /** @inheritdoc */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    return await this.context.resolver.resolve("initial_issue", {
      ...this.variables(1, [], args),
      ...this.#issueVariables(),
    });
  }

  /** @inheritdoc */
  async buildContinuationPrompt(iteration: number, summaries: IterationSummary[]): Promise<string> {
    return await this.context.resolver.resolve("continuation_issue", {
      ...this.variables(iteration, summaries),
      ...this.#issueVariables(),
      "uv-new_comments": await this.#newComments(),
    });
  }

  /** @inheritdoc */
  buildCompletionCriteria(): CompletionCriteria {
    const { number, title } = this.#issue;
    return {
      short: `close issue #${number}`,
      detailed: [
        `Complete every requirement of GitHub issue #${number} ("${title}").`,
        `Commit the work with clear commit messages. When all requirements are met and committed, close the issue with \`gh issue close ${number} --comment "<what you did>"\`.`,
        `The run ends when the issue is closed; do not close it before the work is done and committed.`,
      ].join(" "),
    };
  }

  /** @inheritdoc */
  async isComplete(_summary: IterationSummary): Promise<boolean> {
    this.#lastState = await this.#github.issueState(this.#issue.number);
    return this.#lastState === "CLOSED";
  }

  /** @inheritdoc */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(
      `Issue #${this.#issue.number} closed after iteration ${summary.iteration}`,
    );
  }

  /** Adds the in-progress label. */
  async onRunStart(): Promise<void> {
    const label = this.context.definition.github.labels.inProgress;
    if (!label) return;
    await this.#github.ensureLabel(label);
    await this.#github.editLabel(this.#issue.number, { add: label });
  }

  /**
   * Posts a short progress comment when `github.comment` is on.
   *
   * @param summary The iteration's summary.
   * @param verdict Its verdict.
   */
  async onIterationEnd(summary: IterationSummary, verdict: string): Promise<void> {
    if (!this.context.definition.github.comment) return;
    const last = summary.assistantResponses.at(-1)?.trim() ?? "";
    const body = [
      COMMENT_MARKER,
      `**finishline** iteration ${summary.iteration}/${this.context.maxIterations}: ${verdict}`,
      "",
      `Tools: ${summary.toolsUsed.length}; turns: ${summary.turns}; cost: $${
        summary.costUsd.toFixed(4)
      }`,
      last ? `\n> ${last.slice(0, 500).replace(/\n/g, "\n> ")}` : "",
    ].join("\n");
    await this.#github.comment(this.#issue.number, body);
  }

  /**
   * Removes the in-progress label and, when the run ended blocked, adds the
   * blocked label.
   *
   * @param outcome The run's status and reason.
   */
  async onRunEnd(outcome: { status: string; reason: string }): Promise<void> {
    const { inProgress, blocked } = this.context.definition.github.labels;
    if (inProgress) await this.#github.editLabel(this.#issue.number, { remove: inProgress });
    if (blocked && outcome.status === "blocked") {
      await this.#github.ensureLabel(blocked);
      await this.#github.editLabel(this.#issue.number, { add: blocked });
    }
  }

  /** @inheritdoc */
  drainFaults(): string[] {
    return this.#faults.splice(0);
  }

  /** @inheritdoc */
  protected override learningsQuery(): string {
    return `${this.#issue.title}\n${this.#issue.body}`;
  }

  #issueVariables(): Record<string, string | number> {
    const issue = this.#issue;
    return {
      "uv-issue_number": issue.number,
      "uv-issue_title": issue.title,
      "uv-issue_body": issue.body.trim() || "(the issue has no description)",
      "uv-issue_url": issue.url,
      "uv-issue_labels": issue.labels.join(", ") || "(none)",
    };
  }

  async #newComments(): Promise<string> {
    const comments = await this.#github.issueComments(this.#issue.number);
    if (!comments) return "(the comments could not be read this time)";
    const fresh = comments.filter((comment) =>
      !this.#seen.has(comment.id) && !comment.body.includes(COMMENT_MARKER)
    );
    for (const comment of comments) this.#seen.add(comment.id);
    if (fresh.length === 0) return "(no new comments)";
    return fresh
      .map((comment) => `**@${comment.author}** (${comment.createdAt}):\n${comment.body.trim()}`)
      .join("\n\n");
  }
}
