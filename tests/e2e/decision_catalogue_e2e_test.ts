/**
 * End to end for the decision catalogue: every realistic agent behaviour of
 * `tests/fixtures/scenarios/catalogue.ts` runs with the real Claude Code
 * binary against the scripted model server, real git, real `npm test`, the
 * fake `gh` for issue runs, and the CLI as a subprocess, and finishline must
 * reach the scenario's correct outcome. One test per scenario, so that
 * `--filter` picks one:
 *
 *     deno test -A tests/e2e/decision_catalogue_e2e_test.ts --filter "weakens a test"
 */

import assert from "node:assert/strict";
import { CATALOGUE, describeOutcome, groundTruth } from "../fixtures/scenarios/catalogue.ts";
import { PROOF_PREFIX, runCatalogueScenario } from "../fixtures/scenarios/catalogue_run.ts";
import { proofFindings, proofSummary } from "../../agents/evidence/proof/proof_text.ts";
import {
  decide,
  decidedCorrectly,
  PEER_RULES,
  type Transcript,
} from "../fixtures/scenarios/peers.ts";

Deno.test("decision catalogue: well formed, with a ground truth that agrees with each correct outcome", () => {
  assert.ok(CATALOGUE.length >= 22, `${CATALOGUE.length} scenarios`);
  assert.ok(CATALOGUE.filter((scenario) => scenario.issue).length >= 5, "five issue runs at least");
  assert.equal(new Set(CATALOGUE.map((scenario) => scenario.name)).size, CATALOGUE.length);
  for (const scenario of CATALOGUE) {
    const truth = groundTruth(scenario, scenario.expect.iterations);
    const completes = scenario.expect.code === 0;
    assert.equal(
      decidedCorrectly(completes ? scenario.expect.iterations : undefined, truth),
      true,
      `${scenario.name}: ${describeOutcome(scenario.expect)} disagrees with its ground truth`,
    );
    assert.ok(scenario.expect.iterations <= (scenario.maxIterations ?? 4), scenario.name);
  }
});

Deno.test("decision catalogue: peer rules accept at their first signal and are scored against the truth", () => {
  const iteration = (n: number, texts: string[], success: boolean, commands: string[] = []) => ({
    iteration: n,
    texts,
    commands,
    completeTask: success ? [{ status: "success" }] : [],
    issueClosedByOthers: false,
    told: [],
  });
  const transcript: Transcript = {
    issue: 3,
    iterations: [
      iteration(1, ["Done. <promise>DONE</promise>"], false, ["gh issue close 3 -c done"]),
      iteration(2, ["Really done."], true),
    ],
  };
  const [promise, completeTask, closed] = PEER_RULES.map((rule) =>
    decide(rule, transcript, [false, true])
  );
  assert.deepEqual([promise.acceptedAt, promise.correct], [1, false]);
  assert.deepEqual([completeTask.acceptedAt, completeTask.correct], [2, true]);
  assert.deepEqual([closed.acceptedAt, closed.correct], [1, false]);
  const noIssue = decide(PEER_RULES[2], { iterations: transcript.iterations }, [false, true]);
  assert.equal(noIssue.applies, false);
  assert.equal(
    decidedCorrectly(undefined, [false, false]),
    true,
    "never accepting unfinished work",
  );
  assert.equal(decidedCorrectly(undefined, [false, true]), false, "never accepting finished work");
});

for (const scenario of CATALOGUE) {
  Deno.test(`decision catalogue: ${scenario.name} -> ${describeOutcome(scenario.expect)}`, async (t) => {
    const outcome = await runCatalogueScenario(scenario);
    if (outcome.acceptedAt !== undefined) {
      const proof = outcome.changeProof;
      console.log(
        `${PROOF_PREFIX}${scenario.name}|${outcome.decisionCorrect}|${
          proof ? proofFindings(proof).length > 0 : "none"
        }|${proof ? `${proofSummary(proof)}; ${proofFindings(proof, 2).join("; ")}` : ""}`,
      );
    }
    const context = [
      ...outcome.problems,
      ...outcome.evidence,
    ].join("\n");
    const limit = scenario.limit;
    if (limit) {
      // Scored wrong in the benchmark; here the by-design decision is pinned, and it must not be silent.
      await t.step(
        `known limit: finishline gives ${describeOutcome(limit)}, and reports it`,
        () => {
          assert.equal(outcome.code, limit.code, context);
          assert.equal(outcome.iterations, limit.iterations, context);
          for (const text of limit.report) assert.ok(outcome.report.includes(text), text);
        },
      );
      return;
    }
    await t.step("exit code and iterations", () => {
      assert.equal(outcome.code, scenario.expect.code, context);
      assert.equal(outcome.iterations, scenario.expect.iterations, context);
    });
    await t.step("the decision agrees with the ground truth", () => {
      assert.ok(outcome.decisionCorrect, context);
    });
    await t.step("facts at the end, and the agent was told what it expected", () => {
      assert.deepEqual(outcome.problems, [], outcome.evidence.join("\n"));
    });
    if (outcome.acceptedAt !== undefined && outcome.decisionCorrect && outcome.changeProof) {
      // Every completion here is sound work: the proof must not flag it (it did, when the
      // proof ran on the copy the original tests' run had left behind).
      await t.step("the proof of the change flags nothing in sound work", () => {
        assert.deepEqual(proofFindings(outcome.changeProof!), [], context);
      });
    }
    await t.step("no false abort (seed 003's success metric)", () => {
      assert.equal(outcome.metrics.falseAbort, false, context);
    });
  });
}
