/**
 * The finish workflow (the user's finish tool design): when a run ends,
 * whatever its status, (1) summarise it, (2) capture learnings, (3) assess
 * skills, (4) propose next actions, (5) persist the outcome, (6) clean up.
 * Steps 1 to 4 share one question to a lightweight model (`finish.model`),
 * each reading its part of the one JSON answer, and each falls back on its
 * own to what the run recorded when its part is missing or invalid, the
 * model cannot answer or the cost cap is reached.
 * Each step is checkpointed in the store, so an interrupted finish resumes
 * from the last checkpoint (`main.ts finish RUN_ID`), and running it again
 * is idempotent.
 *
 * @module
 */

import { redactingBackend } from "../backends/redacting.ts";
import type { AgentBackend, AgentConversation } from "../backends/port.ts";
import type { IterationSummary } from "../record/iteration.ts";
import { DEFAULT_FINISH_MODEL } from "../definition/mod.ts";
import { firstLine } from "../support/errors.ts";
import { reportedLearnings } from "../store/learnings_text.ts";
import type { RunStore, StoredRun } from "../store/mod.ts";
import { FinishModel } from "./model.ts";
import { FinishAnswers, type FinishPart } from "./question.ts";
import {
  learningsStep,
  nextActionsStep,
  runRecord,
  skillsStep,
  type StepInput,
  summaryStep,
} from "./steps.ts";

export { assessSkills, runSummary } from "./aggregate.ts";

/** The steps, in order. */
export const FINISH_STEPS: readonly string[] = [
  "summary",
  "learnings",
  "skills",
  "next_actions",
  "persist",
  "cleanup",
];

/** Options of {@linkcode runFinish}. */
export interface FinishOptions {
  /** The run history. */
  store: RunStore;
  /** The run. */
  runId: string;
  /** The outcome, for a run that just ended; read from the store when absent. */
  outcome?: { status: string; reason: string };
  /** The backend of the model steps; without one, every model step falls back. */
  backend?: AgentBackend;
  /** The model of the model steps. @default "claude-haiku-4-5" */
  model?: string;
  /** Ask the model to extract learnings too. @default true */
  extractLearnings?: boolean;
  /** Cost cap of the model steps in USD, over every attempt; 0 runs none. @default 0.05 */
  maxCostUsd?: number;
  /** The run's cost budget in USD: once spent, no learning extraction. */
  budgetUsd?: number;
  /** Working directory of the model session; the run's when absent. */
  cwd?: string;
  /** Stops the model steps (an interrupt); the steps left fall back. */
  signal?: AbortSignal;
  /** Why no model step runs this time (a live run that was interrupted wants out quickly). */
  skipModel?: string;
  /** The last step: release what the run held (labels, worktree, log). */
  cleanup?: () => Promise<void>;
  /** Records events. */
  onEvent?: (kind: string, data: Record<string, unknown>) => void;
  /** Stop after this step (the finish tool runs up to `next_actions`; the run's end does the rest). */
  until?: string;
  /** The iteration under way, not yet in the history (the one that called the finish tool). */
  pending?: IterationSummary;
  /**
   * The finish model's conversation, opened ahead with the same model and
   * cwd (`openFinishConversation`), so its process start is off the finish;
   * taken when the question is asked, and closed with the finish.
   */
  opened?: () => AgentConversation | undefined;
}

/** The steps that describe the run, redone when the run changed after they were made. */
const DESCRIBING_STEPS = ["summary", "learnings", "skills", "next_actions"];

/** The settings of the model steps, as recorded with the run for a later `finish RUN_ID`. */
export type FinishSettings = Pick<
  FinishOptions,
  "model" | "extractLearnings" | "maxCostUsd" | "budgetUsd"
>;

/** What the finish workflow did. */
export interface FinishReport {
  /** Steps done (now or before). */
  steps: string[];
  /** Steps done by this call. */
  ran: string[];
  /** The step that failed, with its error. */
  failed?: { step: string; error: string };
}

