/**
 * The fault catalogue's one line per case: what happened, how long it took
 * to reach the right outcome, and which iterations the history holds.
 * `deno task faults` runs the catalogue's tests and gathers these lines
 * into a table; the tests never assert on the timings.
 */

/** The prefix that marks a catalogue line in the test output. */
export const CATALOGUE_PREFIX = "[fault catalogue]";

/**
 * Print a catalogue case's line.
 *
 * @param name The case, as the issue names it.
 * @param outcome The outcome the run reached, e.g. `failed, exit 1`.
 * @param startedAt `performance.now()` when the fault was injected or the run started.
 * @param iterations The iterations recorded in the history.
 * @param left For the cases of what outlives a run: processes left running,
 * stale worktrees, iterations lost, and the runner's peak memory.
 */
export function catalogueLine(
  name: string,
  outcome: string,
  startedAt: number,
  iterations: number[],
  left?: { orphans: number; worktrees: number | string; lost: number; peakMb?: number },
): void {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  const recorded = iterations.length === 0 ? "none" : iterations.join(", ");
  const after = left
    ? ` | ${left.orphans} | ${left.worktrees} | ${left.lost}${
      left.peakMb === undefined ? "" : ` | ${left.peakMb.toFixed(0)} MB`
    }`
    : "";
  console.log(`${CATALOGUE_PREFIX} ${name} | ${outcome} | ${seconds} s | ${recorded}${after}`);
}
