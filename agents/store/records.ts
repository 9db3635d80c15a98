/**
 * The records of the run history and the {@linkcode RunStore} port the loop
 * and the CLI talk to, so a server database can replace SQLite later.
 *
 * @module
 */

import type { IterationSummary, TokenUsage } from "../record/iteration.ts";
import type { RunMetrics } from "../record/run_metrics.ts";

/** A run as stored. */
export interface StoredRun {
  /** Run id. */
  id: string;
  /** Agent name. */
  agent: string;
  /** Completion handler type. */
  handler: string;
  /** The command-line arguments the run was started with. */
  argv: string[];
  /** Working directory. */
  cwd: string;
  /** `running` until the run ends, then its status. */
  status: string;
  /** Why it ended. */
  reason: string | null;
  /** ISO timestamps. */
  startedAt: string;
  /** When it ended. */
  endedAt: string | null;
  /** HEAD when the run started. */
  baseline: string | null;
  /** The worktree branch, if any. */
  branch: string | null;
  /** The iteration cap. */
  maxIterations: number;
  /** Totals over the recorded iterations. */
  costUsd: number;
  /** Input tokens. */
  tokensInput: number;
  /** Output tokens. */
  tokensOutput: number;
  /** Model turns. */
  turns: number;
  /** Recorded iterations. */
  iterations: number;
  /** Extra facts needed to clean up later (labels, worktree). */
  cleanup: Record<string, unknown>;
  /** The process running the run while it runs. */
  pid?: number | null;
  /** Its success metrics, written when it ended; null before (or for a run recorded before them). */
  metrics?: RunMetrics | null;
}

/** An iteration as stored. */
export interface StoredIteration {
  /** Run id. */
  runId: string;
  /** 1-based number. */
  number: number;
  /** Agent session id. */
  sessionId: string | null;
  /** SHA-256 of the prompt. */
  promptDigest: string;
  /** The full summary. */
  summary: IterationSummary;
  /** The verdict (`continue`, `complete`, ...). */
  verdict: string;
  /** When it was recorded. */
  recordedAt: string;
}

/** A learning. */
export interface Learning {
  /** What was learned. */
  text: string;
  /** The tool or technique it is about. */
  technique?: string;
  /** How generally it applies. */
  applicability?: string;
  /** Tags. */
  tags?: string[];
}

/** A learning found by search. */
export interface FoundLearning extends Learning {
  /** Row id. */
  id: number;
  /** The run that saw it last. */
  runId: string;
  /** The agent of that run. */
  agent: string;
  /** Where that run got it: `agent` (from complete_task) or `extracted` (by the finish workflow). */
  source: string;
  /** How many runs saw it. */
  seen: number;
  /** When a run saw it last (ISO timestamp). */
  lastSeenAt: string;
  /**
   * Lower is better: the bm25 rank of a keyword search, minus the fused score
   * of a hybrid one; 0 when listed by date.
   */
  rank: number;
  /** Cosine similarity to the query, when the vector search found it. */
  similarity?: number;
}

/**
 * One stretch of a run in one process: its start, or a resume. The run's
 * time and cost are the sums over its segments.
 */
export interface RunSegment {
  /** Run id. */
  runId: string;
  /** 1 for the start, 2 for the first resume, ... */
  number: number;
  /** When it started (ISO timestamp). */
  startedAt: string;
  /** When it ended; null while it runs, or when its process died without a record. */
  endedAt: string | null;
  /** How it ended: a run status, `running`, or `killed` (the process stopped without recording). */
  status: string;
  /** Why, in one sentence. */
  reason: string | null;
  /** The iterations recorded before it started. */
  afterIteration: number;
  /** Its wall time. */
  durationMs: number | null;
  /** What it spent, in USD. */
  costUsd: number | null;
  /** Its JSONL log. */
  logFile: string | null;
  /** Its Markdown report. */
  reportFile: string | null;
}

/** A segment as it starts. */
export interface NewSegment {
  /** When it started (ISO timestamp). */
  startedAt: string;
  /** Its JSONL log. */
  logFile?: string;
  /** Its Markdown report. */
  reportFile?: string;
  /**
   * A resume: the run's part from before segments were recorded becomes
   * segment 1, and a segment whose process died is closed as `killed`.
   */
  resumed?: boolean;
  /** With `resumed`: when the process of a segment left open was last heard of (its log's last line). */
  lastHeardAt?: string;
}

/** How a segment ended. */
export interface SegmentEnd {
  /** The segment, as {@linkcode RunStore.startSegment} numbered it. */
  number: number;
  /** The run's status at its end. */
  status: string;
  /** Why. */
  reason: string | null;
  /** Its wall time. */
  durationMs: number;
  /** What it spent, in USD. */
  costUsd: number;
}

/** Where a skill stands: proposed by a run, implemented, or reviewed by a person. */
export type SkillLifecycle = "proposed" | "implemented" | "reviewed";

