/**
 * The success metrics of git-based completion detection (seed 003): false
 * aborts, rescue success, probes per iteration and probe timeouts. One run's
 * metrics come from what it recorded (its iteration summaries, its status,
 * its final rescue); the history sums them. Pure: no I/O, so the run's end,
 * `runs stats` and the decision benchmark count alike.
 *
 * @module
 */

import type { IterationSummary } from "./iteration.ts";

/** What a run recorded, as far as the metrics need it: a run's result, or a stored run. */
export interface MetricsSource {
  /** How the run ended (`stalled` is the circuit breaker's abort). */
  status: string;
  /** Its iterations' summaries, in order. */
  summaries: readonly IterationSummary[];
  /** The rescue at the run's end, when one ran. */
  finalRescue?: {
    by: string;
    files: readonly string[];
    /** The commit it created, or null. */
    commit?: string | null;
    /** Whether the tree was clean afterwards (older records). */
    clean?: boolean;
  };
}

/** One run's metrics. */
export interface RunMetrics {
  /** Iterations that ran. */
  iterations: number;
  /** Iterations whose agent was asked for its status at least once. */
  probedIterations: number;
  /** Status probes sent. */
  probes: number;
  /** Iterations whose probes ran out with no answer (timed out, or unparseable each time). */
  probeTimeouts: number;
  /** Commit rescues attempted (the agent asked, or the runner committed), the final one included. */
  rescues: number;
  /** Of those, the ones that created a commit. */
  rescuesCommitted: number;
  /** The run ended `stalled`: the circuit breaker aborted it. */
  aborted: boolean;
  /** Aborted while its last iteration was active (the agent said it was waiting or working). */
  falseAbort: boolean;
}

/** Metrics summed over runs, with the seed's rates; a rate is null when nothing was counted. */
export interface MetricTotals {
  /** Runs summed. */
  runs: number;
  /** Iterations over those runs. */
  iterations: number;
  /** Iterations that were probed. */
  probedIterations: number;
  /** Probes sent. */
  probes: number;
  /** Iterations whose probes ran out with no answer. */
  probeTimeouts: number;
  /** Rescues attempted. */
  rescues: number;
  /** Rescues that created a commit. */
  rescuesCommitted: number;
  /** Runs that ended `stalled`. */
  aborts: number;
  /** Of those, the false ones. */
  falseAborts: number;
  /** falseAborts / aborts (the seed's target: under 0.05). */
  falseAbortRate: number | null;
  /** rescuesCommitted / rescues. */
  rescueSuccessRate: number | null;
  /** probes / iterations (the seed expects 1 to 2 where probing is needed). */
  probesPerIteration: number | null;
  /** probes / probedIterations. */
  probesPerProbedIteration: number | null;
  /** probeTimeouts / iterations. */
  timeoutRate: number | null;
}

/** The seed's target for the false abort rate: under 5 %. */
export const FALSE_ABORT_TARGET = 0.05;

const ACTIVE = new Set(["waiting", "working"]);

/** A rescue as the metrics read it: an iteration's, or the final one. */
type Rescue = { by: string; commit?: string | null; clean?: boolean };

/**
 * One run's metrics from what it recorded.
 *
 * A false abort is a run that ended `stalled` while its last iteration was
 * active: its stall record says the probes found the agent active, or a probe
 * answered `waiting` or `working`, or said `agents_active: true`. Background
 * tasks at the session's stop are seen through the probe they trigger. A
 * last iteration the breaker counted although the agent said `waiting` (its
 * probes ran out on waiting, past the free rounds) is the design's genuine
 * timeout, not a false abort.
 *
 * A rescue counts when it was attempted (`by` is `agent` or `runner`); it
 * created a commit when its `commit` is set, or, in records without that
 * field, when it left the tree clean (the rescue prompt forbids discarding).
 *
 * @param run The run's status, summaries and final rescue.
 * @returns Its metrics.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "./iteration.ts";
 * import { runMetrics } from "./run_metrics.ts";
 *
 * const last = { ...emptySummary(3), probes: [{ status: "working", message: "tests run" }] };
 * const metrics = runMetrics({ status: "stalled", summaries: [emptySummary(1), emptySummary(2), last] });
 * assert.equal(metrics.falseAbort, true);
 * assert.equal(metrics.probes, 1);
 * ```
 */
export function runMetrics(run: MetricsSource): RunMetrics {
  const rescues: Rescue[] = run.summaries.flatMap((summary) =>
    summary.rescue ? [summary.rescue] : []
  );
  if (run.finalRescue && run.finalRescue.files.length > 0) rescues.push(run.finalRescue);
  const attempted = rescues.filter((rescue) => rescue.by === "agent" || rescue.by === "runner");
  const aborted = run.status === "stalled";
  const last = run.summaries.at(-1);
  return {
    iterations: run.summaries.length,
    probedIterations: run.summaries.filter((summary) => (summary.probes?.length ?? 0) > 0).length,
    probes: run.summaries.reduce((sum, summary) => sum + (summary.probes?.length ?? 0), 0),
    probeTimeouts: run.summaries.filter(probesTimedOut).length,
    rescues: attempted.length,
    rescuesCommitted: attempted.filter(committed).length,
    aborted,
    falseAbort: aborted && last !== undefined && wasActive(last),
  };
}

