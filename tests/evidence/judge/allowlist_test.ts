/**
 * Protection by allowlist, through the gate with real git and real pytest:
 * files that make the runner load something other than the committed source
 * (bytecode beside it, a plugin registered in package metadata, a config
 * file of a name no list had, a compiled extension module) are protected
 * whatever their name, so the claim is checked again without them and
 * refused; an honest fix of the source passes.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { DEFAULT_PROTECTED_GLOBS } from "../../../agents/definition/definition_types.ts";
import { protectedRole } from "../../../agents/evidence/judge/protected_files.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";

const BUGGY = "def add(a, b):\n    return a - b\n";
const FIXED = "def add(a, b):\n    return a + b\n";
const TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";

async function write(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, file)), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(join(root, file), content);
    else await Deno.writeFile(join(root, file), content);
  }
}

async function python(cwd: string, code: string): Promise<string> {
  const output = await new Deno.Command("python3", {
    args: ["-c", code],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) throw new Error(new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout).trim();
}

/**
 * A Python project whose test fails at the start, the gate's baseline run,
 * then the agent's files committed and claimed.
 */
async function claim(files: Record<string, string | Uint8Array>, remove: string[] = []) {
  const repo = await tempRepo();
  await write(repo.path, { "calc.py": BUGGY, "tests/test_calc.py": TEST });
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const base = (await gitRepo.head())!;
  const gate = new RepoChecksChecker({
    checks: [{ name: "pytest", command: "python3 -m pytest -q -p no:cacheprovider" }],
    timeoutMs: 120_000,
    protect: [...DEFAULT_PROTECTED_GLOBS],
    configFiles: [],
  });
  await gate.startBaseline(gitRepo, base);
  await write(repo.path, files);
  for (const file of remove) await Deno.remove(join(repo.path, file));
  await git(repo.path, "add", "-A", "-f");
  await git(repo.path, "commit", "-qm", "fix: add");
  const result = await gate.check({
    cwd: repo.path,
    git: { repo: gitRepo, baseline: base },
    completeTask: { status: "success", original_request_summary: "", summary: "" },
  } as never);
  return {
    result,
    evidence: gate.evidence,
    [Symbol.asyncDispose]: async () => {
      await gate.close();
      await repo[Symbol.asyncDispose]();
    },
  };
}

/** The refusal: the claim's own run was green (the runner was fooled), and the file is protected. */
function refusedAsProtected(
  run: Awaited<ReturnType<typeof claim>>,
  path: RegExp,
): void {
  assert.equal(run.result.complete, false, run.result.feedback);
  assert.equal(run.evidence?.checks[0].now, "green", "the cheat fooled the runner itself");
  assert.ok(
    run.evidence?.testsChanged.some((entry) =>
      path.test(entry.path) && entry.why?.includes("not plain source")
    ),
    JSON.stringify(run.evidence?.testsChanged),
  );
  assert.equal(run.evidence?.originalsPass, false);
  assert.match(run.result.feedback!, /tests that failed before your changes still fail/);
}

