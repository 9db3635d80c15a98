import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  changedProtectedFiles,
  inlineTestMarkers,
  protectedRole,
  type ProtectOptions,
} from "../../../agents/evidence/judge/protected_files.ts";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { DEFAULT_PROTECTED_GLOBS } from "../../../agents/definition/definition_types.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempRepo } from "../../_helpers.ts";

const DEFAULTS: ProtectOptions = { protect: [...DEFAULT_PROTECTED_GLOBS], configFiles: [] };

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, file)), { recursive: true });
    await Deno.writeTextFile(join(root, file), text);
  }
}

/** A repository with `files` committed: the run's starting commit. */
async function project(files: Record<string, string>) {
  const repo = await tempRepo();
  await write(repo.path, files);
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  return { repo, gitRepo, base: (await gitRepo.head())! };
}

/** A one-file diff whose hunk adds `added` and removes `removed` lines. */
function patchOf(file: string, added: string[], removed: string[] = []): string {
  return [
    `diff --git a/${file} b/${file}`,
    `--- a/${file}`,
    `+++ b/${file}`,
    `@@ -1,${removed.length} +1,${added.length} @@`,
    ...removed.map((line) => `-${line}`),
    ...added.map((line) => `+${line}`),
  ].join("\n");
}

Deno.test("test files are protected at any depth", async (t) => {
  const protectedTests = [
    "test/a.js",
    "tests/a.py",
    "packages/x/test/a.js",
    "packages/x/tests/unit/a.py",
    "src/__tests__/a.tsx",
    "spec/models/user_spec.rb",
    "test.js",
    "packages/x/test.js",
    "tests.c",
    "app/tests.py",
    "src/math_test.go",
    "packages/api/src/math_test.ts",
    "test_math.py",
    "lib/pkg/test_math.py",
    "src/math.test.js",
    "packages/ui/src/button.spec.tsx",
    "go/pkg/testdata/input.json",
  ];
  for (const file of protectedTests) {
    await t.step(`${file} is a test file`, () => {
      assert.equal(protectedRole(file, DEFAULTS), "test file");
    });
  }
  for (const file of ["src/contest.py", "docs/testing.md", "latest.js", "src/attest.rs"]) {
    await t.step(`${file} is not protected`, () => {
      assert.equal(protectedRole(file, DEFAULTS), undefined);
    });
  }
});

Deno.test("runner configuration is protected at any depth", async (t) => {
  // Configuration written as source is protected by name.
  const bySource = [
    "conftest.py",
    "tests/conftest.py",
    "packages/api/tests/unit/conftest.py",
    "noxfile.py",
    "jest.config.js",
    "packages/web/vitest.config.ts",
    ".mocharc.yml",
    "build.rs",
    "sitecustomize.py",
  ];
  for (const file of bySource) {
    await t.step(`${file} is runner configuration`, () => {
      assert.equal(protectedRole(file, DEFAULTS), "runner configuration");
    });
  }
  // The rest is not plain source: the allowlist protects it, whatever its name.
  const languages = new Set(["python", "javascript", "typescript", "rust", "go"]);
  const notSource = [
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "services/api/pyproject.toml",
    "GNUmakefile",
    "makefile",
    "Makefile",
    "packages/x/Makefile",
    ".npmrc",
    ".yarnrc.yml",
    "package.json",
    "packages/x/package.json",
    "deno.json",
    "deno.jsonc",
    "Cargo.toml",
    "crates/core/Cargo.toml",
    ".cargo/config.toml",
    "go.mod",
    ".github/workflows/ci.yml",
    "a-runner-nobody-listed.conf",
  ];
  for (const file of notSource) {
    await t.step(`${file} is protected as not plain source`, () => {
      assert.match(protectedRole(file, { ...DEFAULTS, languages }) ?? "", /^not plain source: /);
    });
  }
  await t.step("a file detection read is runner configuration", () => {
    assert.equal(
      protectedRole("scripts/ci.sh", { ...DEFAULTS, configFiles: ["scripts/ci.sh"] }),
      "runner configuration",
    );
  });
  await t.step("finishline's own agent definitions are not", () => {
    assert.equal(protectedRole(".agent/iterator/package.json", DEFAULTS), undefined);
  });
  await t.step("verify.protect replaces the test globs, never the configuration", () => {
    const options = { protect: ["spec/**"], configFiles: [] };
    assert.equal(protectedRole("spec/a_spec.rb", options), "test file");
    assert.equal(protectedRole("tests/a.py", options), undefined);
    assert.equal(protectedRole("tests/conftest.py", options), "runner configuration");
  });
});