/** Whether the agent said it was still at work in this iteration. */
function wasActive(summary: IterationSummary): boolean {
  if (summary.stall?.counted && (summary.stall.waitingRounds ?? 0) > 0) return false;
  if (summary.stall?.probe === "active") return true;
  return (summary.probes ?? []).some((probe) =>
    ACTIVE.has(probe.status) || probe.agentsActive === true
  );
}

/** The probes ran and none was answered: the stall record says so, or every answer was unknown. */
function probesTimedOut(summary: IterationSummary): boolean {
  if (summary.stall) return summary.stall.probe === "timeout";
  const probes = summary.probes ?? [];
  return probes.length > 0 && probes.every((probe) => probe.status === "unknown");
}

function committed(rescue: Rescue): boolean {
  if (rescue.commit !== undefined) return rescue.commit !== null;
  return rescue.clean === true;
}

/**
 * Sum runs' metrics and compute the seed's rates.
 *
 * @param runs Each run's metrics.
 * @returns The totals; a rate whose denominator is 0 is null (not applicable).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sumMetrics } from "./run_metrics.ts";
 *
 * const totals = sumMetrics([]);
 * assert.equal(totals.falseAbortRate, null);
 * assert.equal(totals.runs, 0);
 * ```
 */
export function sumMetrics(runs: readonly RunMetrics[]): MetricTotals {
  const sum = (pick: (metrics: RunMetrics) => number | boolean) =>
    runs.reduce((total, metrics) => total + Number(pick(metrics)), 0);
  const iterations = sum((metrics) => metrics.iterations);
  const probedIterations = sum((metrics) => metrics.probedIterations);
  const probes = sum((metrics) => metrics.probes);
  const probeTimeouts = sum((metrics) => metrics.probeTimeouts);
  const rescues = sum((metrics) => metrics.rescues);
  const rescuesCommitted = sum((metrics) => metrics.rescuesCommitted);
  const aborts = sum((metrics) => metrics.aborted);
  const falseAborts = sum((metrics) => metrics.aborted && metrics.falseAbort);
  return {
    runs: runs.length,
    iterations,
    probedIterations,
    probes,
    probeTimeouts,
    rescues,
    rescuesCommitted,
    aborts,
    falseAborts,
    falseAbortRate: rate(falseAborts, aborts),
    rescueSuccessRate: rate(rescuesCommitted, rescues),
    probesPerIteration: rate(probes, iterations),
    probesPerProbedIteration: rate(probes, probedIterations),
    timeoutRate: rate(probeTimeouts, iterations),
  };
}

/** A ratio to four decimals; null when there is nothing to divide by. */
function rate(count: number, of: number): number | null {
  return of === 0 ? null : Math.round((count / of) * 10_000) / 10_000;
}

/**
 * The totals in words, one line a metric, "n/a" where nothing was counted.
 *
 * @param totals The summed metrics.
 * @returns The lines, without newlines.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeMetrics, sumMetrics } from "./run_metrics.ts";
 *
 * const lines = describeMetrics(sumMetrics([]));
 * assert.equal(lines[1], "False aborts:       n/a (no aborts), target < 5 %");
 * ```
 */
export function describeMetrics(totals: MetricTotals): string[] {
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  return [
    `Runs:               ${plural(totals.runs, "run")}, ${plural(totals.iterations, "iteration")}`,
    `False aborts:       ${
      totals.aborts === 0
        ? "n/a (no aborts)"
        : `${totals.falseAborts} of ${plural(totals.aborts, "abort")} (${
          percent(totals.falseAbortRate)
        })`
    }, target < ${FALSE_ABORT_TARGET * 100} %`,
    `Rescue success:     ${
      totals.rescues === 0
        ? "n/a (no rescues)"
        : `${totals.rescuesCommitted} of ${plural(totals.rescues, "rescue")} created a commit (${
          percent(totals.rescueSuccessRate)
        })`
    }`,
    `Probes/iteration:   ${
      totals.iterations === 0
        ? "n/a (no iterations)"
        : `${fixed(totals.probesPerIteration)} over all ${
          plural(totals.iterations, "iteration")
        }; ${
          totals.probedIterations === 0
            ? "none probed"
            : `${fixed(totals.probesPerProbedIteration)} over the ${totals.probedIterations} probed`
        } (${plural(totals.probes, "probe")})`
    }`,
    `Probe timeouts:     ${
      totals.iterations === 0
        ? "n/a (no iterations)"
        : `${totals.probeTimeouts} of ${plural(totals.iterations, "iteration")} (${
          percent(totals.timeoutRate)
        }) had probes that ran out with no answer`
    }`,
  ];
}

/** A rate as a percentage, one decimal at most; "n/a" when there is none. */
export function percent(value: number | null): string {
  return value === null ? "n/a" : `${Math.round(value * 1000) / 10} %`;
}

function fixed(value: number | null): string {
  return value === null ? "n/a" : value.toFixed(2);
}
