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
import { Redactor } from "./log.ts";

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

/** What the loop and the CLI need from a run history. */
export interface RunStore {
  /** Record a new run. */
  createRun(
    run: Omit<
      StoredRun,
      | "status"
      | "reason"
      | "endedAt"
      | "costUsd"
      | "tokensInput"
      | "tokensOutput"
      | "turns"
      | "iterations"
    >,
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
 * import { ftsQuery } from "./store.ts";
 * console.assert(ftsQuery("Fix the flaky login test!") === '"fix" OR "flaky" OR "login" OR "test"');
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
 * import { SqliteStore } from "./store.ts";
 * const store = SqliteStore.open(":memory:");
 * store.createRun({ id: "r1", agent: "demo", handler: "iterate", argv: [], cwd: "/tmp", startedAt: new Date().toISOString(),
 *   baseline: null, branch: null, maxIterations: 3, cleanup: {} });
 * console.assert(store.getRun("r1")?.status === "running");
 * store.close();
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
   * @param options `redactor` removes secrets from everything stored. @default a Redactor over the environment
   * @returns The store.
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

  /** The schema version (the number of migrations applied). */
  get schemaVersion(): number {
    return Number(
      (this.#db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
    );
  }

  /** @inheritdoc */
  createRun(
    run: Omit<
      StoredRun,
      | "status"
      | "reason"
      | "endedAt"
      | "costUsd"
      | "tokensInput"
      | "tokensOutput"
      | "turns"
      | "iterations"
    >,
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

  /** @inheritdoc */
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

  /** @inheritdoc */
  setRunPid(runId: string, pid: number | null): void {
    this.#db.prepare(`UPDATE runs SET pid = ? WHERE id = ?`).run(pid, runId);
  }

  /** @inheritdoc */
  discardIteration(runId: string, number: number): void {
    this.#transaction(() => {
      const removed = this.#db.prepare(`DELETE FROM iterations WHERE run_id = ? AND number = ?`)
        .run(runId, number);
      if (Number(removed.changes) > 0) {
        this.#db.prepare(`UPDATE runs SET iterations = iterations - 1 WHERE id = ?`).run(runId);
      }
    });
  }

  /** @inheritdoc */
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

  /** @inheritdoc */
  updateCleanup(runId: string, cleanup: Record<string, unknown>): void {
    const current = this.getRun(runId)?.cleanup ?? {};
    this.#db.prepare(`UPDATE runs SET cleanup = ? WHERE id = ?`).run(
      JSON.stringify({ ...current, ...this.#redactor.redactValue(cleanup) }),
      runId,
    );
  }

  /** @inheritdoc */
  getRun(id: string): StoredRun | undefined {
    const exact = this.#db.prepare(`SELECT * FROM runs WHERE id = ?`).get(id);
    if (exact) return toRun(exact);
    const matches = this.#db.prepare(`SELECT * FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(
      `${id.replace(/[\\%_]/g, "\\$&")}%`,
    );
    return matches.length === 1 ? toRun(matches[0]) : undefined;
  }

  /** @inheritdoc */
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

  /** @inheritdoc */
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

  /** @inheritdoc */
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

  /** @inheritdoc */
  getFinish(runId: string): FinishRecord {
    const row = this.#db.prepare(`SELECT * FROM finish WHERE run_id = ?`).get(runId);
    return {
      runId,
      steps: row ? JSON.parse(String(row.steps)) : [],
      summary: row?.summary ? JSON.parse(String(row.summary)) : null,
      error: row?.error ? String(row.error) : null,
    };
  }

  /** @inheritdoc */
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

  /** @inheritdoc */
  finishError(runId: string, error: string | null): void {
    this.#db.prepare(
      `INSERT INTO finish (run_id, error, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET error = excluded.error, updated_at = excluded.updated_at`,
    ).run(runId, error === null ? null : this.#redactor.redact(error), new Date().toISOString());
  }

  /** @inheritdoc */
  clearFinish(runId: string): void {
    this.#db.prepare(`DELETE FROM finish WHERE run_id = ?`).run(runId);
  }

  /** @inheritdoc */
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

  /** @inheritdoc */
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

  /** @inheritdoc */
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

  /** @inheritdoc */
  skills(runId: string): SkillRecord[] {
    return this.#db.prepare(`SELECT name, kind, status FROM skills WHERE run_id = ? ORDER BY id`)
      .all(runId).map((row) => ({
        name: String(row.name),
        kind: row.kind === "needed" ? "needed" : "used",
        status: String(row.status),
      }));
  }

  /** @inheritdoc */
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
