/**
 * The run history in one embedded SQLite database per repository
 * (`node:sqlite`, WAL mode, versioned schema), composed of one part per table:
 * runs and iterations, segments, finish records, learnings and skills.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { dirname } from "node:path";
import { type Redactor, redactorOfProcess } from "../support/redact.ts";
import { migrate, schemaVersion } from "./migrations.ts";
import { keepReserve } from "./_database.ts";
import { RunRecords } from "./runs.ts";
import { FinishRecords } from "./finish_records.ts";
import { LearningRecords } from "./learnings.ts";
import { SkillRecords } from "./skills.ts";
import { SegmentRecords } from "./segments.ts";
import { LearningVectors, type VectorOptions } from "./vectors.ts";
import type { RunMetrics } from "../record/run_metrics.ts";
import type {
  FinishRecord,
  FinishStepData,
  FinishUsage,
  FoundLearning,
  Learning,
  NewRun,
  NewSegment,
  RunSegment,
  RunStore,
  SegmentEnd,
  SkillRecord,
  StoredIteration,
  StoredRun,
} from "./records.ts";

/** Options of {@linkcode SqliteStore.open}. */
export interface StoreOptions extends VectorOptions {
  /** Removes secrets from everything stored. @default a Redactor over the process environment */
  redactor?: Redactor;
}

/** Where the store lives by default, relative to the repository root. */
export const DEFAULT_STORE_PATH = ".agent/.finishline/state.db";

/**
 * The SQLite run store; everything it writes is redacted of secrets first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 * import { SqliteStore } from "./mod.ts";
 *
 * const store = SqliteStore.open(":memory:");
 * store.createRun({ id: "r1", agent: "docs", handler: "iterate", argv: [], cwd: "/work",
 *   startedAt: "2025-05-01T10:00:00Z", baseline: null, branch: null, maxIterations: 3, cleanup: {} });
 * const summary = { ...emptySummary(1), costUsd: 0.25 };
 * store.recordIteration({ runId: "r1", number: 1, sessionId: null, promptDigest: "d", summary,
 *   verdict: "complete" });
 * assert.equal(store.getRun("r1")?.costUsd, 0.25);
 * store.close();
 * ```
 */
export class SqliteStore implements RunStore {
  /** The database file (or `:memory:`). */
  readonly path: string;
  #db: DatabaseSync;
  #runs: RunRecords;
  #finish: FinishRecords;
  #learnings: LearningRecords;
  #skills: SkillRecords;
  #segments: SegmentRecords;

  private constructor(
    path: string,
    db: DatabaseSync,
    redactor: Redactor,
    vectors: VectorOptions,
  ) {
    this.path = path;
    this.#db = db;
    const store = { db, redactor };
    this.#runs = new RunRecords(store);
    this.#finish = new FinishRecords(store);
    this.#learnings = new LearningRecords(store, new LearningVectors(store, vectors));
    this.#skills = new SkillRecords(store);
    this.#segments = new SegmentRecords(store);
  }

  /**
   * Open (creating it and its folder when needed) and migrate a store.
   *
   * @param path The database file, or `:memory:`.
   * @param options `redactor` removes secrets from everything stored (a Redactor over the
   *   process environment when absent); `embedder` turns on hybrid search and deduplication
   *   by meaning (sqlite-vec is loaded when first needed, from `extensionPath` or its npm
   *   package); `onNote` is told why vectors are not used, when they are not.
   * @returns The store.
   */
  static open(path: string, options: StoreOptions = {}): SqliteStore {
    if (path !== ":memory:") Deno.mkdirSync(dirname(path), { recursive: true });
    const db = new DatabaseSync(
      path,
      { timeout: 5_000, allowExtension: true } as ConstructorParameters<typeof DatabaseSync>[1],
    );
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    migrate(db);
    if (path !== ":memory:") keepReserve(db, `${path}-reserve`);
    const { redactor, ...vectors } = options;
    return new SqliteStore(path, db, redactor ?? redactorOfProcess(), vectors);
  }

  /**
   * Check that the store takes writes now: a write transaction is begun and
   * rolled back, waiting like any write for another process's lock.
   *
   * @throws When another process holds the write lock, or the file is read-only.
   */
  checkWritable(): void {
    this.#db.exec("BEGIN IMMEDIATE");
    this.#db.exec("ROLLBACK");
  }

