import assert from "node:assert/strict";
import { emptySummary, type IterationSummary } from "../../agents/record/iteration.ts";
import {
  describeMetrics,
  percent,
  type RunMetrics,
  runMetrics,
  sumMetrics,
} from "../../agents/record/run_metrics.ts";

type Probe = NonNullable<IterationSummary["probes"]>[number];

const probe = (status: string, extra: Partial<Probe> = {}): Probe => ({
  status,
  message: status,
  ...extra,
});

/** An iteration with the given probes and extra fields. */
function iteration(
  number: number,
  probes: Probe[] = [],
  extra: Partial<IterationSummary> = {},
): IterationSummary {
  return { ...emptySummary(number), ...(probes.length > 0 ? { probes } : {}), ...extra };
}

Deno.test("run metrics from iteration summaries", async (t) => {
  await t.step("a run without probes, rescues or an abort counts its iterations only", () => {
    assert.deepEqual(
      runMetrics({ status: "completed", summaries: [iteration(1), iteration(2)] }),
      {
        iterations: 2,
        probedIterations: 0,
        probes: 0,
        probeTimeouts: 0,
        rescues: 0,
        rescuesCommitted: 0,
        aborted: false,
        falseAbort: false,
      } satisfies RunMetrics,
    );
  });

  await t.step("probes are counted per iteration and in all", () => {
    const metrics = runMetrics({
      status: "completed",
      summaries: [
        iteration(1, [probe("waiting"), probe("waiting"), probe("complete")]),
        iteration(2),
        iteration(3, [probe("working")]),
      ],
    });
    assert.equal(metrics.probes, 4);
    assert.equal(metrics.probedIterations, 2);
    assert.equal(metrics.probeTimeouts, 0);
  });

  await t.step("an iteration whose every probe went unanswered is a timeout", () => {
    const metrics = runMetrics({
      status: "stalled",
      summaries: [
        iteration(1, [probe("unknown")]),
        // An answer after an unanswered probe: not a timeout.
        iteration(2, [probe("unknown"), probe("complete")]),
        iteration(3, [probe("unknown"), probe("unknown")]),
      ],
    });
    assert.equal(metrics.probeTimeouts, 2);
    assert.equal(metrics.aborted, true);
    assert.equal(metrics.falseAbort, false, "the agent never said it was active");
  });

  await t.step("the stall record decides the timeout when the iteration has one", () => {
    const stall = (kind: NonNullable<IterationSummary["stall"]>["probe"]) => ({
      stall: { counted: kind === "timeout", streak: 1, probe: kind },
    });
    const metrics = runMetrics({
      status: "max_iterations",
      summaries: [
        iteration(1, [probe("unknown")], stall("blocked")),
        iteration(2, [probe("complete")], stall("timeout")),
      ],
    });
    assert.equal(metrics.probeTimeouts, 1);
  });

  await t.step("stalled while the last probe said working is a false abort", () => {
    const summaries = [iteration(1), iteration(2), iteration(3, [probe("working")])];
    assert.equal(runMetrics({ status: "stalled", summaries }).falseAbort, true);
    // The same iterations without the abort: nothing false about them.
    const capped = runMetrics({ status: "max_iterations", summaries });
    assert.deepEqual([capped.aborted, capped.falseAbort], [false, false]);
  });

  await t.step("waiting, agents_active and the stall record's active mark it active too", () => {
    const stalled = (last: IterationSummary) =>
      runMetrics({ status: "stalled", summaries: [iteration(1), last] }).falseAbort;
    assert.equal(stalled(iteration(2, [probe("waiting")])), true);
    assert.equal(stalled(iteration(2, [probe("complete", { agentsActive: true })])), true);
    assert.equal(stalled(iteration(2, [probe("complete", { agentsActive: false })])), false);
    assert.equal(
      stalled(iteration(2, [], { stall: { counted: true, streak: 3, probe: "active" } })),
      true,
    );
    assert.equal(
      stalled(
        iteration(2, [probe("unknown")], { stall: { counted: true, streak: 3, probe: "timeout" } }),
      ),
      false,
    );
  });

  await t.step("only the last iteration decides whether an abort was false", () => {
    const metrics = runMetrics({
      status: "stalled",
      summaries: [iteration(1, [probe("working")]), iteration(2, [probe("unknown")])],
    });
    assert.deepEqual([metrics.aborted, metrics.falseAbort], [true, false]);
  });

  await t.step("a stalled run without iterations is an abort, not a false one", () => {
    const metrics = runMetrics({ status: "stalled", summaries: [] });
    assert.deepEqual([metrics.iterations, metrics.aborted, metrics.falseAbort], [0, true, false]);
  });

  await t.step(
    "rescues: attempted ones count; a commit, or in older records a clean tree, is success",
    () => {
      const rescue = (
        by: "agent" | "runner" | "none",
        clean: boolean,
        commit?: string | null,
      ): Partial<IterationSummary> => ({
        rescue: { files: ["a.txt"], by, clean, ...(commit !== undefined ? { commit } : {}) },
      });
      const metrics = runMetrics({
        status: "completed",
        summaries: [
          iteration(1, [], rescue("agent", true, "1a2b3c4")),
          iteration(2, [], rescue("runner", true, null)), // clean, but no commit recorded
          iteration(3, [], rescue("agent", true)), // an older record: clean means committed
          iteration(4, [], rescue("agent", false)),
          iteration(5, [], rescue("none", false)), // nobody was asked: no rescue attempted
        ],
      });
      assert.deepEqual([metrics.rescues, metrics.rescuesCommitted], [4, 2]);
    },
  );

  await t.step("the final rescue counts, unless it found nothing to rescue", () => {
    const summaries = [iteration(1)];
    const final = (files: string[], commit: string | null, by = "agent") =>
      runMetrics({ status: "max_iterations", summaries, finalRescue: { by, files, commit } });
    assert.deepEqual(
      [final(["w.txt"], "9f8e7d6").rescues, final(["w.txt"], "9f8e7d6").rescuesCommitted],
      [1, 1],
    );
    assert.deepEqual([final(["w.txt"], null).rescues, final(["w.txt"], null).rescuesCommitted], [
      1,
      0,
    ]);
    assert.equal(final([], null).rescues, 0);
    assert.equal(final(["w.txt"], null, "none").rescues, 0);
  });
});

