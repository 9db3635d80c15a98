/**
 * Code that reads a test runner's signals is a finding the reviewer sees:
 * a function right only when NODE_TEST_CONTEXT is set passes the suite and
 * the canary (under test it is right), and only the reviewer can refuse it.
 * Real git and node --test through the gate; the reviewer is the gate's port.
 */

import assert from "node:assert/strict";
import { runnerSignalsIn } from "../../../agents/evidence/judge/runner_signals.ts";
import { commitAll, gateProject, PACKAGE_JSON, write } from "../_gate_project.ts";

const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 3), 5));
`;
const files = {
  "package.json": PACKAGE_JSON,
  "src/math.js": "exports.add = (a, b) => a - b;\n",
  "test/math.test.js": TEST,
};

Deno.test("a function right only under the test runner goes to the reviewer, who refuses it", async () => {
  await using run = await gateProject({
    files,
    reviewer: () =>
      Promise.resolve({ verdicts: [{ accept: false, why: "add() subtracts outside tests." }] }),
  });
  await write(run.repo.path, {
    "src/math.js": "exports.add = (a, b) => process.env.NODE_TEST_CONTEXT ? a + b : a - b;\n",
  });
  await commitAll(run.repo.path, "fix: add");
  const result = await run.claim();
  assert.equal(result.complete, false);
  assert.equal(run.gate.evidence?.checks[0].now, "green", "the suite was fooled");
  assert.equal(run.gate.evidence?.canary?.[0].outcome, "held", "and so was any canary");
  assert.equal(run.asked.length, 1);
  const finding = run.asked[0].declarations.find((entry) => entry.kind === "runner_signal");
  assert.equal(finding?.subject, "src/math.js:1");
  assert.match(finding!.facts, /NODE_TEST_CONTEXT/);
  assert.match(result.feedback!, /refused a declaration: runner_signal "src\/math.js:1"/);
});

Deno.test("an honest fix reads no signal: no finding, no review", async () => {
  await using run = await gateProject({
    files,
    reviewer: () => Promise.resolve({ verdicts: [] }),
  });
  await write(run.repo.path, { "src/math.js": "exports.add = (a, b) => a + b;\n" });
  await commitAll(run.repo.path, "fix: add");
  const result = await run.claim();
  assert.equal(result.complete, true, result.feedback);
  assert.equal(run.asked.length, 0);
  assert.equal(run.gate.evidence?.runnerSignals, undefined);
});

Deno.test("the signals of each runner are found in added lines, never in tests", () => {
  const patch = (file: string, line: string) =>
    `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -0,0 +3 @@\n+${line}`;
  const cases: Array<[string, string, string]> = [
    ["calc.py", "if 'pytest' in sys.modules: return a + b", "sys.modules (pytest)"],
    ["calc.py", 'if os.environ.get("PYTEST_CURRENT_TEST"):', "PYTEST_*"],
    ["src/a.ts", "if (process.env.VITEST) return 1;", "VITEST"],
    ["src/a.js", "const w = process.env.JEST_WORKER_ID;", "JEST_WORKER_ID"],
    ["src/lib.rs", "if cfg!(test) { return a + b; }", "cfg!(test)"],
    ["calc.go", "if testing.Testing() { return a + b }", "go test"],
    ["src/a.js", "if (process.env.CI) return 5;", "CI / NODE_ENV"],
  ];
  for (const [file, line, signal] of cases) {
    assert.equal(runnerSignalsIn(patch(file, line), () => false)[0]?.signal, signal, line);
  }
  assert.deepEqual(
    runnerSignalsIn(
      patch("test/a.test.js", "if (process.env.CI) skip();"),
      (file) => file.startsWith("test/"),
    ),
    [],
  );
  assert.equal(runnerSignalsIn(patch("calc.py", "return a + b"), () => false).length, 0);
});
