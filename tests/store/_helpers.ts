/**
 * Shared by the store tests: a real store file in a temp folder, with runs
 * and iterations made from one fixture.
 *
 * Every test works on a real database file; the redactor gets an empty
 * environment so the machine's own secrets cannot change what is stored.
 *
 * @module
 */

import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { type NewRun, SqliteStore, type StoredIteration } from "../../agents/store/mod.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { Redactor } from "../../agents/support/redact.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { tempDir } from "../_helpers.ts";

/**
 * The fixture run, with some fields replaced.
 *
 * @param id The run id.
 * @param fields Fields to replace.
 * @returns The run to create.
 */
export function newRun(id: string, fields: Partial<NewRun> = {}): NewRun {
  return {
    id,
    agent: "fixer",
    handler: "iterate",
    argv: ["--task", "fix the flaky login test"],
    cwd: "/repo",
    startedAt: "2025-01-01T10:00:00.000Z",
    baseline: "0123456789abcdef0123456789abcdef01234567",
    branch: null,
    maxIterations: 5,
    cleanup: {},
    ...fields,
  };
}

/**
 * An iteration summary with one response and the given usage.
 *
 * @param iteration The iteration number.
 * @param usage Cost, tokens and turns (zero when absent).
 * @returns The summary.
 */
export function summary(
  iteration: number,
  usage: { costUsd?: number; input?: number; output?: number; turns?: number } = {},
): IterationSummary {
  const base = emptySummary(iteration);
  return {
    ...base,
    assistantResponses: [`iteration ${iteration} done`],
    costUsd: usage.costUsd ?? 0,
    tokens: { ...base.tokens, input: usage.input ?? 0, output: usage.output ?? 0 },
    turns: usage.turns ?? 0,
  };
}

/**
 * An iteration to record, with a session and digest named after its number.
 *
 * @param runId The run.
 * @param number The iteration number.
 * @param summaryOf Its summary.
 * @returns The iteration.
 */
export function iteration(
  runId: string,
  number: number,
  summaryOf: IterationSummary = summary(number),
): Omit<StoredIteration, "recordedAt"> {
  return {
    runId,
    number,
    sessionId: `session-${number}`,
    promptDigest: `digest-${number}`,
    summary: summaryOf,
    verdict: "continue",
  };
}

/** An open store in a temp folder, closed and removed on dispose. */
export interface StoreFixture extends AsyncDisposable {
  /** The temp folder. */
  dir: string;
  /** The database file. */
  path: string;
  /** The store. */
  store: SqliteStore;
}

/**
 * Open a store on a new file in a nested temp folder (open creates the folder).
 *
 * @param options `redactor` (one over an empty environment by default), the `file`
 *   name, and the ids of fixture `runs` to create.
 * @returns The fixture, for `await using`.
 */
export async function openStore(
  options: { redactor?: Redactor; file?: string; runs?: string[] } = {},
): Promise<StoreFixture> {
  const dir = await tempDir("finishline-store-");
  const path = join(dir.path, ".agent", ".finishline", options.file ?? "state.db");
  let store: SqliteStore | undefined;
  try {
    store = SqliteStore.open(path, { redactor: options.redactor ?? new Redactor({}) });
    for (const id of options.runs ?? []) store.createRun(newRun(id));
  } catch (error) {
    store?.close();
    await dir[Symbol.asyncDispose]();
    throw error;
  }
  return {
    dir: dir.path,
    path,
    store,
    [Symbol.asyncDispose]: async () => {
      try {
        store.close();
      } catch {
        // Already closed by the test.
      }
      await dir[Symbol.asyncDispose]();
    },
  };
}

/**
 * A database's schema version as another connection sees it.
 *
 * @param db The connection.
 * @returns Its `PRAGMA user_version`.
 */
export function userVersion(db: DatabaseSync): number {
  return Number((db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
}

/**
 * How many iterations of a run another connection sees.
 *
 * @param db The connection.
 * @param runId The run.
 * @returns The count.
 */
export function countIterations(db: DatabaseSync, runId: string): number {
  return Number(
    (db.prepare("SELECT count(*) AS n FROM iterations WHERE run_id = ?").get(runId) as {
      n: number;
    }).n,
  );
}
