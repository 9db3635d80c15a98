/**
 * Templates written the completion handlers design's way: its handlers hand
 * each argument to the templates under its own name (`uv-${key}`), so an
 * agent's own template says `{uv-targetDecisions}` for its `targetDecisions`
 * parameter. The CLI, as a subprocess, fills it (and the snake-case
 * spelling) instead of stopping with a missing variable.
 */

import assert from "node:assert/strict";
import { commitAgent, runCli, tempRepo } from "../_helpers.ts";

Deno.test("a template that names a parameter as the design does ({uv-targetDecisions}) is filled, as is its snake-case spelling", async () => {
  await using repo = await tempRepo();
  await commitAgent(repo.path, {
    name: "facilitator",
    behavior: { completionType: "iterate", completionConfig: { maxIterations: 2 } },
    parameters: {
      topic: { type: "string", required: true },
      targetDecisions: { type: "number", default: 3 },
    },
  });
  await Deno.mkdir(`${repo.path}/.agent/facilitator/prompts`, { recursive: true });
  await Deno.writeTextFile(
    `${repo.path}/.agent/facilitator/prompts/initial_iterate.md`,
    "# Facilitation Session\n\n## Topic\n{uv-topic}\n\n## Goal\n" +
      "- Achieve {uv-targetDecisions} decisions ({uv-target_decisions} in snake case)\n",
  );
  const run = await runCli(
    [
      "--agent",
      "facilitator",
      "--topic",
      "Release plan",
      "--target-decisions",
      "2",
      "--dry-run",
      "--json",
    ],
    { cwd: repo.path },
  );
  assert.equal(run.code, 0, run.stderr);
  const plan = JSON.parse(run.stdout);
  assert.match(plan.prompt, /## Topic\nRelease plan\n/);
  assert.match(plan.prompt, /- Achieve 2 decisions \(2 in snake case\)/);
});