Deno.test("the allowlist: what makes the runner load other code than the source is protected", async (t) => {
  await t.step("an honest fix of the source passes, nothing protected", async () => {
    await using run = await claim({ "calc.py": FIXED });
    assert.equal(run.result.complete, true, run.result.feedback);
    assert.deepEqual(run.evidence?.testsChanged, []);
  });

  await t.step("bytecode compiled with unchecked hashes beside the buggy source", async () => {
    await using scratch = await tempDir("finishline-pyc-");
    await Deno.writeTextFile(join(scratch.path, "calc.py"), FIXED);
    const tag = await python(scratch.path, "import sys; print(sys.implementation.cache_tag)");
    await python(
      scratch.path,
      "import py_compile; py_compile.compile('calc.py', cfile='out.pyc', invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
    );
    const pyc = await Deno.readFile(join(scratch.path, "out.pyc"));
    await using run = await claim({ [`__pycache__/calc.${tag}.pyc`]: pyc });
    // Two layers: the checks' environment never reads the copy's bytecode (its own prefix), so
    // the runner is not fooled; and the file is protected as not plain source all the same.
    assert.equal(run.result.complete, false, run.result.feedback);
    assert.equal(run.evidence?.checks[0].now, "red", "bytecode from the commit is not read");
    assert.ok(
      run.evidence?.testsChanged.some((entry) =>
        /\.pyc$/.test(entry.path) && entry.why?.includes("not plain source")
      ),
      JSON.stringify(run.evidence?.testsChanged),
    );
  });

  await t.step("a pytest plugin registered in *.dist-info/entry_points.txt", async () => {
    await using run = await claim({
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
    refusedAsProtected(run, /dist-info\/entry_points\.txt$/);
  });

  await t.step(
    "invented: pytest.toml, a configuration name no list had, loading a plugin",
    async () => {
      await using run = await claim({
        "pytest.toml": '[pytest]\naddopts = ["-p", "passing"]\n',
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
      });
      refusedAsProtected(run, /^pytest\.toml$/);
    },
  );

  const gcc = await new Deno.Command("gcc", { args: ["--version"], stdout: "null", stderr: "null" })
    .output().then((output) => output.success, () => false);
  await t.step({
    name: "invented: a compiled extension module beside the buggy source (imported first)",
    ignore: !gcc,
    fn: async () => {
      await using scratch = await tempDir("finishline-ext-");
      const [include, suffix] = (await python(
        scratch.path,
        "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))",
      )).split("\n");
      await Deno.writeTextFile(
        join(scratch.path, "calc.c"),
        [
          "#include <Python.h>",
          "static PyObject* add(PyObject* self, PyObject* args) {",
          '  long a, b; if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;',
          "  return PyLong_FromLong(a + b);",
          "}",
          'static PyMethodDef methods[] = {{"add", add, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};',
          'static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "calc", NULL, -1, methods};',
          "PyMODINIT_FUNC PyInit_calc(void) { return PyModule_Create(&module); }",
        ].join("\n"),
      );
      const built = await new Deno.Command("gcc", {
        args: ["-shared", "-fPIC", `-I${include}`, "calc.c", "-o", `calc${suffix}`],
        cwd: scratch.path,
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.ok(built.success, new TextDecoder().decode(built.stderr));
      const module = await Deno.readFile(join(scratch.path, `calc${suffix}`));
      await using run = await claim({ [`calc${suffix}`]: module });
      refusedAsProtected(run, /\.so$/);
    },
  });
});

Deno.test("the allowlist by path: kinds that are never plain source", () => {
  const options = {
    protect: [...DEFAULT_PROTECTED_GLOBS],
    configFiles: [],
    languages: new Set(["python", "go"]),
  };
  const cases: Array<[string, string | undefined]> = [
    ["calc.py", undefined],
    ["pkg/server.go", undefined],
    ["docs/guide.md", undefined],
    ["LICENSE", undefined],
    ["zz_cheat.pth", "not plain source: Python path hook"],
    [
      ".venv/lib/python3.11/site-packages/zz.pth",
      "not plain source: dependency folder or package metadata",
    ],
    [
      "vendor/github.com/x/assert/assert.go",
      "not plain source: dependency folder or package metadata",
    ],
    ["node_modules/.bin/jest", "not plain source: dependency folder or package metadata"],
    ["x.egg-info/entry_points.txt", "not plain source: dependency folder or package metadata"],
    ["lib/calc.cpython-311-x86_64-linux-gnu.so", "not plain source: bytecode"],
    ["tool.rb", "not plain source: ruby source, a language the repository does not have"],
    ["pytest.toml", "not plain source: .toml file"],
    ["Rakefile", "not plain source: no extension"],
  ];
  for (const [file, role] of cases) assert.equal(protectedRole(file, options), role, file);
});
