/**
 * The skills a run used, found missing or found in need of an update, with a
 * description and a lifecycle, recorded by the finish workflow.
 *
 * @module
 */

import { type StoreDatabase, transaction } from "./_database.ts";
import type { SkillLifecycle, SkillRecord } from "./records.ts";

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
   * Replace a run's skills; their names and descriptions are redacted.
   *
   * @param runId The run.
   * @param skills The skills used, missing and to update.
   */
  setSkills(runId: string, skills: SkillRecord[]): void {
    const { db, redactor } = this.#store;
    transaction(db, () => {
      db.prepare(`DELETE FROM skills WHERE run_id = ?`).run(runId);
      const insert = db.prepare(
        `INSERT INTO skills (run_id, name, kind, description, lifecycle, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      for (const skill of skills) {
        insert.run(
          runId,
          redactor.redact(skill.name),
          skill.kind,
          redactor.redact(skill.description),
          skill.lifecycle,
          now,
        );
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
      `SELECT name, kind, description, lifecycle FROM skills WHERE run_id = ? ORDER BY id`,
    ).all(runId).map((row) => ({
      name: String(row.name),
      kind: SKILL_KINDS.find((kind) => kind === row.kind) ?? "used",
      description: String(row.description),
      lifecycle: SKILL_LIFECYCLES.find((lifecycle) => lifecycle === row.lifecycle) ?? "proposed",
    }));
  }
}

const SKILL_KINDS: readonly SkillRecord["kind"][] = ["used", "missing", "update"];
const SKILL_LIFECYCLES: readonly SkillLifecycle[] = ["proposed", "implemented", "reviewed"];
