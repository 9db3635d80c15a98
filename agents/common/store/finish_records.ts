/**
 * The finish workflow's checkpoints: which steps of a run's finish are done,
 * its run summary and the error that stopped it, so a rerun picks up there.
 *
 * @module
 */

import type { StoreDatabase } from "./_database.ts";
import type { FinishRecord } from "./types.ts";

/** The `finish` table of an open store. */
export class FinishRecords {
  #store: StoreDatabase;

  /**
   * Work on the table of an open store.
   *
   * @param store The connection and redactor.
   */
  constructor(store: StoreDatabase) {
    this.#store = store;
  }

  /**
   * The finish workflow's record of a run; empty before the workflow ran.
   *
   * @param runId The run.
   * @returns The steps done, the run summary and the last error.
   */
  getFinish(runId: string): FinishRecord {
    const row = this.#store.db.prepare(`SELECT * FROM finish WHERE run_id = ?`).get(runId);
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
   * @param data The run summary (redacted), for the `summary` step.
   */
  finishStep(runId: string, step: string, data: { summary?: Record<string, unknown> } = {}): void {
    const { db, redactor } = this.#store;
    const current = this.getFinish(runId);
    const steps = current.steps.includes(step) ? current.steps : [...current.steps, step];
    db.prepare(
      `INSERT INTO finish (run_id, steps, summary, error, updated_at) VALUES (?, ?, ?, NULL, ?)
       ON CONFLICT (run_id) DO UPDATE SET steps = excluded.steps, summary = COALESCE(excluded.summary, finish.summary),
         error = NULL, updated_at = excluded.updated_at`,
    ).run(
      runId,
      JSON.stringify(steps),
      data.summary ? JSON.stringify(redactor.redactValue(data.summary)) : null,
      new Date().toISOString(),
    );
  }

  /**
   * Record the error that stopped the finish workflow (redacted), or clear it with null.
   *
   * @param runId The run.
   * @param error The error, or null.
   */
  finishError(runId: string, error: string | null): void {
    const { db, redactor } = this.#store;
    db.prepare(
      `INSERT INTO finish (run_id, error, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET error = excluded.error, updated_at = excluded.updated_at`,
    ).run(runId, error === null ? null : redactor.redact(error), new Date().toISOString());
  }

  /**
   * Forget the finish steps, so a resumed run finishes again.
   *
   * @param runId The run.
   */
  clearFinish(runId: string): void {
    this.#store.db.prepare(`DELETE FROM finish WHERE run_id = ?`).run(runId);
  }
}
