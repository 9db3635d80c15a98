/**
 * Benchmark-style run of the completion-detection scenarios (the five states
 * of the user's design: complete, waiting, working, stalled, forgot to
 * commit): prints how many were decided correctly and whether any run was
 * aborted while the agent was still making progress.
 *
 *     deno run -A tests/completion_scenarios.ts
 *
 * @module
 */

import { SCENARIOS } from "./fixtures/scenarios/mod.ts";
import { runScenario } from "./fixtures/scenarios/run.ts";

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
  `\n${correct}/${SCENARIOS.length} scenarios decided correctly (${states} states); false aborts: ${falseAborts}`,
);
Deno.exitCode = correct === SCENARIOS.length ? 0 : 1;