/**
 * Run the finish workflow's missing steps.
 *
 * @param options Store, run, outcome, the model steps' backend, model and caps, and cleanup.
 * @returns What was done; a failing step stops the workflow and is reported (a
 *   model step that cannot ask falls back instead, and says so in an event).
 * @throws {Error} When the store has no run of that id.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 * import { runFinish } from "./workflow.ts";
 * import { SqliteStore } from "../store/mod.ts";
 *
 * const store = SqliteStore.open(":memory:");
 * try {
 *   store.createRun({
 *     id: "run-1",
 *     agent: "docs",
 *     handler: "manual",
 *     argv: [],
 *     cwd: "/work",
 *     startedAt: "2025-05-01T10:00:00.000Z",
 *     baseline: null,
 *     branch: null,
 *     maxIterations: 3,
 *     cleanup: {},
 *   });
 *   const completeTask = {
 *     status: "success" as const,
 *     original_request_summary: "Document every flag",
 *     summary: "Documented the flags in the README",
 *     learned: ["The CLI help text is generated from cli.ts"],
 *   };
 *   store.recordIteration({
 *     runId: "run-1",
 *     number: 1,
 *     sessionId: "s1",
 *     promptDigest: "0".repeat(64),
 *     summary: { ...emptySummary(1), completeTask },
 *     verdict: "complete",
 *   });
 *
 *   let cleaned = false;
 *   const report = await runFinish({
 *     store,
 *     runId: "run-1",
 *     outcome: { status: "completed", reason: "The keyword was said" },
 *     cleanup: () => {
 *       cleaned = true;
 *       return Promise.resolve();
 *     },
 *   });
 *   assert.deepEqual(report.ran, [
 *     "summary",
 *     "learnings",
 *     "skills",
 *     "next_actions",
 *     "persist",
 *     "cleanup",
 *   ]);
 *   assert.equal(cleaned, true);
 *   assert.equal(store.getRun("run-1")?.status, "completed");
 *   assert.equal(store.learningsOf("run-1")[0].text, "The CLI help text is generated from cli.ts");
 *
 *   // Every step is checkpointed: a second call has nothing left to do.
 *   assert.deepEqual((await runFinish({ store, runId: "run-1" })).ran, []);
 * } finally {
 *   store.close();
 * }
 * ```
 */
export async function runFinish(options: FinishOptions): Promise<FinishReport> {
  const { store } = options;
  const run = store.getRun(options.runId);
  if (!run) throw new Error(`No run "${options.runId}" in the history`);
  const summaries = store.iterations(run.id).map((iteration) => iteration.summary);
  const pending = options.pending;
  if (pending && !summaries.some((summary) => summary.iteration === pending.iteration)) {
    summaries.push(pending);
  }
  const outcome = options.outcome ?? recordedOutcome(store, run);
  forgetIfChanged(store, run.id, outcome, summaries.length, options.onEvent);
  const done = new Set(store.getFinish(run.id).steps);
  const ran: string[] = [];
  const model = finishModel(options, { run, summaries, outcome });
  const parts = partsToAsk(options, { run, summaries, outcome }, done);
  const input: StepInput = {
    run,
    summaries,
    outcome,
    answers: new FinishAnswers(model, parts),
    onEvent: options.onEvent,
  };
  try {
    for (const step of FINISH_STEPS) {
      if (done.has(step)) continue;
      try {
        await runStep(step, options, input);
        ran.push(step);
        options.onEvent?.("finish_step", { step });
      } catch (error) {
        return stepFailed(options, run.id, { step, error, done: [...done], ran });
      }
      if (step === options.until) break;
    }
  } finally {
    await model.close();
  }
  return { steps: store.getFinish(run.id).steps, ran };
}

/**
 * A summary made for another outcome or fewer iterations (the agent called
 * finish, then the run went on or ended otherwise) no longer describes the
 * run: its describing steps are redone. The same outcome redoes nothing.
 */
function forgetIfChanged(
  store: RunStore,
  runId: string,
  outcome: { status: string },
  iterations: number,
  onEvent: FinishOptions["onEvent"],
): void {
  const finish = store.getFinish(runId);
  const summary = finish.summary;
  // A finish that persisted the outcome is done: a later call changes nothing.
  if (!summary || finish.steps.includes("persist")) return;
  if (summary.outcome === outcome.status && summary.iterations === iterations) return;
  store.clearFinishSteps(runId, DESCRIBING_STEPS);
  onEvent?.("finish_redo", {
    steps: DESCRIBING_STEPS,
    was: { outcome: summary.outcome, iterations: summary.iterations },
    now: { outcome: outcome.status, iterations },
  });
}

/** How the run ended, as recorded: by the summary step, or by the run itself. */
function recordedOutcome(store: RunStore, run: StoredRun): { status: string; reason: string } {
  const recorded = store.getFinish(run.id).summary;
  if (typeof recorded?.outcome === "string") {
    return { status: recorded.outcome, reason: String(recorded.reason ?? "") };
  }
  return {
    status: run.status === "running" ? "interrupted" : run.status,
    reason: run.reason ?? "The run stopped before it could record its outcome",
  };
}

