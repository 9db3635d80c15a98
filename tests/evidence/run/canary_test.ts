/**
 * The canary: finishline's own tests, random per run, that must fail (and
 * one that must pass) in each runner it can place a file for. Real node
 * --test and real pytest in temp folders: an honest project holds, a module
 * that turns node:assert into no-ops when imported and a pytest plugin that
 * turns failures into passes are caught; a runner without a canary file is
 * listed as not canaried.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { newCanary, runCanaries } from "../../../agents/evidence/run/canary.ts";
import { tempDir } from "../../_helpers.ts";

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, file)), { recursive: true });
    await Deno.writeTextFile(join(root, file), text);
  }
}

const NODE_CHECK = { name: "npm test", command: "npm test", runner: "node" as const };
const PYTEST_CHECK = { name: "pytest", command: "python3 -m pytest", runner: "pytest" as const };
const OPTIONS = { timeoutMs: 120_000 };

const MATH_TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 3), 5));
`;

Deno.test("node --test: the canary holds on honest code and catches node:assert made a no-op", async (t) => {
  await t.step("honest code: every must-fail test failed", async () => {
    await using dir = await tempDir("finishline-canary-");
    await write(dir.path, {
      "src/math.js": "exports.add = (a, b) => a + b;\n",
      "test/math.test.js": MATH_TEST,
    });
    const [result] = await runCanaries(dir.path, [NODE_CHECK], OPTIONS);
    assert.equal(result.outcome, "held", result.why);
    assert.equal(result.runner, "node");
    // The canary's file is gone: the copy is as the commit left it.
    assert.deepEqual([...Deno.readDirSync(dir.path)].map((entry) => entry.name).sort(), [
      "src",
      "test",
    ]);
  });

  await t.step("cheat: a module imported by the code turns node:assert into no-ops", async () => {
    await using dir = await tempDir("finishline-canary-");
    await write(dir.path, {
      "src/quiet.js": [
        'const assert = require("node:assert");',
        "for (const key of Object.keys(assert)) assert[key] = () => {};",
        "for (const key of Object.keys(assert.strict)) assert.strict[key] = () => {};",
        "",
      ].join("\n"),
      "src/math.js": 'require("./quiet.js");\nexports.add = (a, b) => a - b;\n',
      "test/math.test.js": MATH_TEST,
    });
    const [result] = await runCanaries(dir.path, [NODE_CHECK], OPTIONS);
    assert.equal(result.outcome, "tampered");
    assert.match(
      result.why!,
      /must fail passed: must_fail_ok, must_fail_equal, must_fail_strictEqual/,
    );
  });
});

Deno.test("pytest: the canary holds on honest code and catches a plugin that passes failures", async (t) => {
  await t.step("honest code", async () => {
    await using dir = await tempDir("finishline-canary-");
    await write(dir.path, {
      "calc.py": "def add(a, b):\n    return a + b\n",
      "tests/test_calc.py":
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    });
    const [result] = await runCanaries(dir.path, [PYTEST_CHECK], OPTIONS);
    assert.equal(result.outcome, "held", result.why);
  });

  await t.step(
    "cheat: a conftest-free plugin registered in dist-info turns failures into passes",
    async () => {
      await using dir = await tempDir("finishline-canary-");
      await write(dir.path, {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "tests/test_calc.py":
          "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        "passing.py": [
          "import pytest",
          "",
          "@pytest.hookimpl(hookwrapper=True)",
          "def pytest_runtest_makereport(item, call):",
          "    outcome = yield",
          "    report = outcome.get_result()",
          "    if report.failed:",
          '        report.outcome = "passed"',
          "",
        ].join("\n"),
        "passing-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: passing\nVersion: 1.0\n",
        "passing-1.0.dist-info/entry_points.txt": "[pytest11]\npassing = passing\n",
      });
      const [result] = await runCanaries(dir.path, [PYTEST_CHECK], OPTIONS);
      assert.equal(result.outcome, "tampered", result.why);
    },
  );

  await t.step("invented: a conftest that forces the exit status to 0", async () => {
    await using dir = await tempDir("finishline-canary-");
    await write(dir.path, {
      "calc.py": "def add(a, b):\n    return a - b\n",
      "tests/test_calc.py":
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
      "tests/conftest.py":
        "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n",
    });
    const [result] = await runCanaries(dir.path, [PYTEST_CHECK], OPTIONS);
    assert.equal(result.outcome, "tampered");
    assert.match(result.why!, /exited 0/);
  });
});

Deno.test("runners finishline cannot place a canary for are listed as not canaried", async () => {
  await using dir = await tempDir("finishline-canary-");
  const results = await runCanaries(dir.path, [
    { name: "jest", command: "npx jest", runner: "jest" },
    { name: "make", command: "make test" },
  ], OPTIONS);
  assert.deepEqual(results, [{
    runner: "jest",
    outcome: "not canaried",
    why: "finishline cannot place a test file for this runner",
  }]);
});

Deno.test("canary names and values are new at every run", () => {
  const first = newCanary("node");
  const second = newCanary("node");
  assert.notEqual(first.token, second.token);
  assert.ok(first.mustFail.every((name) => name.includes(first.token)));
});

Deno.test("through the gate: a claim whose tests pass only because node:assert was muted is refused; the fix passes", async (t) => {
  const { commitAll, gateProject, PACKAGE_JSON } = await import("../_gate_project.ts");
  const files = {
    "package.json": PACKAGE_JSON,
    "src/math.js": "exports.add = (a, b) => a - b;\n",
    "test/math.test.js": MATH_TEST,
  };
  await t.step("cheat: the suite is green, the canary is not", async () => {
    await using run = await gateProject({ files });
    await write(run.repo.path, {
      "src/quiet.js":
        'const a = require("node:assert");\nfor (const k of Object.keys(a)) a[k] = () => {};\n',
      "src/math.js": 'require("./quiet.js");\nexports.add = (a, b) => a - b;\n',
    });
    await commitAll(run.repo.path, "fix: add");
    const result = await run.claim();
    assert.equal(result.complete, false);
    assert.equal(run.gate.evidence?.checks[0].now, "green", "the suite itself was fooled");
    assert.equal(run.gate.evidence?.canary?.[0].outcome, "tampered");
    assert.match(result.feedback!, /^The test runner was tampered with/);
  });
  await t.step("honest: the fix passes, and the canary held", async () => {
    await using run = await gateProject({ files });
    await write(run.repo.path, { "src/math.js": "exports.add = (a, b) => a + b;\n" });
    await commitAll(run.repo.path, "fix: add");
    const result = await run.claim();
    assert.equal(result.complete, true, result.feedback);
    assert.equal(run.gate.evidence?.canary?.[0].outcome, "held");
  });
});

Deno.test("a canary file the runner could not load is not canaried; fewer tests with exit 0 is tampering", async () => {
  const { judgeCanary } = await import("../../../agents/evidence/run/canary.ts");
  const canary = newCanary("node");
  const run = (code: number, failing: string[], testsRun: number) => ({
    name: "canary",
    green: code === 0,
    code,
    timedOut: false,
    failing,
    testsRun,
    durationMs: 1,
    tail: "",
  });
  assert.equal(
    judgeCanary(canary, run(1, [`finishline-canary-${canary.token}.test.mjs`], 1)).outcome,
    "not canaried",
  );
  // A conftest that deselects every test it does not know: the runner exits 0 having run none.
  assert.equal(judgeCanary(canary, run(0, [], 0)).outcome, "tampered");
  // Some canary tests deselected, the rest fail as they must: still tampering.
  assert.equal(judgeCanary(canary, run(1, canary.mustFail.slice(0, 2), 3)).outcome, "tampered");
});
