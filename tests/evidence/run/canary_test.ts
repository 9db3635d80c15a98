/**
 * The canary: finishline's own tests, random per run, that must fail (and
 * one that must pass) in each runner it can place a file for. Real node
 * --test and real pytest in temp folders: an honest project holds, a module
 * that turns node:assert into no-ops when imported and a pytest plugin that
 * turns failures into passes are caught; a runner without a canary file is
 * listed as not canaried. The other runners' canaries are tested in
 * canary_js_test.ts (deno, jest, vitest, mocha) and canary_go_rust_test.ts.
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

Deno.test("runners without a canary are listed as not canaried, with why", async () => {
  await using dir = await tempDir("finishline-canary-");
  const results = await runCanaries(dir.path, [
    { name: "ctest", command: "ctest --test-dir build", runner: "ctest" },
    // jest is canaried, but this project has no jest test file to put one beside.
    { name: "jest", command: "npx jest", runner: "jest" },
    { name: "make", command: "make test" },
  ], OPTIONS);
  assert.deepEqual(results.map((result) => [result.runner, result.outcome]), [
    ["ctest", "not canaried"],
    ["jest", "not canaried"],
  ]);
  assert.match(results[0].why!, /^ctest runs the programs a CMake build makes/);
  assert.equal(results[1].why, "no jest test file was found");
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

Deno.test("the canary runs under the check's options for its runner, less what selects tests", async (t) => {
  const { runnerLine } = await import("../../../agents/evidence/run/_canary_common.ts");
  await using dir = await tempDir("finishline-canary-");
  await write(dir.path, {
    "test/math.test.js": "",
    "setup.js": "",
    "package.json": JSON.stringify({
      scripts: {
        test:
          "NODE_ENV=test jest --ci -t adds --config jest.config.js test/ --bail --setupFiles ./setup.js",
      },
    }),
  });
  const context = (command: string, runner: "jest" | "go" | "cargo") => ({
    dir: dir.path,
    checks: [{ name: command, command, runner }],
    changed: [],
    token: "t",
    write: () => Promise.resolve(),
  });
  const jest = {
    values: ["-t", "--config", "--setupFiles"],
    dropped: ["-t", "--bail"],
    testFile: /\.test\.js$/,
  };
  await t.step("through the package script: names, paths and --bail left out", async () => {
    assert.deepEqual(await runnerLine(context("npm test", "jest"), "jest", jest), {
      env: ["NODE_ENV=test"],
      program: "jest",
      options: ["--ci", "--config", "jest.config.js", "--setupFiles", "./setup.js"],
    });
  });
  await t.step("go: packages and -run left out, build flags kept; -args ends it", async () => {
    const go = { values: ["-run", "-tags", "-exec"], dropped: ["-run", "-v"] };
    assert.deepEqual(
      await runnerLine(
        context("go test -v -tags integration -run TestX ./... -exec wrap -args -x", "go"),
        "go",
        go,
      ),
      { env: [], program: "go", options: ["-tags", "integration", "-exec", "wrap"] },
    );
  });
  await t.step("a check that runs several commands gives no line", async () => {
    assert.equal(
      await runnerLine(context("cargo build && cargo test", "cargo"), "cargo", jest),
      undefined,
    );
  });
});

Deno.test("a must-pass test the runner does not count as passed is tampering", async () => {
  const { judgeCanary } = await import("../../../agents/evidence/run/canary.ts");
  const canary = newCanary("deno", ["throw"]);
  const run = {
    name: "canary",
    green: false,
    code: 1,
    timedOut: false,
    failing: canary.mustFail,
    testsRun: 1,
    counts: { run: 1, passed: 0, failed: 1, ignored: 1 },
    durationMs: 1,
    tail: "",
  };
  assert.deepEqual(judgeCanary(canary, run), {
    outcome: "tampered",
    why: "the runner reported finishline's test that must pass as not passed",
  });
  assert.equal(
    judgeCanary(canary, { ...run, counts: { ...run.counts, passed: 1 } }).outcome,
    "held",
  );
});
