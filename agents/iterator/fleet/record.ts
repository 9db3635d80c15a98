/**
 * The record of a fleet: one JSON file per fleet in `fleets/` beside the run
 * history, rewritten (atomically) whenever one of its issues changes, so
 * that `fleet --resume` knows which issues are finished, which runs to
 * continue and which issues never started — whatever stopped the fleet.
 * While a fleet goes on it holds the lock `fleet-<id>`; a record without a
 * live holder and not `done` can be resumed.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { UsageError } from "../../support/errors.ts";
import { redactorOfProcess } from "../../support/redact.ts";
import { writeRedactedFile } from "../../support/sinks.ts";
import { RunLock } from "../../support/file_lock.ts";
import { locksDir } from "../run/locks.ts";
import type { RunStatus } from "../../loop/run_types.ts";

/**
 * Where an issue of a fleet stands: waiting, going, skipped (`skipped`:
 * closed or labelled blocked; `busy`: another fleet or run had it), or the
 * status its run ended with.
 */
export type EntryStatus = "queued" | "running" | "skipped" | "busy" | RunStatus;

/** One issue of a fleet. */
export interface FleetEntry {
  /** Issue number. */
  number: number;
  /** Title. */
  title: string;
  /** Web URL. */
  url?: string;
  /** Its labels when selected. */
  labels: string[];
  /** Where it stands. */
  status: EntryStatus;
  /** Why, in one line (a skip, the run's reason). */
  reason?: string;
  /** The run working on it (set once the run has recorded itself). */
  runId?: string;
  /** The pull request its run opened. */
  pullRequest?: string;
  /** The label the fleet put on it when its run ended without a pull request. */
  labelled?: string;
  /** The run's iterations. */
  iterations?: number;
  /** The run's cost in USD. */
  costUsd?: number;
  /** Wall time the fleet's processes spent on it, in ms (every attempt). */
  durationMs?: number;
  /** The last process's exit code. */
  exitCode?: number;
  /** When the last attempt started (ISO). */
  startedAt?: string;
  /** When it ended (ISO). */
  endedAt?: string;
  /** How many processes the fleet started for it. */
  attempts: number;
  /** The run's Markdown report. */
  report?: string;
  /** The last process's stdout (its `--json` result) and stderr. */
  output?: { stdout: string; stderr: string };
}

/** A fleet as recorded. */
export interface FleetRecord {
  /** Format version. */
  version: 1;
  /** Fleet id (a UUID). */
  id: string;
  /** `running` while it goes (or after it was killed), `interrupted`, `done`. */
  status: "running" | "interrupted" | "done";
  /** When it started (ISO). */
  startedAt: string;
  /** When it last ended (ISO). */
  endedAt?: string;
  /** The repository folder the runs start in. */
  cwd: string;
  /** The agent. */
  agent: string;
  /** The run history. */
  store: string;
  /** `--repo`. */
  repo?: string;
  /** The branch every worktree is created from. */
  baseBranch: string;
  /** How the issues were chosen. */
  selection: { label?: string; issues?: number[]; limit?: number; notes: string[] };
  /** Runs at once. */
  parallel: number;
  /** The flags every run gets. */
  runArgs: string[];
  /** The label put on issues whose run ends without a pull request. */
  blockedLabel: string;
  /** The Markdown report. */
  report: string;
  /** Folder of the runs' stdout and stderr. */
  outputDir: string;
  /** The issues, in the order they are taken. */
  entries: FleetEntry[];
}

/** Statuses of an issue that a resumed fleet takes up again. */
export const UNFINISHED: readonly EntryStatus[] = ["queued", "running", "interrupted"];

/**
 * The folder of fleet records beside a run history.
 *
 * @param storeFile The run history's file.
 * @returns `<its folder>/fleets`.
 */
export function fleetsDir(storeFile: string): string {
  return join(dirname(storeFile), "fleets");
}

/**
 * Write a fleet's record: a temp file renamed over the old one.
 *
 * @param storeFile The run history's file.
 * @param record The record.
 */
export async function writeRecord(storeFile: string, record: FleetRecord): Promise<void> {
  const dir = fleetsDir(storeFile);
  await Deno.mkdir(dir, { recursive: true });
  const path = join(dir, `${record.id}.json`);
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  // Redacted as a value: the JSON stays valid whatever a title or reason held.
  await writeRedactedFile(
    temp,
    `${JSON.stringify(redactorOfProcess().redactValue(record), null, 2)}\n`,
  );
  await Deno.rename(temp, path);
}

async function readRecords(storeFile: string): Promise<FleetRecord[]> {
  const records: FleetRecord[] = [];
  try {
    for await (const entry of Deno.readDir(fleetsDir(storeFile))) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      try {
        const text = await Deno.readTextFile(join(fleetsDir(storeFile), entry.name));
        const record = JSON.parse(text) as FleetRecord;
        if (record.version === 1 && Array.isArray(record.entries)) records.push(record);
      } catch {
        // a file that is not a fleet record
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return records.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}

/**
 * Take the lock of a fleet, without waiting.
 *
 * @param storeFile The run history's file.
 * @param id The fleet id.
 * @returns The held lock, or undefined while another process holds it.
 */
export async function lockFleet(storeFile: string, id: string): Promise<RunLock | undefined> {
  return await RunLock.tryAcquire(locksDir(storeFile), `fleet-${id}`);
}

/**
 * The fleet to resume, with its lock held: the one named (by id or id
 * prefix), else the latest that is not `done` and that no live process holds.
 *
 * @param storeFile The run history's file.
 * @param id The fleet id or a prefix of it.
 * @returns The record and its lock.
 * @throws {UsageError} When there is none, it is done, or it is still going.
 */
export async function fleetToResume(
  storeFile: string,
  id: string | undefined,
): Promise<{ record: FleetRecord; lock: RunLock }> {
  const records = await readRecords(storeFile);
  if (id !== undefined) {
    const matches = records.filter((record) => record.id.startsWith(id));
    if (matches.length !== 1) {
      throw new UsageError(
        matches.length === 0
          ? `No fleet "${id}" in "${fleetsDir(storeFile)}"`
          : `Fleet id "${id}" is ambiguous: give more of it`,
      );
    }
    const [record] = matches;
    if (record.status === "done") {
      throw new UsageError(`Fleet ${record.id} is done: there is nothing to resume`);
    }
    const lock = await lockFleet(storeFile, record.id);
    if (!lock) throw stillGoing(record.id);
    return { record, lock };
  }
  for (const record of records.filter((record) => record.status !== "done")) {
    const lock = await lockFleet(storeFile, record.id);
    if (lock) return { record, lock };
  }
  throw new UsageError(`No unfinished fleet to resume in "${fleetsDir(storeFile)}"`);
}

function stillGoing(id: string): UsageError {
  return new UsageError(
    `Fleet ${id} is still going (another finishline process holds its lock): wait for it, or stop it first`,
  );
}
