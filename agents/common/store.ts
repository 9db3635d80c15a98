/**
 * The run history: runs, iterations, finish records, learnings (full-text
 * indexed) and skills, in one embedded SQLite database per repository
 * (`node:sqlite`, WAL mode, versioned schema with forward migrations).
 *
 * The loop talks to the {@linkcode RunStore} interface, so a server database
 * can replace SQLite for teams later.
 *
 * @module
 */

import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { dirname } from "node:path";
import type { IterationSummary } from "./completion/types.ts";
import { Redactor } from "./redact.ts";

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
  /** The run it came from. */
  runId: string;
  /** The agent of that run. */
  agent: string;
  /** `agent` (from complete_task) or `extracted` (by the finish workflow). */
  source: string;
  /** bm25 rank (lower is better). */
  rank: number;
}

/** A skill the agent used or needed. */
export interface SkillRecord {
  /** Skill name. */
  name: string;
  /** `used` or `needed`. */
  kind: "used" | "needed";
  /** `used`, or `placeholder` for a needed skill nobody wrote yet. */
  status: string;
}

/** The finish workflow's record of a run. */
export interface FinishRecord {
  /** Run id. */
  runId: string;
  /** Steps done, in order. */
  steps: string[];
  /** The run summary (step 1). */
  summary: Record<string, unknown> | null;
  /** The last error of the workflow, if it stopped. */
  error: string | null;
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
  /** Merge facts into a run's cleanup record. */
  updateCleanup(runId: string, cleanup: Record<string, unknown>): void;
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
  finishStep(runId: string, step: string, data?: { summary?: Record<string, unknown> }): void;
  /** Record the finish workflow's error. */
  finishError(runId: string, error: string | null): void;
  /** Forget the finish steps (a resumed run finishes again). */
  clearFinish(runId: string): void;
  /** Replace a run's learnings of a source. */
  setLearnings(runId: string, source: string, learnings: Learning[]): void;
  /** A run's learnings, oldest first. */
  learningsOf(runId: string): Learning[];
  /** Full-text search over learnings. */
  searchLearnings(query: string, options?: { limit?: number }): FoundLearning[];
  /** Replace a run's skills. */
  setSkills(runId: string, skills: SkillRecord[]): void;
  /** A run's skills. */
  skills(runId: string): SkillRecord[];
  /** Close the database. */
  close(): void;
}

/** Where the store lives by default, relative to the repository root. */
export const DEFAULT_STORE_PATH = ".agent/.finishline/state.db";