/** A skill the run used, found missing, or found in need of an update. */
export interface SkillRecord {
  /** Skill name. */
  name: string;
  /** `used`, `missing` (the run wished it had it) or `update` (it should change). */
  kind: "used" | "missing" | "update";
  /** What the skill does, or why it is missing, or what to change. */
  description: string;
  /** `implemented` for a skill that exists; `proposed` for one to write or change. */
  lifecycle: SkillLifecycle;
}

/** What the finish workflow's model steps cost, over every attempt. */
export interface FinishUsage {
  /** The model they ran on. */
  model: string;
  /** Model requests made. */
  requests: number;
  /** Their cost in USD, as Claude Code reported it. */
  costUsd: number;
  /** Their tokens. */
  tokens: TokenUsage;
}

/** The finish workflow's record of a run. */
export interface FinishRecord {
  /** Run id. */
  runId: string;
  /** Steps done, in order. */
  steps: string[];
  /** The run summary (step 1). */
  summary: Record<string, unknown> | null;
  /** What to do next (the `next_actions` step). */
  nextActions: string[];
  /** What the model steps cost; null before any ran. */
  usage: FinishUsage | null;
  /** The last error of the workflow, if it stopped. */
  error: string | null;
}

/** What a finish step checkpoints besides its name. */
export interface FinishStepData {
  /** The run summary (redacted), for the `summary` step. */
  summary?: Record<string, unknown>;
  /** The next actions (redacted), for the `next_actions` step. */
  nextActions?: string[];
}

/** A run as recorded when it starts: no outcome or totals yet. */
export type NewRun = Omit<
  StoredRun,
  | "status"
  | "reason"
  | "endedAt"
  | "costUsd"
  | "tokensInput"
  | "tokensOutput"
  | "turns"
  | "iterations"
  | "metrics"
>;

/** What the loop and the CLI need from a run history. */
export interface RunStore {
  /** Record a new run. */
  createRun(
    run: NewRun,
  ): void;
  /** Record a finished iteration and add it to the run's totals, atomically. */
  recordIteration(iteration: Omit<StoredIteration, "recordedAt">): void;
  /**
   * Forget an interrupted iteration so a resumed run can re-run it; the cost
   * it spent stays in the run's totals.
   */
  discardIteration(runId: string, number: number): void;
  /** Set a run's status and reason (and end time when it is final). */
  setRunStatus(runId: string, status: string, reason: string | null): void;
  /** Record which process runs a run (null when none does). */
  setRunPid(runId: string, pid: number | null): void;
  /** Record a run's success metrics (at its end). */
  setRunMetrics(runId: string, metrics: RunMetrics): void;
  /** Merge facts into a run's cleanup record. */
  updateCleanup(runId: string, cleanup: Record<string, unknown>): void;
  /** Record the start of a segment of a run (its start or a resume); returns its number. */
  startSegment(runId: string, segment: NewSegment): number;
  /** Record how a segment ended. */
  endSegment(runId: string, end: SegmentEnd): void;
  /** A run's segments, in order. */
  segments(runId: string): RunSegment[];
  /** A run by id (or unique id prefix). */
  getRun(id: string): StoredRun | undefined;
  /** The latest runs, newest first. */
  listRuns(options?: { limit?: number; agent?: string }): StoredRun[];
  /** The latest run of an agent that did not end. */
  latestUnfinished(agent?: string): StoredRun | undefined;
  /** A run's iterations, in order. */
  iterations(runId: string): StoredIteration[];
  /** The finish record. */
  getFinish(runId: string): FinishRecord;
  /** Checkpoint a finish step. */
  finishStep(runId: string, step: string, data?: FinishStepData): void;
  /** Add what a model request of the finish workflow cost. */
  addFinishUsage(runId: string, usage: FinishUsage): void;
  /** Record the finish workflow's error. */
  finishError(runId: string, error: string | null): void;
  /** Forget some finish steps' checkpoints (they are redone by the next finish). */
  clearFinishSteps(runId: string, steps: readonly string[]): void;
  /** Forget the finish steps (a resumed run finishes again). */
  clearFinish(runId: string): void;
  /** Replace a run's learnings of a source. */
  setLearnings(runId: string, source: string, learnings: Learning[]): void;
  /** A run's learnings, oldest first. */
  learningsOf(runId: string): Learning[];
  /**
   * Search over learnings, best match first, leaving out `excludeRun`'s own:
   * keyword (FTS5), fused with vector similarity when the store has an embedder.
   */
  searchLearnings(
    query: string,
    options?: { limit?: number; excludeRun?: string },
  ): FoundLearning[];
  /** The learnings seen most recently, latest first. */
  recentLearnings(options?: { limit?: number }): FoundLearning[];
  /** Replace a run's skills. */
  setSkills(runId: string, skills: SkillRecord[]): void;
  /** A run's skills. */
  skills(runId: string): SkillRecord[];
  /** Close the database. */
  close(): void;
}