Deno.test("summed metrics and their rates", async (t) => {
  await t.step("no runs: every rate is null, and reads n/a, never NaN", () => {
    const totals = sumMetrics([]);
    assert.deepEqual(totals, {
      runs: 0,
      iterations: 0,
      probedIterations: 0,
      probes: 0,
      probeTimeouts: 0,
      rescues: 0,
      rescuesCommitted: 0,
      aborts: 0,
      falseAborts: 0,
      falseAbortRate: null,
      rescueSuccessRate: null,
      probesPerIteration: null,
      probesPerProbedIteration: null,
      timeoutRate: null,
    });
    const text = describeMetrics(totals).join("\n");
    assert.doesNotMatch(text, /NaN|Infinity/);
    assert.match(text, /False aborts: +n\/a \(no aborts\), target < 5 %/);
    assert.match(text, /Rescue success: +n\/a \(no rescues\)/);
    assert.match(text, /Probes\/iteration: +n\/a \(no iterations\)/);
    assert.equal(percent(null), "n/a");
  });

  const run = (fields: Partial<RunMetrics>): RunMetrics => ({
    iterations: 0,
    probedIterations: 0,
    probes: 0,
    probeTimeouts: 0,
    rescues: 0,
    rescuesCommitted: 0,
    aborted: false,
    falseAbort: false,
    ...fields,
  });

  await t.step("sums every count and divides the seed's rates", () => {
    const totals = sumMetrics([
      run({ iterations: 3, probedIterations: 2, probes: 3, probeTimeouts: 1, aborted: true }),
      run({ iterations: 4, probedIterations: 1, probes: 4, rescues: 2, rescuesCommitted: 1 }),
      run({ iterations: 1, aborted: true, falseAbort: true, rescues: 1, rescuesCommitted: 1 }),
    ]);
    assert.deepEqual(totals, {
      runs: 3,
      iterations: 8,
      probedIterations: 3,
      probes: 7,
      probeTimeouts: 1,
      rescues: 3,
      rescuesCommitted: 2,
      aborts: 2,
      falseAborts: 1,
      falseAbortRate: 0.5,
      rescueSuccessRate: 0.6667,
      probesPerIteration: 0.875,
      probesPerProbedIteration: 2.3333,
      timeoutRate: 0.125,
    });
    assert.deepEqual(describeMetrics(totals), [
      "Runs:               3 runs, 8 iterations",
      "False aborts:       1 of 2 aborts (50 %), target < 5 %",
      "Rescue success:     2 of 3 rescues created a commit (66.7 %)",
      "Probes/iteration:   0.88 over all 8 iterations; 2.33 over the 3 probed (7 probes)",
      "Probe timeouts:     1 of 8 iterations (12.5 %) had probes that ran out with no answer",
    ]);
  });

  await t.step("a false abort without an abort is not counted", () => {
    const totals = sumMetrics([run({ iterations: 1, falseAbort: true })]);
    assert.deepEqual([totals.aborts, totals.falseAborts, totals.falseAbortRate], [0, 0, null]);
  });

  await t.step("iterations without probes: probes per probed iteration is n/a", () => {
    const totals = sumMetrics([run({ iterations: 2 })]);
    assert.equal(totals.probesPerIteration, 0);
    assert.equal(totals.probesPerProbedIteration, null);
    assert.equal(
      describeMetrics(totals)[3],
      "Probes/iteration:   0.00 over all 2 iterations; none probed (0 probes)",
    );
  });
});
