/**
 * The `project` handler: takes a GitHub Project (v2) to done, through the
 * phases preparation -> processing -> review -> complete.
 *
 * The phase comes from the board (no item started, some started, all done)
 * and from structured review action blocks the agent emits
 * (`{"type": "review", "result": "pass" | "fail", "notes": "..."}`), never
 * from free text.
 *
 * @module
 */

import { type GhProject, type GhProjectItem, GitHubCli } from "../github/port.ts";
import type { PromptResolver } from "../prompts/resolver.ts";
import { UsageError } from "../support/errors.ts";
import { BaseHandler, type HandlerContext } from "./base_handler.ts";
import { isSeedShape, seedContext } from "./seed_shapes.ts";
import type { CompletionCriteria, CompletionHandler } from "./handler_contract.ts";
import type { DetectedAction, IterationSummary } from "../record/iteration.ts";

/** The phases of a project run. */
export type ProjectPhase = "preparation" | "processing" | "review" | "complete";

/** Options of {@linkcode ProjectCompletionHandler}. */
export interface ProjectHandlerOptions {
  /** The project, read before the run. */
  project: GhProject;
  /** Its items, read before the run. */
  items: GhProjectItem[];
  /** The gh port. */
  github: GitHubCli;
  /** Only items with this label count (`--label`). */
  label?: string;
  /** Collects the port's faults for the iteration record. */
  faults?: string[];
}

const DONE = /^(done|closed|complete|completed|shipped)$/i;
const NOT_STARTED = /^(todo|to do|backlog|new|ready|triage|no status)$/i;
const MAX_LISTED = 30;

/**
 * The phase a board is in: all selected items done -> review; none started
 * -> preparation; otherwise processing.
 *
 * @param items The selected items with their done flags.
 * @returns The board's phase.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { boardPhase } from "./project.ts";
 *
 * assert.equal(boardPhase([{ status: "Todo", done: false }]), "preparation");
 * assert.equal(
 *   boardPhase([{ status: "Done", done: true }, { status: "In Progress", done: false }]),
 *   "processing",
 * );
 * assert.equal(boardPhase([{ status: "Done", done: true }]), "review");
 * ```
 */
export function boardPhase(items: Array<{ status?: string; done: boolean }>): ProjectPhase {
  if (items.every((item) => item.done)) return "review";
  if (
    items.every((item) =>
      !item.done && (item.status === undefined || NOT_STARTED.test(item.status.trim()))
    )
  ) {
    return "preparation";
  }
  return "processing";
}

/**
 * The last review action of an iteration, when it has a valid result.
 *
 * @param actions The iteration's detected actions.
 * @returns The review, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lastReview } from "./project.ts";
 *
 * assert.deepEqual(lastReview([{ type: "review", result: "fail", notes: "no tests" }]), {
 *   result: "fail",
 *   notes: "no tests",
 * });
 * assert.equal(lastReview([{ type: "review", result: "maybe" }]), undefined);
 * ```
 */
export function lastReview(
  actions: DetectedAction[],
): { result: "pass" | "fail"; notes: string } | undefined {
  for (const action of [...actions].reverse()) {
    if (action.type !== "review") continue;
    if (action.result !== "pass" && action.result !== "fail") continue;
    return { result: action.result, notes: typeof action.notes === "string" ? action.notes : "" };
  }
  return undefined;
}

/**
 * Completes when every selected item is Done (or its issue is closed) and a
 * review passed after that.
 *
 * Built in the design's shape, `new ProjectCompletionHandler({ projectNumber,
 * promptResolver, labels })`, it runs `gh` from PATH in the working directory
 * and reads the board (of the repository's owner) at the first prompt; the
 * phases come from the board and review actions all the same.
 *
 * @example With a stand-in for `gh` that shows every item done
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 * import {
 *   projectItemsReply,
 *   sampleProjectHandler,
 *   sampleProjectItems,
 *   standInGh,
 * } from "@finishline/agents/testing";
 *
 * await using gh = await standInGh(projectItemsReply(sampleProjectItems("Done")));
 * const handler = await sampleProjectHandler({ gh });
 * assert.equal(handler.type, "project");
 * assert.equal(handler.phase, "processing");
 * const review = { type: "review", result: "pass", notes: "Both flows tested" };
 * assert.equal(await handler.isComplete({ ...emptySummary(3), detectedActions: [review] }), true);
 * assert.equal(handler.phase, "complete");
 * assert.deepEqual(await gh.calls(), ["project item-list 2 --owner octo --format json --limit 1000"]);
 * ```
 */
