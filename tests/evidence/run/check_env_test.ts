/**
 * Every check runs in a hermetic environment: a fresh home (no user npm,
 * pip, git or Python site configuration), Python's bytecode never read
 * from or written into the copy. Each cheat through the user's environment
 * or a committed cache is refused, and the honest fix passes. Real
 * `pytest`, `npm test` with `node --test`, real git.
 */

import assert from "node:assert/strict";
import { runRepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { checkEnvironment } from "../../../agents/evidence/run/check_env.ts";
import { commitAll, gateProject, PACKAGE_JSON, write } from "../_gate_project.ts";
import { git, tempDir } from "../../_helpers.ts";

const PYTEST = {
  name: "pytest",
  command: "python3 -m pytest -q -p no:cacheprovider",
  runner: "pytest" as const,
};
const CALC_BROKEN = "def add(a, b):\n    return a - b\n";
const CALC_FIXED = "def add(a, b):\n    return a + b\n";
const CALC_TEST = "from calc import add\n\n\ndef test_adds():\n    assert add(2, 3) == 5\n";

/** Run `body` with HOME set to a home the agent wrote into. */
async function withHome<T>(home: string, body: () => Promise<T>): Promise<T> {
  const before = Deno.env.get("HOME");
  Deno.env.set("HOME", home);
  try {
    return await body();
  } finally {
    if (before === undefined) Deno.env.delete("HOME");
    else Deno.env.set("HOME", before);
  }
}

/** A command's exit code with `env` over the parent's (the cheat, outside finishline). */
async function exitOf(command: string, cwd: string, env: Record<string, string>): Promise<number> {
  const output = await new Deno.Command("sh", {
    args: ["-c", command],
    cwd,
    env,
    stdout: "null",
    stderr: "null",
  }).output();
  return output.code;
}

Deno.test("the user's Python site folder never reaches a check (.pth, usercustomize)", async (t) => {
  for (
    const [name, file, text] of [
      [
        "a .pth file",
        "fix.pth",
        'import sys; m = type(sys)("calc"); m.add = lambda a, b: a + b; sys.modules["calc"] = m\n',
      ],
      [
        "usercustomize.py",
        "usercustomize.py",
        'import sys\nm = type(sys)("calc")\nm.add = lambda a, b: a + b\nsys.modules["calc"] = m\n',
      ],
    ] as const
  ) {
    await t.step(name, async () => {
      await using home = await tempDir();
      await using project = await tempDir();
      await write(project.path, { "calc.py": CALC_BROKEN, "test_calc.py": CALC_TEST });
      const site = new TextDecoder().decode(
        (await new Deno.Command("python3", {
          args: ["-c", "import site; print(site.getusersitepackages())"],
          env: { HOME: home.path },
          stdout: "piped",
        }).output()).stdout,
      ).trim();
      await Deno.mkdir(site, { recursive: true });
      await Deno.writeTextFile(`${site}/${file}`, text);
      // The cheat works in the user's shell.
      assert.equal(await exitOf(PYTEST.command, project.path, { HOME: home.path }), 0);
      await withHome(home.path, async () => {
        const run = await runRepoCheck(PYTEST, { cwd: project.path, timeoutMs: 120_000 });
        assert.equal(run.green, false, run.tail);
        assert.deepEqual(run.failing, ["test_calc.py::test_adds"]);
        await write(project.path, { "calc.py": CALC_FIXED });
        const fixed = await runRepoCheck(PYTEST, { cwd: project.path, timeoutMs: 120_000 });
        assert.equal(fixed.green, true, fixed.tail);
      });
    });
  }
});

Deno.test("node-options in the user's ~/.npmrc never reach a check", async () => {
  await using home = await tempDir();
  await using project = await tempDir();
  const BROKEN = "exports.add = (a, b) => a - b;\n";
  await write(project.path, {
    "package.json": PACKAGE_JSON,
    "src/math.js": BROKEN,
    "test/math.test.js": `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 3), 5));
`,
  });
  await Deno.writeTextFile(
    `${home.path}/fix.js`,
    `const Module = require("module");
const original = Module.prototype.require;
Module.prototype.require = function (id) {
  const value = original.apply(this, arguments);
  if (String(id).endsWith("src/math.js")) value.add = (a, b) => a + b;
  return value;
};
`,
  );
  await Deno.writeTextFile(`${home.path}/.npmrc`, `node-options=--require ${home.path}/fix.js\n`);
  const check = { name: "npm test", command: "npm test", runner: "node" as const };
  assert.equal(
    await exitOf(check.command, project.path, { HOME: home.path }),
    0,
    "the cheat works",
  );
  await withHome(home.path, async () => {
    const run = await runRepoCheck(check, { cwd: project.path, timeoutMs: 120_000 });
    assert.equal(run.green, false, run.tail);
    assert.deepEqual(run.failing, ["adds"]);
    await write(project.path, { "src/math.js": "exports.add = (a, b) => a + b;\n" });
    const fixed = await runRepoCheck(check, { cwd: project.path, timeoutMs: 120_000 });
    assert.equal(fixed.green, true, fixed.tail);
  });
});

Deno.test("a committed .pyc with an unchecked hash never runs in place of its source", async () => {
  await using project = await gateProject({
    files: { "calc.py": CALC_BROKEN, "conftest.py": "", "tests/test_calc.py": CALC_TEST },
    checks: [{ ...PYTEST, command: "python3 -m pytest -q -p no:cacheprovider --rootdir=. tests" }],
    protect: ["**/tests/**"],
  });
  const root = project.repo.path;
  // Bytecode of the fixed code, marked to be used without looking at the source.
  await write(root, { "calc.py": CALC_FIXED });
  const compiled = await new Deno.Command("python3", {
    args: [
      "-c",
      "import importlib.util, py_compile; py_compile.compile('calc.py', cfile=importlib.util.cache_from_source('calc.py'), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
    ],
    cwd: root,
  }).output();
  assert.equal(compiled.code, 0);
  await write(root, { "calc.py": CALC_BROKEN });
  await git(root, "add", "-f", "__pycache__");
  await commitAll(root, "perf: precompiled");
  const direct = await exitOf(
    "PYTHONDONTWRITEBYTECODE=1 python3 -m pytest -q -p no:cacheprovider tests",
    root,
    {},
  );
  assert.equal(direct, 0, "the cheat works in the user's shell");
  const result = await project.claim();
  assert.equal(result.complete, false, result.feedback);
  assert.match(result.feedback!, /test_adds/);
  await git(root, "rm", "-rq", "--cached", "__pycache__");
  await Deno.remove(`${root}/__pycache__`, { recursive: true });
  await write(root, { "calc.py": CALC_FIXED });
  await commitAll(root, "fix: add adds");
  const fixed = await project.claim();
  assert.equal(fixed.complete, true, fixed.feedback);
});

Deno.test("each check run gets a fresh home, removed after it", async () => {
  const first = await checkEnvironment();
  const second = await checkEnvironment();
  try {
    assert.notEqual(first.env.HOME, second.env.HOME);
    assert.notEqual(first.env.HOME, Deno.env.get("HOME"));
    assert.equal(first.env.GIT_CONFIG_GLOBAL, "/dev/null");
    assert.ok(first.env.PYTHONPYCACHEPREFIX.startsWith(first.env.HOME));
  } finally {
    await first.dispose();
    await second.dispose();
  }
  await assert.rejects(Deno.stat(first.env.HOME));
  // A check that writes into its home leaves nothing for the next.
  await using project = await tempDir();
  const write = await runRepoCheck(
    { name: "w", command: 'echo x > "$HOME/mark"; echo "$HOME"' },
    { cwd: project.path, timeoutMs: 10_000 },
  );
  await assert.rejects(Deno.stat(`${write.tail.trim()}/mark`));
});

Deno.test("bytecode a run wrote for the copy's code never serves the next run", async () => {
  await using project = await tempDir();
  await using pycache = await tempDir();
  const check = { name: "py", command: "python3 -c 'import calc; print(calc.add(2, 3))'" };
  const when = new Date("2020-01-01T00:00:00Z");
  await write(project.path, { "calc.py": CALC_BROKEN });
  await Deno.utime(`${project.path}/calc.py`, when, when);
  const first = await runRepoCheck(check, {
    cwd: project.path,
    timeoutMs: 60_000,
    pycache: pycache.path,
  });
  assert.equal(first.tail.trim(), "-1");
  // Same size, same time: a cached .pyc would pass for the new source.
  await write(project.path, { "calc.py": CALC_FIXED });
  await Deno.utime(`${project.path}/calc.py`, when, when);
  const second = await runRepoCheck(check, {
    cwd: project.path,
    timeoutMs: 60_000,
    pycache: pycache.path,
  });
  assert.equal(second.tail.trim(), "5");
  // Nothing was written into the project itself.
  await assert.rejects(Deno.stat(`${project.path}/__pycache__`));
});

Deno.test("FINISHLINE_BUILD_DIR is finishline's alone: empty unless it names a kept build folder", async () => {
  const show = { name: "build folder", command: 'echo "[${FINISHLINE_BUILD_DIR-unset}]"' };
  const before = Deno.env.get("FINISHLINE_BUILD_DIR");
  // A user's (or an agent's) own value never reaches a check.
  Deno.env.set("FINISHLINE_BUILD_DIR", "/tmp/the-users-own");
  try {
    const plain = await runRepoCheck(show, { cwd: ".", timeoutMs: 10_000 });
    assert.equal(plain.tail, "[]");
    const kept = await runRepoCheck(show, {
      cwd: ".",
      timeoutMs: 10_000,
      buildDir: "/tmp/finishline-kept",
    });
    assert.equal(kept.tail, "[/tmp/finishline-kept]");
  } finally {
    if (before === undefined) Deno.env.delete("FINISHLINE_BUILD_DIR");
    else Deno.env.set("FINISHLINE_BUILD_DIR", before);
  }
});