/** Forward migrations; `PRAGMA user_version` is the index of the last one applied. */
export const MIGRATIONS: readonly string[] = [
  // 1: runs and iterations
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY,
     agent TEXT NOT NULL,
     handler TEXT NOT NULL,
     argv TEXT NOT NULL,
     cwd TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'running',
     reason TEXT,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     baseline TEXT,
     branch TEXT,
     max_iterations INTEGER NOT NULL,
     cost_usd REAL NOT NULL DEFAULT 0,
     tokens_input INTEGER NOT NULL DEFAULT 0,
     tokens_output INTEGER NOT NULL DEFAULT 0,
     turns INTEGER NOT NULL DEFAULT 0,
     iterations INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX runs_agent_started ON runs (agent, started_at);
   CREATE TABLE iterations (
     run_id TEXT NOT NULL REFERENCES runs (id),
     number INTEGER NOT NULL,
     session_id TEXT,
     prompt_digest TEXT NOT NULL,
     summary TEXT NOT NULL,
     cost_usd REAL NOT NULL,
     tokens_input INTEGER NOT NULL,
     tokens_output INTEGER NOT NULL,
     duration_ms INTEGER NOT NULL,
     commits INTEGER,
     files_changed INTEGER NOT NULL,
     verdict TEXT NOT NULL,
     recorded_at TEXT NOT NULL,
     PRIMARY KEY (run_id, number)
   );`,
  // 2: the finish workflow: finish records, learnings (FTS5), skills, cleanup facts
  `ALTER TABLE runs ADD COLUMN cleanup TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE finish (
     run_id TEXT PRIMARY KEY REFERENCES runs (id),
     steps TEXT NOT NULL DEFAULT '[]',
     summary TEXT,
     error TEXT,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE learnings (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     run_id TEXT NOT NULL REFERENCES runs (id),
     source TEXT NOT NULL,
     text TEXT NOT NULL,
     technique TEXT NOT NULL DEFAULT '',
     applicability TEXT NOT NULL DEFAULT '',
     tags TEXT NOT NULL DEFAULT '',
     created_at TEXT NOT NULL
   );
   CREATE VIRTUAL TABLE learnings_fts USING fts5 (
     text, technique, applicability, tags, content = 'learnings', content_rowid = 'id'
   );
   CREATE TRIGGER learnings_ai AFTER INSERT ON learnings BEGIN
     INSERT INTO learnings_fts (rowid, text, technique, applicability, tags)
     VALUES (new.id, new.text, new.technique, new.applicability, new.tags);
   END;
   CREATE TRIGGER learnings_ad AFTER DELETE ON learnings BEGIN
     INSERT INTO learnings_fts (learnings_fts, rowid, text, technique, applicability, tags)
     VALUES ('delete', old.id, old.text, old.technique, old.applicability, old.tags);
   END;
   CREATE TABLE skills (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     run_id TEXT NOT NULL REFERENCES runs (id),
     name TEXT NOT NULL,
     kind TEXT NOT NULL,
     status TEXT NOT NULL,
     created_at TEXT NOT NULL
   );`,
  // 3: the process that runs a run, so --resume refuses a run that is still going
  `ALTER TABLE runs ADD COLUMN pid INTEGER;`,
];

const STOP_WORDS = new Set(
  "the and for with that this from into your you are was were has have had not but all any can will should would its our out use using add make when then than what which who how why"
    .split(" "),
);

/**
 * Turn free text (an issue title and body, a task) into an FTS5 query: its
 * distinct words of three or more letters, quoted, joined with OR.
 *
 * @param text Any text.
 * @param maxTerms How many words at most.
 * @returns The query, or an empty string when no word is left.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ftsQuery } from "./store.ts";
 *
 * assert.equal(ftsQuery("Fix the flaky login test!"), '"fix" OR "flaky" OR "login" OR "test"');
 * ```
 */
export function ftsQuery(text: string, maxTerms = 24): string {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? [];
  const terms = [...new Set(words.filter((word) => !STOP_WORDS.has(word)))].slice(0, maxTerms);
  return terms.map((term) => `"${term}"`).join(" OR ");
}

/**
 * The SQLite run store.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary, SqliteStore } from "@finishline/agents";
 *
 * const store = SqliteStore.open(":memory:");
 * try {
 *   store.createRun({
 *     id: "run-1",
 *     agent: "docs",
 *     handler: "iterate",
 *     argv: ["docs", "--iterate-max", "3"],
 *     cwd: "/work",
 *     startedAt: "2025-05-01T10:00:00.000Z",
 *     baseline: null,
 *     branch: null,
 *     maxIterations: 3,
 *     cleanup: {},
 *   });
 *   store.recordIteration({
 *     runId: "run-1",
 *     number: 1,
 *     sessionId: "s1",
 *     promptDigest: "0".repeat(64),
 *     summary: { ...emptySummary(1), costUsd: 0.25 },
 *     verdict: "complete",
 *   });
 *   store.setRunStatus("run-1", "completed", "Completed 1/1 iterations");
 *   const run = store.getRun("run-1");
 *   assert.equal(run?.status, "completed");
 *   assert.equal(run?.costUsd, 0.25);
 *   assert.equal(run?.iterations, 1);
 * } finally {
 *   store.close();
 * }
 * ```
 */
export class SqliteStore implements RunStore {
  /** The database file (or `:memory:`). */
  readonly path: string;
  #db: DatabaseSync;
  #redactor: Redactor;

  private constructor(path: string, db: DatabaseSync, redactor: Redactor) {
    this.path = path;
    this.#db = db;
    this.#redactor = redactor;
  }

  /**
   * Open (creating it and its folder when needed) and migrate a store.
   *
   * @param path The database file, or `:memory:`.
   * @param options `redactor` removes secrets from everything stored; a Redactor over the
   *   process environment when absent.
   * @returns The store.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   const store = SqliteStore.open(`${dir}/.agent/.finishline/state.db`);
   *   assert.equal((await Deno.stat(store.path)).isFile, true);
   *   assert.deepEqual(store.listRuns(), []);
   *   store.close();
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  static open(path: string, options: { redactor?: Redactor } = {}): SqliteStore {
    if (path !== ":memory:") Deno.mkdirSync(dirname(path), { recursive: true });
    const db = new DatabaseSync(
      path,
      { timeout: 5_000 } as ConstructorParameters<typeof DatabaseSync>[1],
    );
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
    migrate(db);
    return new SqliteStore(path, db, options.redactor ?? new Redactor());
  }

  /**
   * The schema version (the number of migrations applied).
   *
   * @returns The version.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * assert.ok(store.schemaVersion >= 3);
   * store.close();
   * ```
   */
  get schemaVersion(): number {
    return Number(
      (this.#db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
    );
  }

  /**
   * Record a new run, with status `running` and zero totals; its arguments
   * and cleanup facts are redacted.
   *
   * @param run The run's identity and settings.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   assert.equal(store.getRun("run-1")?.status, "running");
   *   assert.equal(store.getRun("run-1")?.costUsd, 0);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  createRun(
    run: NewRun,
  ): void {
    this.#db.prepare(
      `INSERT INTO runs (id, agent, handler, argv, cwd, started_at, baseline, branch, max_iterations, cleanup)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      run.id,
      run.agent,
      run.handler,
      JSON.stringify(this.#redactor.redactValue(run.argv)),
      run.cwd,
      run.startedAt,
      run.baseline,
      run.branch,
      run.maxIterations,
      JSON.stringify(this.#redactor.redactValue(run.cleanup)),
    );
  }

  /**
   * Record a finished iteration and add it to the run's totals, in one
   * transaction; the summary is redacted.
   *
   * @param iteration The iteration, its summary and its verdict.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary, SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.recordIteration({
   *     runId: "run-1",
   *     number: 1,
   *     sessionId: "s1",
   *     promptDigest: "0".repeat(64),
   *     summary: { ...emptySummary(1), costUsd: 0.5, turns: 4 },
   *     verdict: "continue",
   *   });
   *   assert.equal(store.getRun("run-1")?.turns, 4);
   *   assert.equal(store.iterations("run-1")[0].verdict, "continue");
   * } finally {
   *   store.close();
   * }
   * ```
   */
  recordIteration(iteration: Omit<StoredIteration, "recordedAt">): void {
    const summary = this.#redactor.redactValue(iteration.summary);
    const changed =
      new Set([...(summary.git?.staged ?? []), ...(summary.git?.unstaged ?? [])]).size;
    this.#transaction(() => {
      this.#db.prepare(
        `INSERT INTO iterations (run_id, number, session_id, prompt_digest, summary, cost_usd, tokens_input,
           tokens_output, duration_ms, commits, files_changed, verdict, recorded_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        iteration.runId,
        iteration.number,
        iteration.sessionId,
        iteration.promptDigest,
        JSON.stringify(summary),
        summary.costUsd,
        summary.tokens.input,
        summary.tokens.output,
        summary.durationMs,
        summary.git?.newCommits ?? null,
        changed,
        iteration.verdict,
        new Date().toISOString(),
      );
      this.#db.prepare(
        `UPDATE runs SET cost_usd = cost_usd + ?, tokens_input = tokens_input + ?, tokens_output = tokens_output + ?,
           turns = turns + ?, iterations = iterations + 1 WHERE id = ?`,
      ).run(
        summary.costUsd,
        summary.tokens.input,
        summary.tokens.output,
        summary.turns,
        iteration.runId,
      );
    });
  }

  /**
   * Record which process runs a run (null when none does), so a second
   * `--resume` refuses a run that is still going.
   *
   * @param runId The run.
   * @param pid The process id, or null.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.setRunPid("run-1", Deno.pid);
   *   assert.equal(store.getRun("run-1")?.pid, Deno.pid);
   *   store.setRunPid("run-1", null);
   *   assert.equal(store.getRun("run-1")?.pid, null);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  setRunPid(runId: string, pid: number | null): void {
    this.#db.prepare(`UPDATE runs SET pid = ? WHERE id = ?`).run(pid, runId);
  }

  /**
   * Forget an interrupted iteration so a resumed run can re-run it; the cost
   * it spent stays in the run's totals.
   *
   * @param runId The run.
   * @param number The iteration number.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary, SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.recordIteration({
   *     runId: "run-1",
   *     number: 1,
   *     sessionId: null,
   *     promptDigest: "0".repeat(64),
   *     summary: { ...emptySummary(1), costUsd: 0.5 },
   *     verdict: "interrupted",
   *   });
   *   store.discardIteration("run-1", 1);
   *   assert.deepEqual(store.iterations("run-1"), []);
   *   assert.equal(store.getRun("run-1")?.iterations, 0);
   *   assert.equal(store.getRun("run-1")?.costUsd, 0.5);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  discardIteration(runId: string, number: number): void {
    this.#transaction(() => {
      const removed = this.#db.prepare(`DELETE FROM iterations WHERE run_id = ? AND number = ?`)
        .run(runId, number);
      if (Number(removed.changes) > 0) {
        this.#db.prepare(`UPDATE runs SET iterations = iterations - 1 WHERE id = ?`).run(runId);
      }
    });
  }

  /**
   * Set a run's status and reason; a status other than `running` also sets
   * its end time.
   *
   * @param runId The run.
   * @param status The status (`running`, `completed`, `interrupted`, ...).
   * @param reason Why, in one sentence; redacted.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.setRunStatus("run-1", "interrupted", "Stopped by the user");
   *   const run = store.getRun("run-1");
   *   assert.equal(run?.status, "interrupted");
   *   assert.equal(run?.reason, "Stopped by the user");
   *   assert.notEqual(run?.endedAt, null);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  setRunStatus(runId: string, status: string, reason: string | null): void {
    this.#db.prepare(
      `UPDATE runs SET status = ?, reason = ?, ended_at = CASE WHEN ? = 'running' THEN NULL ELSE ? END WHERE id = ?`,
    ).run(
      status,
      reason === null ? null : this.#redactor.redact(reason),
      status,
      new Date().toISOString(),
      runId,
    );
  }

  /**
   * Merge facts into a run's cleanup record (labels to remove, a worktree
   * to delete, ...).
   *
   * @param runId The run.
   * @param cleanup Facts to add or replace.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.updateCleanup("run-1", { worktree: "/work/.worktrees/run-1" });
   *   store.updateCleanup("run-1", { label: "in-progress" });
   *   assert.deepEqual(store.getRun("run-1")?.cleanup, {
   *     worktree: "/work/.worktrees/run-1",
   *     label: "in-progress",
   *   });
   * } finally {
   *   store.close();
   * }
   * ```
   */
  updateCleanup(runId: string, cleanup: Record<string, unknown>): void {
    const current = this.getRun(runId)?.cleanup ?? {};
    this.#db.prepare(`UPDATE runs SET cleanup = ? WHERE id = ?`).run(
      JSON.stringify({ ...current, ...this.#redactor.redactValue(cleanup) }),
      runId,
    );
  }

  /**
   * A run by id, or by a prefix of its id that no other run shares.
   *
   * @param id The id or a unique prefix.
   * @returns The run, or undefined.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   assert.equal(store.getRun("run-1")?.agent, "docs");
   *   assert.equal(store.getRun("run")?.id, "run-1");
   *   assert.equal(store.getRun("nope"), undefined);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  getRun(id: string): StoredRun | undefined {
    const exact = this.#db.prepare(`SELECT * FROM runs WHERE id = ?`).get(id);
    if (exact) return toRun(exact);
    const matches = this.#db.prepare(`SELECT * FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(
      `${id.replace(/[\\%_]/g, "\\$&")}%`,
    );
    return matches.length === 1 ? toRun(matches[0]) : undefined;
  }

  /**
   * The latest runs, newest first.
   *
   * @param options At most `limit` runs (default 20), of one `agent` when given.
   * @returns The runs.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   assert.deepEqual(store.listRuns().map((run) => run.id), ["run-1"]);
   *   assert.deepEqual(store.listRuns({ agent: "other" }), []);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  listRuns(options: { limit?: number; agent?: string } = {}): StoredRun[] {
    const limit = options.limit ?? 20;
    const rows = options.agent
      ? this.#db.prepare(
        `SELECT * FROM runs WHERE agent = ? ORDER BY started_at DESC, rowid DESC LIMIT ?`,
      ).all(
        options.agent,
        limit,
      )
      : this.#db.prepare(`SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?`).all(
        limit,
      );
    return rows.map(toRun);
  }

  /**
   * The latest run that is still `running` or was `interrupted`, for `--resume`.
   *
   * @param agent Only runs of this agent, when given.
   * @returns The run, or undefined.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   assert.equal(store.latestUnfinished("docs")?.id, "run-1");
   *   store.setRunStatus("run-1", "completed", "Done");
   *   assert.equal(store.latestUnfinished("docs"), undefined);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  latestUnfinished(agent?: string): StoredRun | undefined {
    const row = agent
      ? this.#db.prepare(
        `SELECT * FROM runs WHERE status IN ('running', 'interrupted') AND agent = ? ORDER BY started_at DESC, rowid DESC LIMIT 1`,
      ).get(agent)
      : this.#db.prepare(
        `SELECT * FROM runs WHERE status IN ('running', 'interrupted') ORDER BY started_at DESC, rowid DESC LIMIT 1`,
      ).get();
    return row ? toRun(row) : undefined;
  }

  /**
   * A run's iterations, in order.
   *
   * @param runId The run.
   * @returns The iterations with their summaries.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary, SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   for (const number of [1, 2]) {
   *     store.recordIteration({
   *       runId: "run-1",
   *       number,
   *       sessionId: `s${number}`,
   *       promptDigest: "0".repeat(64),
   *       summary: emptySummary(number),
   *       verdict: number === 2 ? "complete" : "continue",
   *     });
   *   }
   *   assert.deepEqual(store.iterations("run-1").map((iteration) => iteration.verdict), [
   *     "continue",
   *     "complete",
   *   ]);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  iterations(runId: string): StoredIteration[] {
    return this.#db.prepare(`SELECT * FROM iterations WHERE run_id = ? ORDER BY number`).all(runId)
      .map((row) => ({
        runId: String(row.run_id),
        number: Number(row.number),
        sessionId: row.session_id === null ? null : String(row.session_id),
        promptDigest: String(row.prompt_digest),
        summary: JSON.parse(String(row.summary)),
        verdict: String(row.verdict),
        recordedAt: String(row.recorded_at),
      }));
  }

  /**
   * The finish workflow's record of a run; empty before the workflow ran.
   *
   * @param runId The run.
   * @returns The steps done, the run summary and the last error.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   assert.deepEqual(store.getFinish("run-1"), {
   *     runId: "run-1",
   *     steps: [],
   *     summary: null,
   *     error: null,
   *   });
   * } finally {
   *   store.close();
   * }
   * ```
   */
  getFinish(runId: string): FinishRecord {
    const row = this.#db.prepare(`SELECT * FROM finish WHERE run_id = ?`).get(runId);
    return {
      runId,
      steps: row ? JSON.parse(String(row.steps)) : [],
      summary: row?.summary ? JSON.parse(String(row.summary)) : null,
      error: row?.error ? String(row.error) : null,
    };
  }

  /**
   * Checkpoint a finish step (once; repeating it changes nothing) and clear
   * the workflow's error.
   *
   * @param runId The run.
   * @param step The step's name.
   * @param data The run summary, for the `summary` step.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.finishStep("run-1", "summary", { summary: { outcome: "completed" } });
   *   store.finishStep("run-1", "summary");
   *   assert.deepEqual(store.getFinish("run-1").steps, ["summary"]);
   *   assert.deepEqual(store.getFinish("run-1").summary, { outcome: "completed" });
   * } finally {
   *   store.close();
   * }
   * ```
   */
  finishStep(runId: string, step: string, data: { summary?: Record<string, unknown> } = {}): void {
    const current = this.getFinish(runId);
    const steps = current.steps.includes(step) ? current.steps : [...current.steps, step];
    this.#db.prepare(
      `INSERT INTO finish (run_id, steps, summary, error, updated_at) VALUES (?, ?, ?, NULL, ?)
       ON CONFLICT (run_id) DO UPDATE SET steps = excluded.steps, summary = COALESCE(excluded.summary, finish.summary),
         error = NULL, updated_at = excluded.updated_at`,
    ).run(
      runId,
      JSON.stringify(steps),
      data.summary ? JSON.stringify(this.#redactor.redactValue(data.summary)) : null,
      new Date().toISOString(),
    );
  }

  /**
   * Record the error that stopped the finish workflow (redacted), or clear it
   * with null.
   *
   * @param runId The run.
   * @param error The error, or null.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.finishError("run-1", "learnings: the model did not answer");
   *   assert.equal(store.getFinish("run-1").error, "learnings: the model did not answer");
   * } finally {
   *   store.close();
   * }
   * ```
   */
  finishError(runId: string, error: string | null): void {
    this.#db.prepare(
      `INSERT INTO finish (run_id, error, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET error = excluded.error, updated_at = excluded.updated_at`,
    ).run(runId, error === null ? null : this.#redactor.redact(error), new Date().toISOString());
  }

  /**
   * Forget the finish steps, so a resumed run finishes again.
   *
   * @param runId The run.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.finishStep("run-1", "summary");
   *   store.clearFinish("run-1");
   *   assert.deepEqual(store.getFinish("run-1").steps, []);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  clearFinish(runId: string): void {
    this.#db.prepare(`DELETE FROM finish WHERE run_id = ?`).run(runId);
  }

  /**
   * Replace a run's learnings of one source (`agent` or `extracted`); they
   * are redacted and indexed for full-text search.
   *
   * @param runId The run.
   * @param source Where they came from.
   * @param learnings The learnings.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.setLearnings("run-1", "agent", [{ text: "Run deno fmt before committing" }]);
   *   store.setLearnings("run-1", "agent", [{
   *     text: "The docs build needs --allow-net",
   *     tags: ["docs"],
   *   }]);
   *   assert.deepEqual(store.learningsOf("run-1"), [
   *     {
   *       text: "The docs build needs --allow-net",
   *       technique: undefined,
   *       applicability: undefined,
   *       tags: ["docs"],
   *     },
   *   ]);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  setLearnings(runId: string, source: string, learnings: Learning[]): void {
    this.#transaction(() => {
      this.#db.prepare(`DELETE FROM learnings WHERE run_id = ? AND source = ?`).run(runId, source);
      const insert = this.#db.prepare(
        `INSERT INTO learnings (run_id, source, text, technique, applicability, tags, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      for (const raw of learnings) {
        const learning = this.#redactor.redactValue(raw);
        insert.run(
          runId,
          source,
          learning.text,
          learning.technique ?? "",
          learning.applicability ?? "",
          (learning.tags ?? []).join(" "),
          now,
        );
      }
    });
  }

  /**
   * Full-text search over every run's learnings, best match first. The query
   * may be FTS5 syntax or free text (an issue body); free text is searched
   * word by word.
   *
   * @param query The query.
   * @param options At most `limit` results (default 10).
   * @returns The learnings found, with their run and rank.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.setLearnings("run-1", "agent", [
   *     { text: "The login test needs a fresh database", technique: "testing" },
   *     { text: "Release notes live in CHANGELOG.md" },
   *   ]);
   *   const found = store.searchLearnings("Flaky login test (again)");
   *   assert.equal(found.length, 1);
   *   assert.equal(found[0].text, "The login test needs a fresh database");
   *   assert.equal(found[0].agent, "docs");
   * } finally {
   *   store.close();
   * }
   * ```
   */
  searchLearnings(query: string, options: { limit?: number } = {}): FoundLearning[] {
    const limit = options.limit ?? 10;
    const words = ftsQuery(query);
    // Free text (an issue body) often holds quotes, parentheses or colons: when it is
    // no valid FTS5 query, or finds nothing as one (implicit AND), search its words.
    if (/["*:^()]| OR | AND | NOT /.test(query) && query !== words) {
      try {
        const found = this.#matchLearnings(query, limit);
        if (found.length > 0) return found;
      } catch {
        // Not FTS5 syntax after all.
      }
    }
    return words ? this.#matchLearnings(words, limit) : [];
  }

  #matchLearnings(match: string, limit: number): FoundLearning[] {
    return this.#db.prepare(
      `SELECT l.id, l.run_id, l.source, l.text, l.technique, l.applicability, l.tags, r.agent,
         bm25(learnings_fts) AS rank
       FROM learnings_fts JOIN learnings l ON l.id = learnings_fts.rowid JOIN runs r ON r.id = l.run_id
       WHERE learnings_fts MATCH ? ORDER BY rank LIMIT ?`,
    ).all(match, limit).map((row) => ({
      id: Number(row.id),
      runId: String(row.run_id),
      agent: String(row.agent),
      source: String(row.source),
      text: String(row.text),
      technique: String(row.technique) || undefined,
      applicability: String(row.applicability) || undefined,
      tags: String(row.tags) ? String(row.tags).split(" ") : [],
      rank: Number(row.rank),
    }));
  }

  /**
   * A run's learnings, oldest first.
   *
   * @param runId The run.
   * @returns The learnings.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.setLearnings("run-1", "extracted", [{
   *     text: "Use --frozen in CI",
   *     applicability: "any Deno repo",
   *   }]);
   *   assert.equal(store.learningsOf("run-1")[0].applicability, "any Deno repo");
   * } finally {
   *   store.close();
   * }
   * ```
   */
  learningsOf(runId: string): Learning[] {
    return this.#db.prepare(
      `SELECT text, technique, applicability, tags FROM learnings WHERE run_id = ? ORDER BY id`,
    )
      .all(runId).map((row) => ({
        text: String(row.text),
        technique: String(row.technique) || undefined,
        applicability: String(row.applicability) || undefined,
        tags: String(row.tags) ? String(row.tags).split(" ") : [],
      }));
  }

  /**
   * Replace a run's skills.
   *
   * @param runId The run.
   * @param skills The skills used and needed.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   store.setSkills("run-1", [{ name: "sqlite", kind: "used", status: "used" }]);
   *   store.setSkills("run-1", [{ name: "profiling", kind: "needed", status: "placeholder" }]);
   *   assert.deepEqual(store.skills("run-1").map((skill) => skill.name), ["profiling"]);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  setSkills(runId: string, skills: SkillRecord[]): void {
    this.#transaction(() => {
      this.#db.prepare(`DELETE FROM skills WHERE run_id = ?`).run(runId);
      const insert = this.#db.prepare(
        `INSERT INTO skills (run_id, name, kind, status, created_at) VALUES (?, ?, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      for (const skill of skills) {
        insert.run(runId, this.#redactor.redact(skill.name), skill.kind, skill.status, now);
      }
    });
  }

  /**
   * A run's skills, in the order they were recorded.
   *
   * @param runId The run.
   * @returns The skills.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * try {
   *   store.createRun({
   *     id: "run-1",
   *     agent: "docs",
   *     handler: "iterate",
   *     argv: ["docs", "--iterate-max", "3"],
   *     cwd: "/work",
   *     startedAt: "2025-05-01T10:00:00.000Z",
   *     baseline: null,
   *     branch: null,
   *     maxIterations: 3,
   *     cleanup: {},
   *   });
   *   assert.deepEqual(store.skills("run-1"), []);
   *   store.setSkills("run-1", [{ name: "git bisect", kind: "used", status: "used" }]);
   *   assert.deepEqual(store.skills("run-1"), [{
   *     name: "git bisect",
   *     kind: "used",
   *     status: "used",
   *   }]);
   * } finally {
   *   store.close();
   * }
   * ```
   */
  skills(runId: string): SkillRecord[] {
    return this.#db.prepare(`SELECT name, kind, status FROM skills WHERE run_id = ? ORDER BY id`)
      .all(runId).map((row) => ({
        name: String(row.name),
        kind: row.kind === "needed" ? "needed" : "used",
        status: String(row.status),
      }));
  }

  /**
   * Close the database; the store cannot be used afterwards.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SqliteStore } from "@finishline/agents";
   *
   * const store = SqliteStore.open(":memory:");
   * store.close();
   * assert.throws(() => store.listRuns());
   * ```
   */
  close(): void {
    this.#db.close();
  }

  #transaction(work: () => void): void {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      work();
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
  }
}

function migrate(db: DatabaseSync): void {
  const version = Number(
    (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
  );
  if (version > MIGRATIONS.length) {
    throw new Error(
      `The run history database has schema version ${version}, newer than this finishline knows (${MIGRATIONS.length}): upgrade finishline`,
    );
  }
  for (let index = version; index < MIGRATIONS.length; index++) {
    db.exec("BEGIN IMMEDIATE");
    try {
      // Another process may have migrated while this one waited for the lock.
      const current = Number(
        (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
      );
      if (current > index) {
        db.exec("COMMIT");
        continue;
      }
      db.exec(MIGRATIONS[index]);
      db.exec(`PRAGMA user_version = ${index + 1}`);
      db.exec("COMMIT");
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
  }
}

function toRun(row: Record<string, SQLInputValue>): StoredRun {
  return {
    id: String(row.id),
    agent: String(row.agent),
    handler: String(row.handler),
    argv: JSON.parse(String(row.argv)),
    cwd: String(row.cwd),
    status: String(row.status),
    reason: row.reason === null ? null : String(row.reason),
    startedAt: String(row.started_at),
    endedAt: row.ended_at === null ? null : String(row.ended_at),
    baseline: row.baseline === null ? null : String(row.baseline),
    branch: row.branch === null ? null : String(row.branch),
    maxIterations: Number(row.max_iterations),
    costUsd: Number(row.cost_usd),
    tokensInput: Number(row.tokens_input),
    tokensOutput: Number(row.tokens_output),
    turns: Number(row.turns),
    iterations: Number(row.iterations),
    cleanup: row.cleanup ? JSON.parse(String(row.cleanup)) : {},
    pid: row.pid === null || row.pid === undefined ? null : Number(row.pid),
  };
}
