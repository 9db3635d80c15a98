/**
 * Runs and their iterations: recording them as a run goes, totals kept in
 * step, and the queries `--resume` and `history` use.
 *
 * @module
 */

import type { SQLInputValue } from "node:sqlite";
import { roundUsd } from "../support/format.ts";
import { type StoreDatabase, transaction } from "./_database.ts";
import type { NewRun, StoredIteration, StoredRun } from "./records.ts";
import type { RunMetrics } from "../record/run_metrics.ts";

/** The `runs` and `iterations` tables of an open store. */
export class RunRecords {
  #store: StoreDatabase;

  /**
   * Work on the tables of an open store.
   *
   * @param store The connection and redactor.
   */
  constructor(store: StoreDatabase) {
    this.#store = store;
  }

  /**
   * Record a new run, `running` with zero totals; its arguments and cleanup facts are redacted.
   *
   * @param run The run's identity and settings.
   */
  createRun(run: NewRun): void {
    const { db, redactor } = this.#store;
    db.prepare(
      `INSERT INTO runs (id, agent, handler, argv, cwd, started_at, baseline, branch, max_iterations, cleanup)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      run.id,
      run.agent,
      run.handler,
      JSON.stringify(redactor.redactValue(run.argv)),
      run.cwd,
      run.startedAt,
      run.baseline,
      run.branch,
      run.maxIterations,
      JSON.stringify(redactor.redactValue(run.cleanup)),
    );
  }

  /**
   * Record a finished iteration and add it to the run's totals in one
   * transaction; the summary is redacted.
   *
   * @param iteration The iteration, its summary and its verdict.
   */
  recordIteration(iteration: Omit<StoredIteration, "recordedAt">): void {
    const { db, redactor } = this.#store;
    const summary = redactor.redactValue(iteration.summary);
    const changed =
      new Set([...(summary.git?.staged ?? []), ...(summary.git?.unstaged ?? [])]).size;
    transaction(db, () => {
      db.prepare(
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
      db.prepare(
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
   * Record which process runs a run (null when none does), for display: the
   * run's lock, not this number, says whether it is still going.
   *
   * @param runId The run.
   * @param pid The process id, or null.
   */
  setRunPid(runId: string, pid: number | null): void {
    const { db } = this.#store;
    transaction(db, () => db.prepare(`UPDATE runs SET pid = ? WHERE id = ?`).run(pid, runId));
  }

  /**
   * Record a run's success metrics, replacing earlier ones (a resumed run ends again).
   *
   * @param runId The run.
   * @param metrics Its metrics over all its iterations.
   */
  setRunMetrics(runId: string, metrics: RunMetrics): void {
    const { db } = this.#store;
    transaction(db, () => {
      db.prepare(`UPDATE runs SET metrics = ? WHERE id = ?`).run(JSON.stringify(metrics), runId);
    });
  }

  /**
   * Forget an interrupted iteration so a resumed run can re-run it; its cost
   * stays in the run's totals.
   *
   * @param runId The run.
   * @param number The iteration number.
   */
  discardIteration(runId: string, number: number): void {
    const { db } = this.#store;
    transaction(db, () => {
      const removed = db.prepare(`DELETE FROM iterations WHERE run_id = ? AND number = ?`)
        .run(runId, number);
      if (Number(removed.changes) > 0) {
        db.prepare(`UPDATE runs SET iterations = iterations - 1 WHERE id = ?`).run(runId);
      }
    });
  }

  /**
   * Set a run's status and redacted reason; a status other than `running`
   * also sets its end time.
   *
   * @param runId The run.
   * @param status The status (`running`, `completed`, `interrupted`, ...).
   * @param reason Why, in one sentence.
   */
  setRunStatus(runId: string, status: string, reason: string | null): void {
    const { db, redactor } = this.#store;
    transaction(db, () => {
      db.prepare(
        `UPDATE runs SET status = ?, reason = ?, ended_at = CASE WHEN ? = 'running' THEN NULL ELSE ? END WHERE id = ?`,
      ).run(
        status,
        reason === null ? null : redactor.redact(reason),
        status,
        new Date().toISOString(),
        runId,
      );
    });
  }

  /**
   * Merge redacted facts into a run's cleanup record (labels to remove, a
   * worktree to delete, ...).
   *
   * @param runId The run.
   * @param cleanup Facts to add or replace.
   */
  updateCleanup(runId: string, cleanup: Record<string, unknown>): void {
    const { db, redactor } = this.#store;
    const current = this.getRun(runId)?.cleanup ?? {};
    transaction(db, () => {
      db.prepare(`UPDATE runs SET cleanup = ? WHERE id = ?`).run(
        JSON.stringify({ ...current, ...redactor.redactValue(cleanup) }),
        runId,
      );
    });
  }

  /**
   * A run by id, or by a prefix of its id that no other run shares.
   *
   * @param id The id or a unique prefix.
   * @returns The run, or undefined.
   */
  getRun(id: string): StoredRun | undefined {
    const { db } = this.#store;
    const exact = db.prepare(`SELECT * FROM runs WHERE id = ?`).get(id);
    if (exact) return toRun(exact);
    const matches = db.prepare(`SELECT * FROM runs WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(
      `${id.replace(/[\\%_]/g, "\\$&")}%`,
    );
    return matches.length === 1 ? toRun(matches[0]) : undefined;
  }

  /**
   * The latest runs, newest first.
   *
   * @param options At most `limit` runs (default 20), of one `agent` when given.
   * @returns The runs.
   */
  listRuns(options: { limit?: number; agent?: string } = {}): StoredRun[] {
    const { db } = this.#store;
    const limit = options.limit ?? 20;
    const rows = options.agent
      ? db.prepare(
        `SELECT * FROM runs WHERE agent = ? ORDER BY started_at DESC, rowid DESC LIMIT ?`,
      ).all(options.agent, limit)
      : db.prepare(`SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?`).all(limit);
    return rows.map(toRun);
  }

  /**
   * The latest run that is still `running` or was `interrupted`, for `--resume`.
   *
   * @param agent Only runs of this agent, when given.
   * @returns The run, or undefined.
   */
  latestUnfinished(agent?: string): StoredRun | undefined {
    const { db } = this.#store;
    const row = agent
      ? db.prepare(
        `SELECT * FROM runs WHERE status IN ('running', 'interrupted') AND agent = ? ORDER BY started_at DESC, rowid DESC LIMIT 1`,
      ).get(agent)
      : db.prepare(
        `SELECT * FROM runs WHERE status IN ('running', 'interrupted') ORDER BY started_at DESC, rowid DESC LIMIT 1`,
      ).get();
    return row ? toRun(row) : undefined;
  }

  /**
   * A run's iterations, in number order.
   *
   * @param runId The run.
   * @returns The iterations with their summaries.
   */
  iterations(runId: string): StoredIteration[] {
    return this.#store.db.prepare(`SELECT * FROM iterations WHERE run_id = ? ORDER BY number`)
      .all(runId)
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
    // A sum of floats: rounded, so 0.0024000000000000002 reads 0.0024.
    costUsd: roundUsd(Number(row.cost_usd)),
    tokensInput: Number(row.tokens_input),
    tokensOutput: Number(row.tokens_output),
    turns: Number(row.turns),
    iterations: Number(row.iterations),
    cleanup: row.cleanup ? JSON.parse(String(row.cleanup)) : {},
    pid: row.pid === null || row.pid === undefined ? null : Number(row.pid),
    metrics: storedMetrics(row.metrics),
  };
}

/** The metrics column: null while it holds the empty object a run starts with. */
function storedMetrics(value: SQLInputValue | undefined): RunMetrics | null {
  if (typeof value !== "string") return null;
  const metrics = JSON.parse(value) as Partial<RunMetrics>;
  return typeof metrics.iterations === "number" ? metrics as RunMetrics : null;
}
