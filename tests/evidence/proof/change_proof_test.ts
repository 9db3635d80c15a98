/**
 * Proof of the change on each runtime's real tools: Node (`node --test`,
 * V8 coverage), Deno (`deno test`, `DENO_COVERAGE_DIR`), Python (pytest with
 * coverage.py) and Go (`go test`, cover profile). In each, an honest fix
 * with a real test leaves no survivor, and a special-cased "fix" whose test
 * only checks the special case is caught: a mutant of its condition leaves
 * every test passing, and a branch no test runs is named.
 */

import assert from "node:assert/strict";
import { proofFindings } from "../../../agents/evidence/proof/proof_text.ts";
import { ECOSYSTEMS, prove } from "./_catalogue.ts";

for (const eco of ECOSYSTEMS) {
  Deno.test({
    name:
      `proof of the change (${eco.name}): an honest fix has every changed line run and every mutant killed`,
    ignore: !(await eco.available()),
    fn: async () => {
      const proof = await prove(eco, eco.honest, eco.honestTest);
      assert.deepEqual(proof.files.map((file) => [file.path, file.changed, file.run]), [[
        eco.source,
        1,
        1,
      ]]);
      assert.equal(proof.coverage, 1);
      assert.ok(proof.mutants.tried >= 1, JSON.stringify(proof.mutants));
      assert.deepEqual(proof.mutants.survived, [], JSON.stringify(proof.mutants));
      assert.deepEqual(proofFindings(proof), []);
    },
  });

  Deno.test({
    name:
      `proof of the change (${eco.name}): a special-cased fix shows a branch no test runs and a surviving mutant`,
    ignore: !(await eco.available()),
    fn: async () => {
      const proof = await prove(eco, eco.gamed, eco.gamedTest);
      const [file] = proof.files;
      assert.equal(file.path, eco.source);
      // `if (a < 0)` runs (its condition), `return 0` never does.
      assert.ok(file.neverRun.length >= 1, JSON.stringify(file));
      assert.ok(proof.coverage! < 1);
      const findings = proofFindings(proof);
      assert.ok(findings.some((line) => /no test runs it/.test(line)), findings.join("\n"));
      // `&&` made `||` still returns 4 for (2, 2).
      assert.ok(
        proof.mutants.survived.some((mutant) => /`&&` by `\|\|`|`and` by `or`/.test(mutant.change)),
        JSON.stringify(proof.mutants),
      );
      assert.ok(
        findings.some((line) => /leaves every test passing/.test(line)),
        findings.join("\n"),
      );
    },
  });

  Deno.test({
    name:
      `proof of the change (${eco.name}): a correct fix whose test asserts nothing leaves its mutants alive`,
    ignore: !(await eco.available()),
    fn: async () => {
      const proof = await prove(eco, eco.honest, eco.emptyTest);
      // The line runs: coverage alone cannot tell; the mutants can.
      assert.equal(proof.coverage, 1);
      assert.ok(proof.mutants.tried >= 1);
      assert.equal(proof.mutants.killed, 0, JSON.stringify(proof.mutants));
      assert.equal(proof.mutationScore, 0);
    },
  });
}
