/**
 * The finish workflow's checkpoints: which steps of a run's finish are done,
 * its run summary, next actions, what its model steps cost and the error
 * that stopped it, so a rerun picks up there.
 *
 * @module
 */

import { type StoreDatabase, transaction } from "./_database.ts";
import type { FinishRecord, FinishStepData, FinishUsage } from "./records.ts";

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
   * @returns The steps done, the run summary, the next actions, the model steps' cost and the last error.
   */
  getFinish(runId: string): FinishRecord {
    const row = this.#store.db.prepare(`SELECT * FROM finish WHERE run_id = ?`).get(runId);
    const usage = row?.usage ? JSON.parse(String(row.usage)) : {};
    return {
      runId,
      steps: row ? JSON.parse(String(row.steps)) : [],
      summary: row?.summary ? JSON.parse(String(row.summary)) : null,
      nextActions: row?.next_actions ? JSON.parse(String(row.next_actions)) : [],
      usage: typeof usage.requests === "number" ? usage : null,
      error: row?.error ? String(row.error) : null,
    };
  }

  /**
   * Checkpoint a finish step (once; repeating it changes nothing) and clear
   * the workflow's error.
   *
   * @param runId The run.
   * @param step The step's name.
   * @param data The run summary for the `summary` step, the next actions for
   *   `next_actions` (both redacted).
   */
  finishStep(runId: string, step: string, data: FinishStepData = {}): void {
    const { db, redactor } = this.#store;
    const current = this.getFinish(runId);
    const steps = current.steps.includes(step) ? current.steps : [...current.steps, step];
    db.prepare(
      `INSERT INTO finish (run_id, steps, summary, next_actions, error, updated_at)
       VALUES (?, ?, ?, COALESCE(?, '[]'), NULL, ?)
       ON CONFLICT (run_id) DO UPDATE SET steps = excluded.steps,
         summary = COALESCE(?3, finish.summary), next_actions = COALESCE(?4, finish.next_actions),
         error = NULL, updated_at = excluded.updated_at`,
    ).run(
      runId,
      JSON.stringify(steps),
      data.summary ? JSON.stringify(redactor.redactValue(data.summary)) : null,
      data.nextActions ? JSON.stringify(redactor.redactValue(data.nextActions)) : null,
      new Date().toISOString(),
    );
  }

  /**
   * Add what a model request of the finish workflow cost to the run's total,
   * kept over every attempt (a `finish RUN_ID` after an interruption adds to it).
   *
   * @param runId The run.
   * @param usage The request's model, count, cost and tokens.
   */
  addFinishUsage(runId: string, usage: FinishUsage): void {
    const { db } = this.#store;
    transaction(db, () => {
      const total = this.getFinish(runId).usage;
      const sum = (key: keyof FinishUsage["tokens"]) =>
        (total?.tokens[key] ?? 0) + usage.tokens[key];
      const next: FinishUsage = {
        model: usage.model,
        requests: (total?.requests ?? 0) + usage.requests,
        costUsd: Math.round(((total?.costUsd ?? 0) + usage.costUsd) * 1e9) / 1e9,
        tokens: {
          input: sum("input"),
          output: sum("output"),
          cacheRead: sum("cacheRead"),
          cacheCreation: sum("cacheCreation"),
        },
      };
      db.prepare(
        `INSERT INTO finish (run_id, usage, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (run_id) DO UPDATE SET usage = excluded.usage, updated_at = excluded.updated_at`,
      ).run(runId, JSON.stringify(next), new Date().toISOString());
    });
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
   * Forget some finish steps (their checkpoints only), so the next finish
   * redoes them: a summary made when the agent called finish, say, for an
   * outcome that changed since.
   *
   * @param runId The run.
   * @param steps The steps to redo.
   */
  clearFinishSteps(runId: string, steps: readonly string[]): void {
    const current = this.getFinish(runId);
    this.#store.db.prepare(`UPDATE finish SET steps = ? WHERE run_id = ?`).run(
      JSON.stringify(current.steps.filter((step) => !steps.includes(step))),
      runId,
    );
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
