/**
 * The skills a run used or found missing, recorded by the finish workflow.
 *
 * @module
 */

import { type StoreDatabase, transaction } from "./_database.ts";
import type { SkillRecord } from "./types.ts";

/** The `skills` table of an open store. */
export class SkillRecords {
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
   * Replace a run's skills; their names are redacted.
   *
   * @param runId The run.
   * @param skills The skills used and needed.
   */
  setSkills(runId: string, skills: SkillRecord[]): void {
    const { db, redactor } = this.#store;
    transaction(db, () => {
      db.prepare(`DELETE FROM skills WHERE run_id = ?`).run(runId);
      const insert = db.prepare(
        `INSERT INTO skills (run_id, name, kind, status, created_at) VALUES (?, ?, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      for (const skill of skills) {
        insert.run(runId, redactor.redact(skill.name), skill.kind, skill.status, now);
      }
    });
  }

  /**
   * A run's skills, in the order they were recorded.
   *
   * @param runId The run.
   * @returns The skills.
   */
  skills(runId: string): SkillRecord[] {
    return this.#store.db.prepare(
      `SELECT name, kind, status FROM skills WHERE run_id = ? ORDER BY id`,
    ).all(runId).map((row) => ({
      name: String(row.name),
      kind: row.kind === "needed" ? "needed" : "used",
      status: String(row.status),
    }));
  }
}
