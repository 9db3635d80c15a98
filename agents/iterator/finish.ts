/**
 * The finish workflow (the user's finish tool design): when a run ends,
 * whatever its status, (1) summarise it, (2) capture learnings, (3) assess
 * skills, (4) persist the outcome, (5) clean up. Each step is checkpointed
 * in the store, so an interrupted finish resumes from the last checkpoint
 * (`main.ts finish RUN_ID`), and running it again is idempotent.
 *
 * @module
 */

import type { AgentBackend } from "../common/backends/types.ts";
import type { IterationSummary } from "../common/completion/types.ts";
import { firstLine } from "../common/errors.ts";
import { captureLearnings } from "../common/learnings.ts";
import type { RunStore, SkillRecord, StoredRun } from "../common/store/mod.ts";

/** The steps, in order. */
export const FINISH_STEPS: readonly string[] = [
  "summary",
  "learnings",
  "skills",
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
  /** Ask a tool-less model session to extract learnings too. @default false */
  extractLearnings?: boolean;
  /** The backend for the extraction. */
  backend?: AgentBackend;
  /** Model for the extraction. */
  model?: string;
  /** Working directory for the extraction session. */
  cwd?: string;
  /** Step 5: release what the run held (labels, worktree, log). */
  cleanup?: () => Promise<void>;
  /** Records events. */
  onEvent?: (kind: string, data: Record<string, unknown>) => void;
}

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
 * @param options Store, run, outcome, extraction and cleanup.
 * @returns What was done; a failing step stops the workflow and is reported.
 * @throws {Error} When the store has no run of that id.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary, runFinish, SqliteStore } from "@finishline/agents";
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
 *   assert.deepEqual(report.ran, ["summary", "learnings", "skills", "persist", "cleanup"]);
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
  const { store, runId } = options;
  const run = store.getRun(runId);
  if (!run) throw new Error(`No run "${runId}" in the history`);
  const done = new Set(store.getFinish(run.id).steps);
  const ran: string[] = [];
  const summaries = store.iterations(run.id).map((iteration) => iteration.summary);
  const recorded = store.getFinish(run.id).summary;
  const outcome = options.outcome ??
    (typeof recorded?.outcome === "string"
      ? { status: recorded.outcome, reason: String(recorded.reason ?? "") }
      : {
        status: run.status === "running" ? "interrupted" : run.status,
        reason: run.reason ?? "The run stopped before it could record its outcome",
      });
  for (const step of FINISH_STEPS) {
    if (done.has(step)) continue;
    try {
      switch (step) {
        case "summary":
          store.finishStep(run.id, step, { summary: runSummary(run, summaries, outcome) });
          break;
        case "learnings":
          await captureLearnings(options, { run, summaries, outcomeStatus: outcome.status });
          store.finishStep(run.id, step);
          break;
        case "skills":
          store.setSkills(run.id, assessSkills(summaries));
          store.finishStep(run.id, step);
          break;
        case "persist":
          store.setRunStatus(run.id, outcome.status, outcome.reason);
          store.finishStep(run.id, step);
          break;
        case "cleanup":
          await options.cleanup?.();
          store.finishStep(run.id, step);
          break;
      }
      ran.push(step);
      options.onEvent?.("finish_step", { step });
    } catch (error) {
      const message = firstLine(error);
      options.onEvent?.("finish_failed", { step, error: message });
      try {
        store.finishError(run.id, `${step}: ${message}`);
        return { steps: store.getFinish(run.id).steps, ran, failed: { step, error: message } };
      } catch {
        // A history that stopped taking writes (locked, read-only) has the steps it had.
        return { steps: [...done, ...ran], ran, failed: { step, error: message } };
      }
    }
  }
  return { steps: store.getFinish(run.id).steps, ran };
}

/**
 * Step 1: the run summary, from the iterations and the complete_task reports.
 *
 * @param run The stored run.
 * @param summaries Its iterations' summaries.
 * @param outcome How it ended.
 * @returns The summary record.
 */
export function runSummary(
  run: StoredRun,
  summaries: IterationSummary[],
  outcome: { status: string; reason: string },
): Record<string, unknown> {
  const reports = summaries.flatMap((summary) =>
    summary.completeTask ? [summary.completeTask] : []
  );
  const last = reports.at(-1);
  const files = new Set<string>();
  for (const report of reports) for (const file of report.files_modified ?? []) files.add(file);
  return {
    runId: run.id,
    agent: run.agent,
    handler: run.handler,
    task: last?.original_request_summary ?? null,
    outcome: outcome.status,
    reason: outcome.reason,
    iterations: summaries.length,
    costUsd: summaries.reduce((total, summary) => total + summary.costUsd, 0),
    commits: summaries.reduce((total, summary) => total + (summary.git?.newCommits ?? 0), 0),
    keySteps: summaries.map((summary) =>
      `${summary.iteration}: ${
        (summary.completeTask?.summary ?? summary.assistantResponses.at(-1) ?? "(nothing reported)")
          .slice(0, 300)
      }`
    ),
    filesChanged: [...files],
    remainingWork: last?.status === "success" ? null : last?.remaining_work ?? null,
    nextSteps: last?.next_steps ?? null,
  };
}

/**
 * Step 3: skills used, and skills needed (recorded as placeholders).
 *
 * @param summaries The run's iterations.
 * @returns The skill records.
 */
export function assessSkills(summaries: IterationSummary[]): SkillRecord[] {
  const used = new Set<string>();
  const needed = new Set<string>();
  for (const summary of summaries) {
    for (const skill of summary.completeTask?.skills_used ?? []) used.add(skill.trim());
    for (const skill of summary.completeTask?.new_skills_needed ?? []) needed.add(skill.trim());
  }
  return [
    ...[...used].filter(Boolean).map((name): SkillRecord => ({
      name,
      kind: "used",
      status: "used",
    })),
    ...[...needed].filter(Boolean).map((name): SkillRecord => ({
      name,
      kind: "needed",
      status: "placeholder",
    })),
  ];
}
