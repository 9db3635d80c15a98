/**
 * How many runs fit in memory. A run is a finishline process (about 100 MB)
 * and its Claude Code (about 250 MB), plus, while an iteration works, the
 * next iteration's Claude Code started early (prewarm, another 250 MB): 600
 * MB at its peak. The fleet starts no more runs than the memory available
 * when it starts can hold, keeping a fifth of it free, and before starting
 * another run it waits while less than one run's worth is available.
 *
 * @module
 */

/** A run's peak memory, as assumed (measured in bench/fleet_bench.ts). */
export const RUN_MEMORY_BYTES = 600 * 1024 * 1024;

/** The part of the available memory runs may take. */
const USABLE = 0.8;

/**
 * The memory available now (free plus reclaimable caches), or undefined
 * where Deno cannot tell.
 *
 * @returns Bytes.
 */
export function availableMemory(): number | undefined {
  try {
    return Deno.systemMemoryInfo().available;
  } catch {
    return undefined;
  }
}

/**
 * The runs at once: `--parallel`, capped by what the memory available holds.
 *
 * @param requested `--parallel`.
 * @param available Available memory in bytes (undefined: unknown, no cap).
 * @param perRun A run's memory in bytes.
 * @returns The limit, and a line saying why when it is lower than asked.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parallelLimit } from "./memory.ts";
 * const GB = 1024 ** 3;
 * assert.deepEqual(parallelLimit(3, 16 * GB, 0.6 * GB), { parallel: 3 });
 * assert.deepEqual(parallelLimit(8, 2 * GB, 0.6 * GB), {
 *   parallel: 2,
 *   note: "--parallel 8 capped to 2: 2.0 GB of memory available, a run takes up to 0.6 GB (Claude Code and its prewarmed next session)",
 * });
 * ```
 */
export function parallelLimit(
  requested: number,
  available: number | undefined,
  perRun: number = RUN_MEMORY_BYTES,
): { parallel: number; note?: string } {
  if (available === undefined) return { parallel: requested };
  const fits = Math.max(1, Math.floor((available * USABLE) / perRun));
  if (fits >= requested) return { parallel: requested };
  const gb = (bytes: number) => (bytes / 1024 ** 3).toFixed(1);
  return {
    parallel: fits,
    note: `--parallel ${requested} capped to ${fits}: ${
      gb(available)
    } GB of memory available, a run takes up to ${
      gb(perRun)
    } GB (Claude Code and its prewarmed next session)`,
  };
}

/**
 * Whether another run may start now: always when none is going, else when
 * one more run's worth of memory is available.
 *
 * @param going Runs going now.
 * @param available Available memory in bytes (undefined: unknown).
 * @param perRun A run's memory in bytes.
 * @returns True to start it.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { roomForAnother } from "./memory.ts";
 * assert.equal(roomForAnother(0, 0, 100), true);
 * assert.equal(roomForAnother(2, 99, 100), false);
 * assert.equal(roomForAnother(2, 100, 100), true);
 * ```
 */
export function roomForAnother(
  going: number,
  available: number | undefined,
  perRun: number = RUN_MEMORY_BYTES,
): boolean {
  return going === 0 || available === undefined || available >= perRun;
}
