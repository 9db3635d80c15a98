/**
 * The checks' runs on the starting commit, as the gate compares a claim with
 * them and the run's record keeps them, and the timer that makes one.
 *
 * @module
 */

import type { CheckRun } from "./check_run.ts";

/** The checks on the starting commit. */
export interface BaselineResult {
  /** The commit they ran on. */
  commit: string;
  /** Each check's run, in order. */
  runs: CheckRun[];
  /** Wall time of the whole baseline in milliseconds, worktree included. */
  durationMs: number;
  /** Why the baseline could not run, when it could not. */
  error?: string;
  /**
   * The second run of each check red at the first, at low priority once the
   * first session has started (a red baseline may come from contention with
   * it); filled in when that run is over.
   */
  retries?: CheckRun[];
}

/**
 * A baseline's result on `commit` as it stands, timed from this call: each
 * call of what it returns gives the runs it is handed, the time since, and
 * the error, if any.
 *
 * @param commit The commit the checks run on.
 * @returns The result so far, for the runs and the error given.
 */
export function baselineTimer(
  commit: string,
): (runs: CheckRun[], error?: string) => BaselineResult {
  const started = performance.now();
  return (runs, error) => ({
    commit,
    runs,
    durationMs: Math.round(performance.now() - started),
    ...(error ? { error } : {}),
  });
}