Deno.test("a change that adds or removes a test or a skip protects the file", async (t) => {
  const cases: Array<[string, string[], string[], string[]]> = [
    ["src/lib.rs", ["#[cfg(test)]", "mod tests {"], [], ["adds #[cfg(test)]"]],
    ["src/lib.rs", [], ["    #[test]", "    fn adds() {}"], ["removes #[test]"]],
    ["src/lib.rs", ["    #[tokio::test]"], [], ["adds #[test]"]],
    ["src/lib.rs", ['    #[ignore = "slow"]'], [], ["adds #[ignore]"]],
    ["src/lib.rs", [], ["    #[ignore]"], ["removes #[ignore]"]],
    ["src/calc.py", ["@pytest.mark.skip(reason='later')"], [], ["adds @pytest.mark.skip"]],
    ["src/calc.py", ["@pytest.mark.skipif(True, reason='x')"], [], ["adds @pytest.mark.skipif"]],
    ["src/math.js", ['it.only("adds", () => {});'], [], ["adds it.only"]],
    ["src/math.js", ['describe.only("math", () => {});'], [], ["adds describe.only"]],
    ["src/math.js", ['test.skip("adds", () => {});'], [], ["adds test.skip"]],
    ["src/math.js", ['describe.skip("math", () => {});'], [], ["adds describe.skip"]],
    ["pkg/math.go", ['\tt.Skip("flaky")'], [], ["adds t.Skip("]],
    ["src/main.ts", ['Deno.test.ignore("x", () => {});'], [], ["adds Deno.test.ignore"]],
  ];
  for (const [file, added, removed, reasons] of cases) {
    await t.step(`${reasons.join(", ")} in ${file}`, () => {
      assert.deepEqual(
        inlineTestMarkers(patchOf(file, added, removed)),
        new Map([[file, reasons]]),
      );
    });
  }
  const ordinary: Array<[string, string[], string[]]> = [
    ["src/iter.rs", ["    rows.iter().skip(2)"], ["    rows.iter().skip(1)"]],
    ["src/Stream.java", ["  return list.stream().skip(3);"], []],
    ["src/lib.rs", ["    #[test]", "    fn adds() {}"], ["    #[test]", "    fn add() {}"]],
    ["docs/testing.md", ["Run the tests with `deno test`."], []],
  ];
  for (const [file, added, removed] of ordinary) {
    await t.step(`no marker in ${file}: ${added[0]}`, () => {
      assert.deepEqual(inlineTestMarkers(patchOf(file, added, removed)), new Map());
    });
  }
  await t.step("a path git quotes is read back", () => {
    const patch = [
      'diff --git "a/src/t\\303\\251st.rs" "b/src/t\\303\\251st.rs"',
      '--- "a/src/t\\303\\251st.rs"',
      '+++ "b/src/t\\303\\251st.rs"',
      "@@ -1 +1,2 @@",
      "+#[ignore]",
    ].join("\n");
    assert.deepEqual(inlineTestMarkers(patch), new Map([["src/tést.rs", ["adds #[ignore]"]]]));
  });
});

