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

/** How much room a store keeps for itself beside its file, for the writes a full disk would refuse. */
export const RESERVE_BYTES = 1024 * 1024;

/** The reserve file of each open store's connection. */
const reserves = new WeakMap<DatabaseSync, string>();

/**
 * Keep room on the store's disk: a file of {@linkcode RESERVE_BYTES} written
 * (not sparse: its blocks are taken) beside the store. When the disk fills
 * during a run, the first write that fails for room frees it and is tried
 * again, so the iterations done and the run's outcome are still recorded.
 *
 * @param db The connection.
 * @param path The reserve file (`state.db-reserve`).
 */
export function keepReserve(db: DatabaseSync, path: string): void {
  try {
    const info = Deno.statSync(path);
    if (!info.isFile || info.size < RESERVE_BYTES) throw new Deno.errors.NotFound();
  } catch {
    try {
      Deno.writeFileSync(path, new Uint8Array(RESERVE_BYTES));
    } catch {
      // No room for it now: the store works without one.
      try {
        Deno.removeSync(path);
      } catch {
        // never written
      }
      return;
    }
  }
  reserves.set(db, path);
}

/** Whether an error is a write refused for room (SQLite's `SQLITE_FULL`, or the OS's ENOSPC). */
function isFull(error: unknown): boolean {
  return /database or disk is full|SQLITE_FULL|no space left|os error 28/i.test(String(error));
}

/** Free the reserve of a connection; whether there was one. */
function freeReserve(db: DatabaseSync): boolean {
  const path = reserves.get(db);
  if (!path) return false;
  reserves.delete(db);
  try {
    Deno.removeSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Run work in one write transaction (`BEGIN IMMEDIATE`), rolled back when it
 * throws; a transaction refused for room is tried once more after the
 * store's reserve is freed.
 *
 * @param db The connection.
 * @param work The writes.
 */
export function transaction(db: DatabaseSync, work: () => void): void {
  try {
    once(db, work);
  } catch (error) {
    if (!isFull(error) || !freeReserve(db)) throw error;
    once(db, work);
  }
}

function once(db: DatabaseSync, work: () => void): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    work();
    db.exec("COMMIT");
  } catch (error) {
    // SQLite may have rolled back already (a full disk): nothing is left to roll back then.
    try {
      db.exec("ROLLBACK");
    } catch {
      // no transaction left
    }
    throw error;
  }
}
