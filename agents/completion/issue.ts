/**
 * The `issue` handler: complete when the GitHub issue is closed.
 *
 * @module
 */

import { redactorOfProcess } from "../support/redact.ts";
import { blockquote, codeSpan, inline } from "../support/markdown.ts";
import { usd } from "../support/format.ts";
import type { CommandRefusal } from "../backends/port.ts";
import { type GhComment, type GhIssue, GitHubCli } from "../github/port.ts";
import type { PromptResolver } from "../prompts/resolver.ts";
import { UsageError } from "../support/errors.ts";
import { BaseHandler, type HandlerContext } from "./base_handler.ts";
import { isSeedShape, seedContext } from "./seed_shapes.ts";
import type { CompletionCriteria, CompletionHandler, RunOutcome } from "./handler_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";

/**
 * The agent may not close the issue itself: the runner does once the evidence
 * passes. Refused by what the command does, whatever its spelling: `gh` by
 * any path or quoted, `gh issue close|edit|reopen`, `gh api` with a closed
 * state or a PATCH of an issue, `hub issue update`, and `curl` or `wget` at an
 * issue of the API. Its GitHub credentials are taken away besides
 * ({@linkcode noGithubWriteEnv}); this refusal is the message it reads.
 */
export const ISSUE_CLOSE_REFUSAL: CommandRefusal = {
  pattern: [
    String
      .raw`(?:^|[\s;&|(\`'"/])gh['")]*\s+(?:\S+\s+)*?issue\s+(?:close|edit|reopen|delete|transfer)\b`,
    String
      .raw`(?:^|[\s;&|(\`'"/])gh['")]*\s+(?:\S+\s+)*?api\b.*(?:state[\s"':=]+closed|-X\s*PATCH|--method[\s=]+PATCH)`,
    String.raw`(?:^|[\s;&|(\`'"/])hub['")]*\s+(?:\S+\s+)*?issue\s+update\b`,
    String.raw`\b(?:curl|wget|http)\b.*\brepos/[^/\s]+/[^/\s]+/issues/\d+`,
  ].join("|"),
  reason:
    "finishline closes the issue itself once the evidence passes, so it refused this command. Do not close or edit the issue: call the complete_task tool with status success when the work is done.",
};

/**
 * The agent's environment in a run whose runner closes the issue: no GitHub
 * token and no `gh` login, so that no spelling of "close the issue" can
 * succeed. The runner keeps its own credentials for what it does itself.
 *
 * @param configDir A `gh` configuration folder with no login in it.
 * @returns Variables over the runner's environment.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { noGithubWriteEnv } from "./issue.ts";
 *
 * const env = noGithubWriteEnv("/tmp/none");
 * assert.equal(env.GH_TOKEN, "");
 * assert.equal(env.GH_CONFIG_DIR, "/tmp/none");
 * ```
 */
export function noGithubWriteEnv(configDir: string): Record<string, string> {
  return {
    GH_TOKEN: "",
    GITHUB_TOKEN: "",
    GH_ENTERPRISE_TOKEN: "",
    GITHUB_ENTERPRISE_TOKEN: "",
    GH_CONFIG_DIR: configDir,
    GH_NO_UPDATE_NOTIFIER: "1",
    GH_PROMPT_DISABLED: "1",
  };
}

/** Marks comments finishline posts, so they are not fed back as human steering. */
export const COMMENT_MARKER = "<!-- finishline -->";

/** Options of {@linkcode IssueCompletionHandler}. */
export interface IssueHandlerOptions {
  /** The issue, read once before the run. */
  issue: GhIssue;
  /** The gh port. */
  github: GitHubCli;
  /** Comments already on the issue when the run started (not fed back as new). @default [] */
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
 * Built in the design's shape, `new IssueCompletionHandler({ issueNumber,
 * promptResolver })`, it runs `gh` from PATH in the working directory, reads
 * the issue at the first prompt, and completes once the issue is CLOSED (the
 * agent closes it, `github.closeIssue: "agent"`).
 *
 * @example With a stand-in for `gh` that reports the issue closed
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 * import { sampleIssueHandler, standInGh } from "@finishline/agents/testing";
 *
 * await using gh = await standInGh('{"state": "CLOSED"}');
 * const handler = await sampleIssueHandler({ gh });
 * assert.equal(handler.type, "issue");
 * assert.equal(await handler.isComplete(emptySummary(1)), true);
 * assert.deepEqual(await gh.calls(), ["issue view 7 --repo octo/demo --json state"]);
 * ```
 */
