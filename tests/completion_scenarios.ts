/**
 * Benchmark-style runs of finishline's completion decisions.
 *
 * First the completion-detection scenarios (the five states of the user's
 * design: complete, waiting, working, stalled, forgot to commit): how many
 * were decided correctly, and the design's success metrics summed over them
 * (false aborts: runs ended stalled while the agent said it was at work, or
 * whose correct outcome is not a stall; the target is under 5 %). Then the
 * decision catalogue (realistic agent behaviours in a Node project,
 * finishline's defaults, plus the held-out reproduction test where a scenario
 * scripts a verifier): a Markdown table of
 * the correct outcome, finishline's decision and the peers' rules, with
 * scores, and the success metrics summed over the catalogue and over both;
 * then the scenarios with independent evidence (a verifier, a reviewer, a bug
 * label) again without it.
 *
 *     deno run -A tests/completion_scenarios.ts              # both
 *     deno run -A tests/completion_scenarios.ts --catalogue  # the catalogue only
 *     deno run -A tests/completion_scenarios.ts --catalogue "weakens" "issue"  # names holding these
 *
 * @module
 */

import { SCENARIOS } from "./fixtures/scenarios/mod.ts";
import {
  describeMetrics,
  FALSE_ABORT_TARGET,
  type MetricTotals,
  percent,
  type RunMetrics,
  sumMetrics,
} from "../agents/record/run_metrics.ts";
import { runScenario } from "./fixtures/scenarios/run.ts";
import { CATALOGUE } from "./fixtures/scenarios/catalogue.ts";
import {
  type CatalogueOutcome,
  catalogueTable,
  runCatalogueScenario,
} from "./fixtures/scenarios/catalogue_run.ts";

const catalogueOnly = Deno.args[0] === "--catalogue";
const only = Deno.args.slice(catalogueOnly ? 1 : 0);

/** The seed's primary metric in one line. */
function falseAbortLine(totals: MetricTotals): string {
  return `false aborts: ${totals.falseAborts} of ${totals.aborts} abort${
    totals.aborts === 1 ? "" : "s"
  } (${percent(totals.falseAbortRate)}), target < ${FALSE_ABORT_TARGET * 100} %`;
}

/** The metrics block of a section, then the primary metric on its own line. */
function metricsBlock(title: string, metrics: RunMetrics[]): string {
  const totals = sumMetrics(metrics);
  return [`### ${title}`, "", "```", ...describeMetrics(totals), "```", "", falseAbortLine(totals)]
    .join("\n");
}

let failed = false;
const allMetrics: RunMetrics[] = [];
if (!catalogueOnly) {
  let correct = 0;
  const metrics: RunMetrics[] = [];
  for (const scenario of SCENARIOS) {
    const outcome = await runScenario(scenario);
    if (outcome.correct) correct++;
    metrics.push(outcome.metrics);
    const mark = outcome.correct ? "ok  " : "FAIL";
    console.log(
      `${mark} ${scenario.state.padEnd(17)} ${scenario.name} (${(outcome.ms / 1000).toFixed(1)} s)`,
    );
    for (const problem of outcome.problems) console.log(`       ${problem}`);
  }
  const states = new Set(SCENARIOS.map((scenario) => scenario.state)).size;
  console.log(
    `\n${correct}/${SCENARIOS.length} scenarios decided correctly (${states} states)\n`,
  );
  console.log(`${metricsBlock("Success metrics: the five states", metrics)}\n`);
  allMetrics.push(...metrics);
  failed ||= correct !== SCENARIOS.length;
}

const selected = CATALOGUE.filter((scenario) =>
  only.length === 0 || only.some((word) => scenario.name.includes(word))
);
const outcomes: CatalogueOutcome[] = [];
for (const scenario of selected) {
  const outcome = await runCatalogueScenario(scenario);
  outcomes.push(outcome);
  const mark = outcome.correct ? "ok  " : scenario.limit ? "limit" : "FAIL";
  console.error(`${mark} ${scenario.name} (${(outcome.ms / 1000).toFixed(1)} s)`);
  for (const problem of outcome.problems) console.error(`       ${problem}`);
  if (!outcome.correct) { for (const line of outcome.evidence) console.error(`       ${line}`); }
}
console.log(`## Decision catalogue\n\n${catalogueTable(outcomes)}`);
const catalogueMetrics = outcomes.map((outcome) => outcome.metrics);
console.log(`\n${metricsBlock("Success metrics: the decision catalogue", catalogueMetrics)}`);
if (allMetrics.length > 0) {
  allMetrics.push(...catalogueMetrics);
  console.log(`\n${metricsBlock("Success metrics: both", allMetrics)}`);
}
// The scenarios that script a verifier or a reviewer, or whose issue is labelled a bug, again
// without the independent evidence: what the held-out test, the worker's own test and the
// reviewer add.
const independent = outcomes.filter(({ scenario }) =>
  scenario.verifier || scenario.reviewer || scenario.issue?.labels?.length
);
if (independent.length > 0) {
  let without = 0;
  for (const { scenario } of independent) {
    // The decision alone: the scenario's report texts name evidence that is not there.
    const outcome = await runCatalogueScenario(scenario, { independent: false });
    if (outcome.decisionCorrect) without++;
    console.error(
      `${
        outcome.decisionCorrect ? "ok  " : "FAIL"
      } ${scenario.name}, without: ${outcome.status} @${outcome.iterations}`,
    );
  }
  const right = independent.filter((outcome) => outcome.decisionCorrect).length;
  console.log(
    `\nThe ${independent.length} scenarios with independent evidence (a verifier, a reviewer, or a bug label): ${right} decided right with it, ${without} without it.`,
  );
}
// A known limit is scored wrong in the table, but only a miss that is not one fails the run.
failed ||= outcomes.some((outcome) => !outcome.correct && !outcome.scenario.limit);
Deno.exitCode = failed ? 1 : 0;
