/**
 * The locks a run holds for its whole life, in `locks/` beside the run
 * history: one keyed by its run id (so `--resume` never continues a run that
 * is still going), and one keyed by its issue (one run per issue in a
 * repository). The operating system releases them when the process dies,
 * however it dies, so a dead run never blocks.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { UsageError } from "../../support/errors.ts";
import { RunLock } from "../../support/file_lock.ts";
import type { GitRepo } from "../../git/repo.ts";
import { removeStaleWorktrees } from "../../evidence/copy/worktree_run.ts";
import {
  guardProcesses,
  type ProcessId,
  RUN_TAG,
  stopProcesses,
  taggedProcesses,
} from "../../support/process_tags.ts";

/** The locks of one run. */
export interface RunLocks {
  /**
   * Release every lock (a second call does nothing). With `tidy` (the run
   * never started), also remove the folders taking them created, when empty.
   */
  release(options?: { tidy?: boolean }): Promise<void>;
}

/**
 * The folder of lock files beside a run history.
 *
 * @param storeFile The run history's file.
 * @returns `<its folder>/locks`.
 */
export function locksDir(storeFile: string): string {
  return join(dirname(storeFile), "locks");
}

/**
 * Take the lock of a recorded run, without waiting.
 *
 * @param storeFile The run history's file.
 * @param runId The run.
 * @returns The held lock.
 * @throws {UsageError} While another live process holds it.
 */
export async function lockRun(storeFile: string, runId: string): Promise<RunLock> {
  const lock = await RunLock.tryAcquire(locksDir(storeFile), `run-${runId}`);
  if (lock) return lock;
  throw new UsageError(
    `Run ${runId} is still going (another finishline process holds its lock): wait for it, or stop it first`,
  );
}

/**
 * Take every lock of a run: its own (unless already held, as `--resume`
 * holds it) and, for an issue run, its issue's.
 *
 * @param run The history's file, the run id, its issue, and the run lock if held.
 * @returns The locks, to release when the run has finished.
 * @throws {UsageError} When another live process holds one of them.
 */
export async function lockRunAndIssue(
  run: { storeFile: string; runId: string; issue?: number; held?: RunLock; checkout?: boolean },
): Promise<RunLocks> {
  const created = await missingFolders(locksDir(run.storeFile));
  let own: RunLock;
  try {
    own = run.held ?? await lockRun(run.storeFile, run.runId);
  } catch (error) {
    await removeEmpty(created);
    throw error;
  }
  const locks = [own];
  try {
    // The issue first: its refusal says more than the checkout's.
    if (run.issue !== undefined) locks.push(await lockIssue(run.storeFile, run.issue, run.runId));
    if (run.checkout) locks.push(await lockCheckout(run.storeFile, run.runId));
  } catch (error) {
    for (const lock of locks.reverse()) await lock.release();
    await removeEmpty(created);
    throw error;
  }
  return {
    release: async (options = {}) => {
      for (const lock of locks.reverse()) await lock.release();
      locks.length = 0;
      if (options.tidy) await removeEmpty(created);
    },
  };
}

/**
 * One run at a time works in a checkout: two agents and two gates on one
 * working tree would take each other's changes for their own. `--worktree`
 * runs each have a tree of their own and take no such lock.
 */
async function lockCheckout(storeFile: string, runId: string): Promise<RunLock> {
  const dir = locksDir(storeFile);
  const lock = await RunLock.tryAcquire(dir, "checkout", { note: runId });
  if (lock) return lock;
  const other = (await RunLock.holder(dir, "checkout"))?.note;
  throw new UsageError(
    `Another run is working in this checkout (${
      other ? `run ${other.slice(0, 8)}, ` : ""
    }another finishline process holds its lock): wait for it, stop it, or start this one with --worktree`,
  );
}

async function lockIssue(storeFile: string, issue: number, runId: string): Promise<RunLock> {
  const dir = locksDir(storeFile);
  const key = `issue-${issue}`;
  const lock = await RunLock.tryAcquire(dir, key, { note: runId });
  if (lock) return lock;
  const other = (await RunLock.holder(dir, key))?.note;
  throw new UsageError(
    `Issue #${issue} already has a run going in this repository (${
      other ? `run ${other.slice(0, 8)}, ` : ""
    }another finishline process holds its lock): wait for it, or stop it first`,
  );
}

/** The folders of `dir`'s path that do not exist yet, deepest first. */
export async function missingFolders(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let folder = dir; folder !== dirname(folder); folder = dirname(folder)) {
    if (await Deno.stat(folder).then(() => true, () => false)) break;
    missing.push(folder);
  }
  return missing;
}

/** Removes each folder that is empty, deepest first; others stay. */
export async function removeEmpty(folders: string[]): Promise<void> {
  for (const folder of folders) await Deno.remove(folder).catch(() => {});
}

/**
 * Guard a run's processes for its whole life: first stop what earlier, dead
 * runs of this repository left running (their processes carry the
 * {@linkcode RUN_TAG} of a run whose lock file here is free: a process of
 * this run before a `--resume`, or a run SIGKILLed while its watchdog could
 * not act), then tag this process and start its watchdog
 * ({@linkcode guardProcesses}). Call it while holding the run's lock.
 *
 * @param storeFile The run history's file (its `locks/` folder names the repository's runs).
 * @param runId The run.
 * @param repo The repository, whose dead runs' check worktrees are removed.
 * @returns The watchdog and how many orphans were stopped; `end()` stops
 * everything still tagged with the run, then the watchdog.
 */
export async function guardRun(
  storeFile: string,
  runId: string,
  repo?: GitRepo,
): Promise<{ orphans: number; worktrees: string[]; end(): Promise<void> }> {
  const dir = locksDir(storeFile);
  // Asked once per run: taking a dead run's free lock to see that it is free removes its file.
  const verdicts = new Map<string, Promise<boolean>>();
  const isDead = (owner: string) => {
    if (owner === runId) return Promise.resolve(true);
    if (!verdicts.has(owner)) verdicts.set(owner, runIsDead(dir, owner));
    return verdicts.get(owner)!;
  };
  // This run's own, from its process before a --resume: this process holds its lock now.
  const dead: ProcessId[] = [];
  // Not this process's own (its first agent process may have started already).
  const own = `${runId}/${Deno.pid}`;
  for (const process of await taggedProcesses(RUN_TAG)) {
    if (process.value !== own && await isDead(process.value.split("/")[0])) dead.push(process);
  }
  const orphans = await stopProcesses(dead);
  // Their check worktrees too (this run's own, from before a --resume, among them).
  const worktrees = repo ? await removeStaleWorktrees(repo, isDead) : [];
  const watchdog = await guardProcesses(RUN_TAG, runId);
  return {
    orphans,
    worktrees,
    end: () => watchdog.end(),
  };
}

/** Whether a run of this repository died: its lock file is still here (a run that ended removed it) and nobody holds it. */
async function runIsDead(dir: string, runId: string): Promise<boolean> {
  if (!/^[\w.-]+$/.test(runId)) return false;
  try {
    await Deno.stat(join(dir, `run-${runId}.lock`));
  } catch {
    // Not a run of this repository.
    return false;
  }
  const lock = await RunLock.tryAcquire(dir, `run-${runId}`);
  if (!lock) return false;
  await lock.release();
  return true;
}
