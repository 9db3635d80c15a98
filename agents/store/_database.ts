/**
 * Internal to the store: the connection and redactor every table writes
 * through, and the write transaction they share.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import type { Redactor } from "../support/redact.ts";

/** An open store's connection and the redactor that keeps secrets out of it. */
export interface StoreDatabase {
  /** The connection. */
  db: DatabaseSync;
  /** Removes secrets from everything written. */
  redactor: Redactor;
}

/**
 * Run work in one write transaction (`BEGIN IMMEDIATE`), rolled back when it throws.
 *
 * @param db The connection.
 * @param work The writes.
 */
export function transaction(db: DatabaseSync, work: () => void): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    work();
    db.exec("COMMIT");
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}