export class ProjectCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "project". */
  readonly type = "project" as const;
  #number: number;
  /** Read before the run, or in the design's shape at the first prompt. */
  #project: GhProject | undefined;
  #items: Array<GhProjectItem & { done: boolean }>;
  #github: GitHubCli;
  #label: string | undefined;
  #faults: string[];
  #phase: ProjectPhase;
  #again = false;
  #reviewNotes = "";

  /**
   * Create the handler in the design's shape, for a project of the owner of
   * the working directory's repository, read at the first prompt with `gh`
   * from PATH.
   *
   * @param options The project number, the prompt resolver, and the design's
   * labels (kept as in the design, which never reads them).
   * @throws {UsageError} When the project number is missing or 0.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { mockPromptResolver } from "@finishline/agents/testing";
   * import { ProjectCompletionHandler } from "./project.ts";
   *
   * const handler = new ProjectCompletionHandler({ projectNumber: 2, promptResolver: mockPromptResolver });
   * assert.equal(handler.phase, "preparation");
   * assert.equal(handler.buildCompletionCriteria().short, "finish project #2");
   * ```
   */
  constructor(options: {
    /** The project number. */
    projectNumber: number;
    /** Resolves `initial_project` and `continuation_project_<phase>`. */
    promptResolver: Pick<PromptResolver, "resolve">;
    /** The definition's GitHub labels, as the design passes them. */
    labels?: Record<string, string>;
  });
  /**
   * Create the handler for a board read before the run; its phase comes from
   * the items.
   *
   * @param context Definition, arguments, resolver and cap.
   * @param options Project, items, gh port, label filter, fault sink.
   */
  constructor(context: HandlerContext, options: ProjectHandlerOptions);
  constructor(
    first: HandlerContext | {
      projectNumber: number;
      promptResolver: Pick<PromptResolver, "resolve">;
      labels?: Record<string, string>;
    },
    second?: ProjectHandlerOptions,
  ) {
    if (isSeedShape(first)) {
      if (!first.projectNumber) {
        throw new UsageError("--project <number> is required for project completion type");
      }
      super(seedContext(first.promptResolver));
      this.#number = first.projectNumber;
      this.#github = new GitHubCli({ cwd: Deno.cwd() });
      this.#faults = [];
      this.#items = [];
      this.#phase = "preparation";
      return;
    }
    super(first);
    const options = second!;
    this.#number = options.project.number;
    this.#project = options.project;
    this.#github = options.github;
    this.#label = options.label;
    this.#faults = options.faults ?? [];
    this.#items = this.#select(options.items).map((item) => ({ ...item, done: isDone(item) }));
    this.#phase = boardPhase(this.#items);
  }

  /**
   * The current phase.
   *
   * @returns The phase as of the last check.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleProjectHandler } from "@finishline/agents/testing";
   *
   * // One item is done and one is not: the work is under way.
   * assert.equal((await sampleProjectHandler()).phase, "processing");
   * ```
   */
  get phase(): ProjectPhase {
    return this.#phase;
  }

  /**
   * Build the first prompt from the `initial_project` template, with the phase
   * and the open items.
   *
   * @param args The run's arguments.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleProjectHandler } from "@finishline/agents/testing";
   *
   * const prompt = await (await sampleProjectHandler()).buildInitialPrompt({});
   * assert.match(prompt, /# GitHub project #2: Launch/);
   * assert.match(prompt, /- #4 Add logout \[Todo\] \(item PVTI_2\)/);
   * ```
   */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    const project = await this.#read();
    return await this.context.resolver.resolve("initial_project", {
      ...this.variables(1, [], args),
      ...this.#projectVariables(project),
    });
  }

  /**
   * Build the prompt of a later iteration from the template of the current
   * phase (`continuation_project_<phase>`).
   *
   * @param iteration The iteration the prompt is for (2 and later).
   * @param summaries Every earlier iteration, oldest first.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import { sampleProjectHandler } from "@finishline/agents/testing";
   *
   * const prompt = await (await sampleProjectHandler()).buildContinuationPrompt(2, [emptySummary(1)]);
   * assert.ok(prompt.includes("Phase: **processing**"));
   * ```
   */
  async buildContinuationPrompt(iteration: number, summaries: IterationSummary[]): Promise<string> {
    const project = await this.#read();
    return await this.context.resolver.resolve(`continuation_project_${this.#phase}`, {
      ...this.variables(iteration, summaries),
      ...this.#projectVariables(project),
    });
  }

  /**
   * Tell the agent to take every item to Done, then report a review as an
   * action block.
   *
   * @returns The short and detailed criteria.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleProjectHandler } from "@finishline/agents/testing";
   *
   * const criteria = (await sampleProjectHandler()).buildCompletionCriteria();
   * assert.equal(criteria.short, "finish project #2");
   * assert.match(criteria.detailed, /"type": "review", "result": "pass"/);
   * ```
   */
  buildCompletionCriteria(): CompletionCriteria {
    const number = this.#number;
    const title = this.#project ? ` ("${this.#project.title}")` : "";
    const scope = this.#label ? ` labelled "${this.#label}"` : "";
    return {
      short: `finish project #${number}${scope}`,
      detailed: [
        `Take every item${scope} of GitHub Project #${number}${title} to Done: implement it, commit the work, close its issue and set the item's Status to Done (gh project item-edit).`,
        `When every item is done, review all the work, then report the review as a fenced block:`,
        "```" + this.context.definition.actions.outputFormat,
        `{"type": "review", "result": "pass", "notes": "what you checked"}`,
        "```",
        `Use "result": "fail" with notes on what is wrong if the review finds problems; the run goes back to processing. The run completes only after a passing review with every item done.`,
      ].join("\n"),
    };
  }

  /**
   * Read the board again (and the state of issues not marked Done), move to
   * the phase it shows, and complete once every item is done and the
   * iteration reported a passing review; a failed review sends the run back to
   * processing. When gh keeps failing, the answer is no.
   *
   * @param summary The iteration's summary, for its review action.
   * @returns True when the project is complete.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import {
   *   projectItemsReply,
   *   sampleProjectHandler,
   *   sampleProjectItems,
   *   standInGh,
   * } from "@finishline/agents/testing";
   *
   * await using gh = await standInGh(projectItemsReply(sampleProjectItems("Done")));
   * const handler = await sampleProjectHandler({ gh });
   * // Every item is done, but there was no review yet: review comes next.
   * assert.equal(await handler.isComplete(emptySummary(2)), false);
   * assert.equal(handler.phase, "review");
   * ```
   */
  async isComplete(summary: IterationSummary): Promise<boolean> {
    const project = await this.#read();
    const items = await this.#github.projectItems(project.number, project.owner);
    if (items === undefined) return false;
    const selected = this.#select(items);
    const checked: Array<GhProjectItem & { done: boolean }> = [];
    for (const item of selected) {
      let done = isDone(item);
      if (!done && item.type === "Issue" && item.url) {
        done = (await this.#github.issueState(item.url)) === "CLOSED";
      }
      checked.push({ ...item, done });
    }
    this.#items = checked;
    const board = boardPhase(checked);
    const review = lastReview(summary.detectedActions);
    this.#again = false;
    if (board !== "review") {
      this.#phase = board;
      if (review?.result === "fail") this.#reviewNotes = review.notes;
      return false;
    }
    if (review?.result === "pass") {
      this.#phase = "complete";
      this.#reviewNotes = review.notes;
      return true;
    }
    if (review?.result === "fail") {
      this.#phase = "processing";
      this.#again = true;
      this.#reviewNotes = review.notes;
      return false;
    }
    this.#phase = "review";
    return false;
  }

  /**
   * Say how many items were done and in which iteration the review passed.
   *
   * @param summary The last iteration's summary.
   * @returns One line for the final report.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import { sampleProjectHandler } from "@finishline/agents/testing";
   *
   * assert.equal(
   *   await (await sampleProjectHandler()).getCompletionDescription(emptySummary(4)),
   *   "Project #2: all 2 items done and the review passed in iteration 4",
   * );
   * ```
   */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(
      `Project #${this.#number}: all ${this.#items.length} items done and the review passed in iteration ${summary.iteration}`,
    );
  }

  /**
   * Hand over the gh faults collected since the last call, for the
   * iteration's record.
   *
   * @returns The faults, oldest first; the handler forgets them.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { sampleProjectHandler } from "@finishline/agents/testing";
   *
   * // Without a fault sink in the options, there is nothing to hand over.
   * assert.deepEqual((await sampleProjectHandler()).drainFaults(), []);
   * ```
   */
  drainFaults(): string[] {
    return this.#faults.splice(0);
  }

  /**
   * Match learnings of earlier runs against the project's and items' titles.
   *
   * @returns Search text.
   */
  protected override learningsQuery(): string {
    return [this.#project?.title ?? "", ...this.#items.map((item) => item.title)].join("\n");
  }

  /** The project; in the design's shape read once, with its items and their phase. */
  async #read(): Promise<GhProject> {
    if (!this.#project) {
      const owner = (await this.#github.repository()).owner;
      const project = await this.#github.project(this.#number, owner);
      const items = await this.#github.projectItems(this.#number, owner, { strict: true }) ?? [];
      this.#items = this.#select(items).map((item) => ({ ...item, done: isDone(item) }));
      this.#phase = boardPhase(this.#items);
      this.#project = project;
    }
    return this.#project;
  }

  #select(items: GhProjectItem[]): GhProjectItem[] {
    return this.#label ? items.filter((item) => item.labels.includes(this.#label!)) : items;
  }

  #projectVariables(project: GhProject): Record<string, string | number> {
    return {
      "uv-project_number": project.number,
      "uv-project_title": project.title,
      "uv-project_url": project.url,
      "uv-project_id": project.id,
      "uv-phase": this.#phase,
      "uv-open_items": openItems(this.#items),
      "uv-review_notes": this.#reviewNotes || "(none)",
      "uv-again": this.#again ? "yes" : "no",
    };
  }
}

function isDone(item: GhProjectItem): boolean {
  return item.status !== undefined && DONE.test(item.status.trim());
}

function openItems(items: Array<GhProjectItem & { done: boolean }>): string {
  const open = items.filter((item) => !item.done);
  if (open.length === 0) return "(every item is done)";
  const lines = open.slice(0, MAX_LISTED).map((item) => {
    const ref = item.number !== undefined ? `#${item.number} ` : "";
    return `- ${ref}${item.title} [${item.status ?? "no status"}] (item ${item.id})`;
  });
  if (open.length > MAX_LISTED) lines.push(`- ... and ${open.length - MAX_LISTED} more`);
  return lines.join("\n");
}