export class IssueCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "issue". */
  readonly type = "issue" as const;
  #number: number;
  /** Read before the run, or in the design's shape at the first prompt. */
  #issue: GhIssue | undefined;
  #github: GitHubCli;
  /** Comment ids already seen; in the design's shape, filled at the first prompt. */
  #seen: Set<string> | undefined;
  #faults: string[];
  #lastState: "OPEN" | "CLOSED" | undefined;

  /**
   * Create the handler in the design's shape, for an issue of the working
   * directory's repository, read at the first prompt with `gh` from PATH.
   *
   * @param options The issue number and the prompt resolver.
   * @throws {UsageError} When the issue number is missing or 0.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { mockPromptResolver } from "@finishline/agents/testing";
   * import { IssueCompletionHandler } from "./issue.ts";
   *
   * const handler = new IssueCompletionHandler({ issueNumber: 7, promptResolver: mockPromptResolver });
   * assert.equal(handler.buildCompletionCriteria().short, "close issue #7");
   * assert.throws(
   *   () => new IssueCompletionHandler({ issueNumber: 0, promptResolver: mockPromptResolver }),
   *   { message: "--issue <number> is required for issue completion type" },
   * );
   * ```
   */
  constructor(options: {
    /** The issue number. */
    issueNumber: number;
    /** Resolves `initial_issue` and `continuation_issue`. */
    promptResolver: Pick<PromptResolver, "resolve">;
  });
  /**
   * Create the handler for an issue read before the run.
   *
   * @param context Definition, arguments, resolver and cap.
   * @param options The issue, the gh port, known comments and a fault sink.
   */
  constructor(context: HandlerContext, options: IssueHandlerOptions);
  constructor(
    first: HandlerContext | {
      issueNumber: number;
      promptResolver: Pick<PromptResolver, "resolve">;
    },
    second?: IssueHandlerOptions,
  ) {
    if (isSeedShape(first)) {
      if (!first.issueNumber) {
        throw new UsageError("--issue <number> is required for issue completion type");
      }
      super(seedContext(first.promptResolver));
      this.#number = first.issueNumber;
      this.#github = new GitHubCli({ cwd: Deno.cwd() });
      this.#seen = undefined;
      this.#faults = [];
      return;
    }
    super(first);
    const options = second!;
    this.#number = options.issue.number;
    this.#issue = options.issue;
    this.#github = options.github;
    this.#seen = new Set((options.knownComments ?? []).map((comment) => comment.id));
    this.#faults = options.faults ?? [];
  }

  /**
   * The issue as read at the start (in the design's shape, at the first
   * prompt; undefined until then).
   *
   * @returns The issue.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleIssueHandler } from "@finishline/agents/testing";
   *
   * const handler = await sampleIssueHandler();
   * assert.equal(handler.issue?.title, "Login test is flaky");
   * ```
   */
  get issue(): GhIssue | undefined {
    return this.#issue;
  }

  /**
   * Build the first prompt from the `initial_issue` template, with the issue's
   * title, body, labels and URL, so the agent need not fetch it.
   *
   * @param args The run's arguments.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleIssueHandler } from "@finishline/agents/testing";
   *
   * const prompt = await (await sampleIssueHandler()).buildInitialPrompt({});
   * assert.match(prompt, /# GitHub issue #7: Login test is flaky/);
   * assert.match(prompt, /It fails one run in ten\./);
   * ```
   */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    const issue = await this.#read();
    return await this.context.resolver.resolve("initial_issue", {
      ...this.variables(1, [], args),
      ...this.#issueVariables(issue),
    });
  }

  /**
   * Build the prompt of a later iteration from the `continuation_issue` template,
   * with the comments people added since the last prompt.
   *
   * @param iteration The iteration the prompt is for (2 and later).
   * @param summaries Every earlier iteration, oldest first.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import { sampleIssueHandler, standInGh } from "@finishline/agents/testing";
   *
   * const comment = { id: "c1", author: { login: "ada" }, body: "Check logout too.", createdAt: "2025-05-01T10:00:00Z" };
   * await using gh = await standInGh(JSON.stringify({ comments: [comment] }));
   * const prompt = await (await sampleIssueHandler({ gh })).buildContinuationPrompt(2, [emptySummary(1)]);
   * assert.match(prompt, /\*\*@ada\*\* \(2025-05-01T10:00:00Z\):\nCheck logout too\./);
   * ```
   */
  async buildContinuationPrompt(iteration: number, summaries: IterationSummary[]): Promise<string> {
    const issue = await this.#read();
    return await this.context.resolver.resolve("continuation_issue", {
      ...this.variables(iteration, summaries),
      ...this.#issueVariables(issue),
      "uv-new_comments": await this.#newComments(),
    });
  }

  /**
   * Tell the agent how the run ends: with `github.closeIssue: "runner"` (the
   * default), a complete_task success that the evidence confirms, after which
   * finishline closes the issue; with `"agent"`, the agent closing the issue.
   *
   * @returns The short and detailed criteria.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleIssueHandler } from "@finishline/agents/testing";
   *
   * const handler = await sampleIssueHandler();
   * assert.equal(handler.buildCompletionCriteria().short, "resolve issue #7 with passing checks");
   * ```
   */
  buildCompletionCriteria(): CompletionCriteria {
    const number = this.#number;
    const title = this.#issue ? ` ("${this.#issue.title}")` : "";
    if (this.#runnerCloses) {
      return {
        short: `resolve issue #${number} with passing checks`,
        detailed: [
          `Complete every requirement of GitHub issue #${number}${title}.`,
          `Commit the work with clear commit messages, then call complete_task with status success.`,
          `finishline then checks the evidence (the repository's own checks, when it has any) and closes the issue itself once it passes; do not close the issue yourself.`,
        ].join(" "),
      };
    }
    return {
      short: `close issue #${number}`,
      detailed: [
        `Complete every requirement of GitHub issue #${number}${title}.`,
        `Commit the work with clear commit messages. When all requirements are met and committed, close the issue with \`gh issue close ${number} --comment "<what you did>"\`.`,
        `The run ends when the issue is closed; do not close it before the work is done and committed.`,
      ].join(" "),
    };
  }

  /**
   * Ask GitHub whether the issue is closed; when gh keeps failing, the answer
   * is no.
   *
   * With `github.closeIssue: "runner"` (the default) the agent's complete_task
   * success counts too: the runner then checks the evidence and closes the
   * issue itself.
   *
   * @param summary The iteration's summary.
   * @returns True when the issue is CLOSED, or the agent reported success and the runner closes.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import { sampleIssueHandler, standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh('{"state": "OPEN"}');
   * const handler = await sampleIssueHandler({ gh });
   * assert.equal(await handler.isComplete(emptySummary(1)), false);
   * ```
   */
  async isComplete(summary: IterationSummary): Promise<boolean> {
    this.#lastState = await this.#github.issueState(this.#number);
    if (this.#runnerCloses) {
      // The agent's complete_task is the claim; the runner's evidence decides, then closes the issue.
      return this.#lastState === "CLOSED" || summary.completeTask?.status === "success";
    }
    return this.#lastState === "CLOSED";
  }

  /** Whether the runner closes the issue once the evidence passes (`github.closeIssue`). */
  get #runnerCloses(): boolean {
    return this.context.definition.github.closeIssue === "runner";
  }

  /**
   * Say after which iteration the issue was closed.
   *
   * @param summary The last iteration's summary.
   * @returns One line for the final report.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import { sampleIssueHandler } from "@finishline/agents/testing";
   *
   * assert.equal(
   *   await (await sampleIssueHandler()).getCompletionDescription(emptySummary(2)),
   *   "Issue #7 done after iteration 2: the evidence passed, and finishline closes the issue",
   * );
   * ```
   */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(
      this.#runnerCloses
        ? `Issue #${this.#number} done after iteration ${summary.iteration}: the evidence passed, and finishline closes the issue`
        : `Issue #${this.#number} closed after iteration ${summary.iteration}`,
    );
  }

  /**
   * Add the in-progress label (`github.labels.inProgress`), creating it when
   * it is missing.
   *
   * @returns Resolves once gh has run.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleIssueHandler, standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * const github = { labels: { inProgress: "in-progress" } };
   * await (await sampleIssueHandler({ gh, definition: { github } })).onRunStart();
   * const calls = await gh.calls();
   * assert.match(calls[0], /^label create in-progress --repo octo\/demo/);
   * assert.equal(calls[1], "issue edit 7 --repo octo/demo --add-label in-progress");
   * ```
   */
  async onRunStart(): Promise<void> {
    const label = this.context.definition.github.labels.inProgress;
    if (!label) return;
    await this.#github.ensureLabel(label);
    await this.#github.editLabel(this.#number, { add: label });
  }

  /**
   * Post a short progress comment when `github.comment` is on.
   *
   * @param summary The iteration's summary.
   * @param verdict Its verdict.
   * @returns Resolves once gh has run.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import { sampleIssueHandler, standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * const handler = await sampleIssueHandler({ gh, definition: { github: { comment: true } } });
   * await handler.onIterationEnd(emptySummary(1), "continue");
   * const calls = (await gh.calls()).join("\n");
   * assert.match(calls, /^issue comment 7 --repo octo\/demo --body <!-- finishline -->/);
   * assert.match(calls, /\*\*finishline\*\* iteration 1\/5: continue/);
   * ```
   */
  async onIterationEnd(summary: IterationSummary, verdict: string): Promise<void> {
    if (this.#runnerCloses && verdict !== "complete" && this.#lastState === "CLOSED") {
      // Closed before the evidence passed (by the agent, a script or a person): not done yet.
      const why = summary.verification?.passed === false
        ? `: ${inline(summary.verification.feedback.split("\n")[0])}`
        : "";
      const reopened = await this.#github.reopenIssue(
        this.#number,
        `${COMMENT_MARKER}\n**finishline** reopened this issue: it was closed in iteration ${summary.iteration} before the evidence passed${why}. finishline closes it once the checks pass.`,
      );
      if (reopened) this.#lastState = "OPEN";
    }
    if (!this.context.definition.github.comment) return;
    const last = summary.assistantResponses.at(-1)?.trim() ?? "";
    const body = [
      COMMENT_MARKER,
      `**finishline** iteration ${summary.iteration}/${this.context.maxIterations}: ${verdict}`,
      "",
      `Tools: ${summary.toolsUsed.length}; turns: ${summary.turns}; cost: ${usd(summary.costUsd)}`,
      // Redacted before it is cut: a secret cut in two would no longer be recognised.
      last ? `\n${blockquote(redactorOfProcess().redact(last).slice(0, 500)).join("\n")}` : "",
    ].join("\n");
    await this.#github.comment(this.#number, body);
  }

  /**
   * Close the issue of a completed run (with `github.closeIssue: "runner"`),
   * with a comment listing the checks that passed, the commits and the pull
   * request (an `unverified` run, which nothing checked, gets a comment that
   * says so and stays open); remove the in-progress label and, when the run ended blocked,
   * add the blocked label.
   *
   * @param outcome The run's status and reason.
   * @returns Resolves once gh has run.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleIssueHandler, standInGh } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh();
   * const github = { labels: { inProgress: "in-progress", blocked: "blocked" } };
   * const handler = await sampleIssueHandler({ gh, definition: { github } });
   * await handler.onRunEnd({ status: "blocked", reason: "Needs a staging account" });
   * const calls = await gh.calls();
   * assert.equal(calls[0], "issue edit 7 --repo octo/demo --remove-label in-progress");
   * assert.equal(calls.at(-1), "issue edit 7 --repo octo/demo --add-label blocked");
   * ```
   */
  async onRunEnd(outcome: RunOutcome): Promise<void> {
    if (this.#runnerCloses && outcome.status === "completed") {
      const body = `${COMMENT_MARKER}\n${closingComment(outcome)}`;
      if (this.#lastState === "CLOSED") await this.#github.comment(this.#number, body);
      else if (await this.#github.closeIssue(this.#number, body)) this.#lastState = "CLOSED";
    } else if (this.#runnerCloses && outcome.status === "unverified") {
      // No evidence is not success: the issue stays open, and says why.
      await this.#github.comment(
        this.#number,
        `${COMMENT_MARKER}\n**finishline** did not close this issue: ${outcome.reason}. A person should check the work, or give the repository a check that covers it.`,
      );
    }
    const { inProgress, blocked } = this.context.definition.github.labels;
    if (inProgress) await this.#github.editLabel(this.#number, { remove: inProgress });
    if (blocked && outcome.status === "blocked") {
      await this.#github.ensureLabel(blocked);
      await this.#github.editLabel(this.#number, { add: blocked });
    }
  }

  /**
   * Hand over the gh faults collected since the last call, for the
   * iteration's record.
   *
   * @returns The faults, oldest first; the handler forgets them.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleIssueHandler } from "@finishline/agents/testing";
   *
   * // The factory shares this array with the gh port's onFault callback.
   * const faults = ["gh issue view 7: timed out after 30000 ms (attempt 1, retrying)"];
   * const handler = await sampleIssueHandler({ faults });
   * assert.equal(handler.drainFaults().length, 1);
   * assert.deepEqual(handler.drainFaults(), []);
   * ```
   */
  drainFaults(): string[] {
    return this.#faults.splice(0);
  }

  /**
   * Match learnings of earlier runs against the issue's title and body.
   *
   * @returns Search text.
   */
  protected override learningsQuery(): string {
    return this.#issue ? `${this.#issue.title}\n${this.#issue.body}` : "";
  }

  /** The issue; in the design's shape read once, with the comments already on it. */
  async #read(): Promise<GhIssue> {
    if (!this.#issue) {
      const issue = await this.#github.issue(this.#number);
      const known = await this.#github.issueComments(this.#number) ?? [];
      this.#seen = new Set(known.map((comment) => comment.id));
      this.#issue = issue;
    }
    return this.#issue;
  }

  #issueVariables(issue: GhIssue): Record<string, string | number> {
    return {
      "uv-issue_number": issue.number,
      "uv-issue_title": issue.title,
      "uv-issue_body": issue.body.trim() || "(the issue has no description)",
      "uv-issue_url": issue.url,
      "uv-issue_labels": issue.labels.join(", ") || "(none)",
      "uv-finish_instructions": this.#runnerCloses
        ? `When all requirements are met and committed, call the complete_task tool with status success. Do not close the issue yourself: finishline checks the evidence (the repository's own checks) and closes issue #${issue.number} once it passes`
        : `When all requirements are met and committed, close the issue with \`gh issue close ${issue.number} --comment "<what you did>"\`. The run ends when the issue is closed`,
    };
  }

  async #newComments(): Promise<string> {
    const comments = await this.#github.issueComments(this.#number);
    if (!comments) return "(the comments could not be read this time)";
    const seen = this.#seen ??= new Set();
    const fresh = comments.filter((comment) =>
      !seen.has(comment.id) && !comment.body.includes(COMMENT_MARKER)
    );
    for (const comment of comments) seen.add(comment.id);
    if (fresh.length === 0) return "(no new comments)";
    return fresh
      .map((comment) => `**@${comment.author}** (${comment.createdAt}):\n${comment.body.trim()}`)
      .join("\n\n");
  }
}

/** The comment that closes an issue: what proved the work done. */
function closingComment(outcome: RunOutcome): string {
  const evidence = outcome.evidence;
  const lines = [`**finishline** closes this issue: ${inline(outcome.reason)}.`];
  if (evidence?.checks.length) {
    lines.push("", "Checks that passed on the final state:");
    for (const check of evidence.checks) lines.push(`- ${codeSpan(check)}`);
  }
  if (evidence?.commits.length) {
    lines.push("", "Commits:");
    for (const commit of evidence.commits.slice(0, 20)) lines.push(`- ${inline(commit)}`);
    if (evidence.commits.length > 20) lines.push(`- and ${evidence.commits.length - 20} more`);
  }
  if (evidence?.pullRequest) lines.push("", `Pull request: ${evidence.pullRequest}`);
  return lines.join("\n");
}