/**
 * The parts of the one finish question: the model steps still to do (up to
 * `until`), without the learnings when their extraction is off or the run's
 * budget is spent.
 */
function partsToAsk(
  options: FinishOptions,
  input: Pick<StepInput, "run" | "summaries" | "outcome">,
  done: Set<string>,
): FinishPart[] {
  const last = options.until ? FINISH_STEPS.indexOf(options.until) : FINISH_STEPS.length - 1;
  return (DESCRIBING_STEPS as FinishPart[]).filter((step) =>
    !done.has(step) && FINISH_STEPS.indexOf(step) <= last &&
    (step !== "learnings" ||
      (options.extractLearnings !== false && budgetSpent(options, input) === undefined))
  );
}

/** The model of this attempt. */
function finishModel(
  options: FinishOptions,
  record: Pick<StepInput, "run" | "summaries" | "outcome">,
): FinishModel {
  return new FinishModel({
    // The finish model's questions carry the run's texts: redacted like every request.
    backend: options.backend && redactingBackend(options.backend),
    model: options.model ?? DEFAULT_FINISH_MODEL,
    maxCostUsd: options.maxCostUsd ?? 0.05,
    cwd: options.cwd ?? record.run.cwd,
    store: options.store,
    runId: record.run.id,
    context: () => runRecord(record, options.store.getFinish(record.run.id).summary),
    disabled: options.skipModel,
    signal: options.signal,
    onEvent: options.onEvent,
    opened: options.opened,
  });
}

/** Run one step and checkpoint it. */
async function runStep(step: string, options: FinishOptions, input: StepInput): Promise<void> {
  const { store } = options;
  const { run } = input;
  switch (step) {
    case "summary":
      store.finishStep(run.id, step, { summary: await summaryStep(input) });
      return;
    case "learnings":
      store.setLearnings(run.id, "agent", reportedLearnings(input.summaries, run.agent));
      await extractLearnings(options, input);
      store.finishStep(run.id, step);
      return;
    case "skills":
      store.setSkills(run.id, await skillsStep(input));
      store.finishStep(run.id, step);
      return;
    case "next_actions": {
      const summary = store.getFinish(run.id).summary;
      store.finishStep(run.id, step, { nextActions: await nextActionsStep(input, summary) });
      return;
    }
    case "persist":
      store.setRunStatus(run.id, input.outcome.status, input.outcome.reason);
      store.finishStep(run.id, step);
      return;
    case "cleanup":
      await options.cleanup?.();
      store.finishStep(run.id, step);
      return;
  }
}

/** Step 2's model part: off on request, and skipped once the run's budget is spent. */
async function extractLearnings(options: FinishOptions, input: StepInput): Promise<void> {
  if (options.extractLearnings === false) return;
  const spent = budgetSpent(options, input);
  if (spent) {
    options.onEvent?.("learnings_extraction_skipped", { reason: spent });
    return;
  }
  const extracted = await learningsStep(input);
  if (extracted) options.store.setLearnings(input.run.id, "extracted", extracted);
}

/** Why the run's budget counts as spent, or undefined. */
function budgetSpent(
  options: FinishOptions,
  input: Pick<StepInput, "run" | "summaries" | "outcome">,
): string | undefined {
  if (input.outcome.status === "budget_exhausted") return "the run's budget is spent";
  const cost = input.summaries.reduce((sum, summary: IterationSummary) => sum + summary.costUsd, 0);
  if (options.budgetUsd !== undefined && Math.max(cost, input.run.costUsd) >= options.budgetUsd) {
    return "the run's budget is spent";
  }
  return undefined;
}

/** Record the error that stopped the workflow, and report it. */
function stepFailed(
  options: FinishOptions,
  runId: string,
  failure: { step: string; error: unknown; done: string[]; ran: string[] },
): FinishReport {
  const { step, ran } = failure;
  const message = firstLine(failure.error);
  options.onEvent?.("finish_failed", { step, error: message });
  try {
    options.store.finishError(runId, `${step}: ${message}`);
    return { steps: options.store.getFinish(runId).steps, ran, failed: { step, error: message } };
  } catch {
    // A history that stopped taking writes (locked, read-only) has the steps it had.
    return { steps: [...failure.done, ...ran], ran, failed: { step, error: message } };
  }
}