Deno.test("changedProtectedFiles reports added, modified, deleted and renamed files with why", async (t) => {
  const { repo, gitRepo, base } = await project({
    "Makefile": "include config/checks.make\n-include $(wildcard local/*.make)\n\ntest:\n\t@true\n",
    "config/checks.make": "CHECKS = unit\n",
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    "src/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": "def test_add():\n    assert 2 + 2 == 4\n",
    "tests/test_sub.py": "def test_sub():\n    assert 2 - 2 == 0\n",
    "tests/test_old.py": "def test_old():\n    assert True\n",
  });
  await using _ = repo;
  // The agent adds runner configuration, touches a test, hides one, deletes one,
  // adds an ignore to a source file, and adds files that merely look like tests.
  await write(repo.path, {
    "tests/conftest.py": "collect_ignore = ['test_add.py']\n",
    "GNUmakefile": "test:\n\t@echo skipped\n",
    "config/checks.make": "CHECKS =\n",
    "tests/test_sub.py": "def test_sub():\n    assert True\n",
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[test]\n#[ignore]\nfn adds() {}\n",
    "src/calc.py": "def add(a, b):\n    return a - b\n",
    "src/contest.py": "WINNER = 1\n",
    "docs/testing.md": "# Testing\n",
    "latest.js": "export const latest = 1;\n",
  });
  await Deno.remove(join(repo.path, "tests/test_old.py"));
  await Deno.mkdir(join(repo.path, "attic"));
  await git(repo.path, "mv", "tests/test_add.py", "attic/add_check.py");
  const changes = await changedProtectedFiles(gitRepo, base, DEFAULTS);
  const byPath = new Map(changes.map((change) => [change.path, change]));

  await t.step("an added conftest.py and a new GNUmakefile are runner configuration", () => {
    assert.deepEqual(byPath.get("tests/conftest.py"), {
      path: "tests/conftest.py",
      change: "added",
      why: "runner configuration",
    });
    assert.deepEqual(byPath.get("GNUmakefile"), {
      path: "GNUmakefile",
      change: "added",
      why: "not plain source: no extension",
    });
  });

  await t.step("a file the Makefile includes is runner configuration", () => {
    assert.deepEqual(byPath.get("config/checks.make"), {
      path: "config/checks.make",
      change: "modified",
      why: "runner configuration",
    });
  });

  await t.step("a source file of a language the repository does not have is protected", () => {
    assert.deepEqual(byPath.get("latest.js"), {
      path: "latest.js",
      change: "added",
      why: "not plain source: javascript source, a language the repository does not have",
    });
  });

  await t.step("modified, deleted and renamed tests", () => {
    assert.equal(byPath.get("tests/test_sub.py")?.change, "modified");
    assert.equal(byPath.get("tests/test_old.py")?.change, "deleted");
    assert.deepEqual(byPath.get("attic/add_check.py"), {
      path: "attic/add_check.py",
      change: "renamed",
      from: "tests/test_add.py",
      why: "test file",
    });
  });

  await t.step("a source file whose change adds a test and an ignore", () => {
    assert.deepEqual(byPath.get("src/lib.rs"), {
      path: "src/lib.rs",
      change: "modified",
      why: "adds #[test]; adds #[ignore]",
    });
  });

  await t.step("ordinary files are not reported", () => {
    for (const file of ["src/calc.py", "src/contest.py", "docs/testing.md"]) {
      assert.equal(byPath.has(file), false, file);
    }
    assert.equal(changes.length, 8, JSON.stringify(changes));
  });
});

Deno.test("an added GNUmakefile that hides a failing check is refused, declared or not", async () => {
  const { repo, gitRepo, base } = await project({
    "Makefile": "test:\n\t@sh check.sh\n",
    "check.sh": "grep -q fixed status.txt\n",
    "status.txt": "broken\n",
  });
  await using _ = repo;
  const gate = new RepoChecksChecker({
    checks: [{ name: "make test", command: "make test" }],
    timeoutMs: 30_000,
    protect: [...DEFAULT_PROTECTED_GLOBS],
    configFiles: ["Makefile"],
  });
  await gate.startBaseline(gitRepo, base);
  // make reads GNUmakefile before Makefile: the check passes without the fix.
  await write(repo.path, { "GNUmakefile": "test:\n\t@true\n" });
  // Committed: the gate verifies the agent's commits, never the working tree.
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "build: GNUmakefile");
  const context = (declared?: string) =>
    ({
      cwd: repo.path,
      git: { repo: gitRepo, baseline: base },
      completeTask: {
        status: "success",
        original_request_summary: "",
        summary: "",
        ...(declared ? { tests_changed: [{ path: "GNUmakefile", reason: declared }] } : {}),
      },
    }) as never;
  const result = await gate.check(context());
  assert.equal(result.complete, false);
  assert.match(
    result.feedback!,
    /You changed "GNUmakefile" \(added, not plain source: no extension\)/,
  );
  assert.equal(gate.evidence?.originalsPass, false);
  // The check failed at the baseline and fails again without the GNUmakefile: not fixed.
  const declared = await gate.check(context("the build moved to GNU make"));
  assert.equal(declared.complete, false);
  assert.match(
    declared.feedback!,
    /^"make test" failed before your changes and still fails: in their original versions/,
  );
});