  /** The schema version: the number of migrations applied. */
  get schemaVersion(): number {
    return schemaVersion(this.#db);
  }

  /** Record a new run, `running` with zero totals. */
  createRun(run: NewRun): void {
    this.#runs.createRun(run);
  }

  /** Record a finished iteration and add it to the run's totals, atomically. */
  recordIteration(iteration: Omit<StoredIteration, "recordedAt">): void {
    this.#runs.recordIteration(iteration);
  }

  /** Record which process runs a run (null when none does). */
  setRunPid(runId: string, pid: number | null): void {
    this.#runs.setRunPid(runId, pid);
  }

  /** Record a run's success metrics (at its end). */
  setRunMetrics(runId: string, metrics: RunMetrics): void {
    this.#runs.setRunMetrics(runId, metrics);
  }

  /** Forget an interrupted iteration so a resumed run can re-run it. */
  discardIteration(runId: string, number: number): void {
    this.#runs.discardIteration(runId, number);
  }

  /** Set a run's status and reason, and its end time when the status is final. */
  setRunStatus(runId: string, status: string, reason: string | null): void {
    this.#runs.setRunStatus(runId, status, reason);
  }

  /** Merge facts into a run's cleanup record. */
  updateCleanup(runId: string, cleanup: Record<string, unknown>): void {
    this.#runs.updateCleanup(runId, cleanup);
  }

  /**
   * Record the start of a segment (the run's start, or a resume); a resume
   * first closes a segment whose process died, as `killed`.
   */
  startSegment(runId: string, segment: NewSegment): number {
    return this.#segments.startSegment(runId, segment);
  }

  /** Record how a segment ended: status, reason, time and cost. */
  endSegment(runId: string, end: SegmentEnd): void {
    this.#segments.endSegment(runId, end);
  }

  /** A run's segments, in order. */
  segments(runId: string): RunSegment[] {
    return this.#segments.segments(runId);
  }

  /** A run by id, or by a prefix of its id that no other run shares. */
  getRun(id: string): StoredRun | undefined {
    return this.#runs.getRun(id);
  }

  /** The latest runs, newest first (20 unless `limit` says otherwise). */
  listRuns(options: { limit?: number; agent?: string } = {}): StoredRun[] {
    return this.#runs.listRuns(options);
  }

  /** The latest run that is still `running` or was `interrupted`, for `--resume`. */
  latestUnfinished(agent?: string): StoredRun | undefined {
    return this.#runs.latestUnfinished(agent);
  }

  /** A run's iterations, in number order. */
  iterations(runId: string): StoredIteration[] {
    return this.#runs.iterations(runId);
  }

  /** The finish workflow's record of a run; empty before the workflow ran. */
  getFinish(runId: string): FinishRecord {
    return this.#finish.getFinish(runId);
  }

  /** Checkpoint a finish step once and clear the workflow's error. */
  finishStep(runId: string, step: string, data: FinishStepData = {}): void {
    this.#finish.finishStep(runId, step, data);
  }

  /** Add what a model request of the finish workflow cost to its running total. */
  addFinishUsage(runId: string, usage: FinishUsage): void {
    this.#finish.addFinishUsage(runId, usage);
  }

  /** Record the error that stopped the finish workflow, or clear it with null. */
  finishError(runId: string, error: string | null): void {
    this.#finish.finishError(runId, error);
  }

  /** Forget some finish steps, so the next finish redoes them. */
  clearFinishSteps(runId: string, steps: readonly string[]): void {
    this.#finish.clearFinishSteps(runId, steps);
  }

  /** Forget the finish steps, so a resumed run finishes again. */
  clearFinish(runId: string): void {
    this.#finish.clearFinish(runId);
  }

  /** Replace a run's learnings of one source (`agent` or `extracted`). */
  setLearnings(runId: string, source: string, learnings: Learning[]): void {
    this.#learnings.setLearnings(runId, source, learnings);
  }

  /**
   * Search every run's learnings, best match first (10 unless `limit`):
   * keyword search, fused with vector similarity when the store has an
   * embedder; `excludeRun` leaves out those no other run saw.
   */
  searchLearnings(
    query: string,
    options: { limit?: number; excludeRun?: string } = {},
  ): FoundLearning[] {
    return this.#learnings.searchLearnings(query, options);
  }

  /** The learnings seen most recently, latest first (10 unless `limit`). */
  recentLearnings(options: { limit?: number } = {}): FoundLearning[] {
    return this.#learnings.recentLearnings(options);
  }

  /** What a run learned, in the order it reported it. */
  learningsOf(runId: string): Learning[] {
    return this.#learnings.learningsOf(runId);
  }

  /** Replace a run's skills. */
  setSkills(runId: string, skills: SkillRecord[]): void {
    this.#skills.setSkills(runId, skills);
  }

  /** A run's skills, in the order they were recorded. */
  skills(runId: string): SkillRecord[] {
    return this.#skills.skills(runId);
  }

  /** Close the database; the store cannot be used afterwards. */
  close(): void {
    this.#db.close();
  }
}
