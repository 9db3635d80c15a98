/**
 * Benchmark-style runs of finishline's completion decisions.
 *
 * First the completion-detection scenarios (the five states of the user's
 * design: complete, waiting, working, stalled, forgot to commit): how many
 * were decided correctly and whether any run was aborted while the agent was
 * still making progress. Then the decision catalogue (realistic agent
 * behaviours in a Node project, finishline's defaults, plus the held-out
 * reproduction test where a scenario scripts a verifier): a Markdown table of
 * the correct outcome, finishline's decision and the peers' rules, with
 * scores; then the scenarios with independent evidence (a verifier, a
 * reviewer, a bug label) again without it.
 *
 *     deno run -A tests/completion_scenarios.ts              # both
 *     deno run -A tests/completion_scenarios.ts --catalogue  # the catalogue only
 *     deno run -A tests/completion_scenarios.ts --catalogue "weakens" "issue"  # names holding these
 *
 * @module
 */

import { SCENARIOS } from "./fixtures/scenarios/mod.ts";
import { runScenario } from "./fixtures/scenarios/run.ts";
import { CATALOGUE } from "./fixtures/scenarios/catalogue.ts";
import {
  type CatalogueOutcome,
  catalogueTable,
  runCatalogueScenario,
} from "./fixtures/scenarios/catalogue_run.ts";

const catalogueOnly = Deno.args[0] === "--catalogue";
const only = Deno.args.slice(catalogueOnly ? 1 : 0);

let failed = false;
if (!catalogueOnly) {
  let correct = 0;
  let falseAborts = 0;
  for (const scenario of SCENARIOS) {
    const outcome = await runScenario(scenario);
    if (outcome.correct) correct++;
    if (scenario.expect.code === 0 && (outcome.code === 4 || outcome.code === 3)) falseAborts++;
    const mark = outcome.correct ? "ok  " : "FAIL";
    console.log(
      `${mark} ${scenario.state.padEnd(17)} ${scenario.name} (${(outcome.ms / 1000).toFixed(1)} s)`,
    );
    for (const problem of outcome.problems) console.log(`       ${problem}`);
  }
  const states = new Set(SCENARIOS.map((scenario) => scenario.state)).size;
  console.log(
    `\n${correct}/${SCENARIOS.length} scenarios decided correctly (${states} states); false aborts: ${falseAborts}\n`,
  );
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
