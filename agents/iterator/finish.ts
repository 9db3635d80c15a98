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
import type { Learning, RunStore, SkillRecord, StoredRun } from "../common/store/mod.ts";
import { SummaryBuilder } from "../common/summary.ts";

/** The steps, in order. */
export const FINISH_STEPS: readonly string[] = [
  "summary",
  "learnings",
  "skills",
  "persist",
  "cleanup",
];

/** Marks the learning-extraction prompt, so scripted models can tell it apart. */
export const EXTRACT_MARKER = "FINISHLINE LEARNINGS";

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
      store.finishError(run.id, `${step}: ${message}`);
      options.onEvent?.("finish_failed", { step, error: message });
      return { steps: store.getFinish(run.id).steps, ran, failed: { step, error: message } };
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

/**
 * Parse the extraction session's reply: a JSON array of learnings (or an
 * object holding one under `learnings`). Entries without text are skipped;
 * anything unparseable gives none.
 *
 * @param text The reply.
 * @returns The learnings.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseLearnings } from "./finish.ts";
 *
 * const found = parseLearnings(
 *   '[{"learning": "Run deno fmt before committing", "tags": ["deno"]}]',
 * );
 * assert.equal(found.length, 1);
 * assert.equal(found[0].text, "Run deno fmt before committing");
 * assert.deepEqual(found[0].tags, ["deno"]);
 * assert.deepEqual(parseLearnings("no idea"), []);
 * ```
 */
export function parseLearnings(text: string): Learning[] {
  const candidates = [
    text.trim(),
    ...[...text.matchAll(/```[a-zA-Z]*\s*\n([\s\S]*?)```/g)].map((match) => match[1]),
  ];
  const start = text.indexOf("[");
  const end = text.lastIndexOf("]");
  if (start !== -1 && end > start) candidates.push(text.slice(start, end + 1));
  for (const candidate of candidates) {
    let value: unknown;
    try {
      value = JSON.parse(candidate);
    } catch {
      continue;
    }
    const list = Array.isArray(value) ? value : typeof value === "object" && value !== null &&
        Array.isArray((value as { learnings?: unknown }).learnings)
      ? (value as { learnings: unknown[] }).learnings
      : undefined;
    if (!list) continue;
    return list.flatMap((entry): Learning[] => {
      if (typeof entry === "string" && entry.trim()) return [{ text: entry.trim() }];
      if (typeof entry !== "object" || entry === null) return [];
      const record = entry as Record<string, unknown>;
      const learning = record.learning ?? record.text;
      if (typeof learning !== "string" || !learning.trim()) return [];
      return [{
        text: learning.trim(),
        technique: typeof record.tool_or_technique === "string"
          ? record.tool_or_technique
          : typeof record.technique === "string"
          ? record.technique
          : undefined,
        applicability: typeof record.applicability === "string" ? record.applicability : undefined,
        tags: Array.isArray(record.tags) ? record.tags.map(String) : undefined,
      }];
    });
  }
  return [];
}

async function captureLearnings(
  options: FinishOptions,
  { run, summaries, outcomeStatus }: {
    run: StoredRun;
    summaries: IterationSummary[];
    outcomeStatus: string;
  },
): Promise<void> {
  const reported: Learning[] = [];
  for (const summary of summaries) {
    for (const text of summary.completeTask?.learned ?? []) {
      if (text.trim()) reported.push({ text: text.trim(), tags: [run.agent] });
    }
  }
  options.store.setLearnings(run.id, "agent", reported);
  // After an interrupt the user wants out quickly: no model session then.
  if (!options.extractLearnings || !options.backend || outcomeStatus === "interrupted") return;
  const builder = new SummaryBuilder(0, { enabled: false });
  const prompt = [
    `${EXTRACT_MARKER}: extract what is worth remembering from this coding run, for future runs on the same repository.`,
    "",
    ...summaries.map((summary) =>
      `Iteration ${summary.iteration}: ${
        (summary.completeTask?.summary ?? summary.assistantResponses.at(-1) ?? "").slice(0, 800)
      }${summary.errors.length ? ` (errors: ${summary.errors.slice(-2).join("; ")})` : ""}`
    ),
    "",
    'Reply with a JSON array only: [{"learning": "...", "tool_or_technique": "...", "applicability": "...", "tags": ["..."]}]. ' +
    "An empty array is fine when nothing is worth keeping.",
  ].join("\n");
  try {
    for await (
      const message of options.backend.session({
        prompt,
        systemPromptAppend:
          "You extract learnings from coding sessions. You have no tools. Reply with JSON only.",
        cwd: options.cwd ?? run.cwd,
        tools: [],
        allowedTools: [],
        disallowedTools: [],
        permissionMode: "default",
        model: options.model,
        maxTurns: 1,
        settingSources: [],
        signal: AbortSignal.timeout(120_000),
      })
    ) {
      builder.add(message);
    }
  } catch (error) {
    options.onEvent?.("learnings_extraction_failed", { error: firstLine(error) });
    return;
  }
  const reply = builder.current.assistantResponses.join("\n");
  const extracted = parseLearnings(reply);
  if (extracted.length === 0 && reply.trim() && !/^\s*\[\s*\]\s*$/.test(reply)) {
    options.onEvent?.("learnings_extraction_skipped", {
      reason: "the reply was not a JSON array of learnings",
    });
  }
  options.store.setLearnings(run.id, "extracted", extracted);
}

/**
 * Format learnings for `{uv-learnings}`: at most `count` entries and
 * `maxChars` characters.
 *
 * @param found Learnings, best first.
 * @param options Limits.
 * @returns Markdown bullets, or a note that there are none.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatLearnings } from "./finish.ts";
 *
 * assert.equal(formatLearnings([]), "(no learnings from earlier runs yet)");
 * ```
 */
export function formatLearnings(
  found: Array<Learning & { runId?: string }>,
  options: { count?: number; maxChars?: number } = {},
): string {
  const { count = 5, maxChars = 2000 } = options;
  const lines: string[] = [];
  let size = 0;
  for (const learning of found.slice(0, count)) {
    const extra = [
      learning.technique,
      learning.runId ? `run ${learning.runId.slice(0, 8)}` : undefined,
    ]
      .filter(Boolean).join("; ");
    const line = `- ${learning.text.replace(/\s+/g, " ").trim()}${extra ? ` (${extra})` : ""}`;
    if (size + line.length > maxChars) break;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.length > 0 ? lines.join("\n") : "(no learnings from earlier runs yet)";
}
