import assert from "node:assert/strict";
import { join } from "node:path";
import {
  detectChecks,
  type DetectedCheck,
  formatDetection,
} from "../../../agents/evidence/detect/detect.ts";
import { tempDir } from "../../_helpers.ts";
import { detectIn, repo } from "./_detect_helpers.ts";

const NPM_WHY = "package-lock.json names npm";

function npmScript(
  script: string,
  kind: DetectedCheck["kind"],
  reason = NPM_WHY,
  manager = "npm",
): DetectedCheck {
  const command = script === "test" && manager !== "bun"
    ? `${manager} test`
    : `${manager} run ${script}`;
  return {
    name: command,
    command,
    source: `package.json scripts.${script}`,
    why: `package.json has scripts.${script}; ${reason}`,
    executable: manager,
    kind,
  };
}

Deno.test("an empty folder yields no checks, hints, skips or config files", async (t) => {
  await t.step("nothing is detected", async () => {
    assert.deepEqual(await detectIn({}), { checks: [], hints: [], skipped: [], configFiles: [] });
  });

  await t.step("its report says no checks were found", async () => {
    assert.equal(formatDetection(await detectIn({})), "No checks found");
  });

  await t.step("unrelated files are not candidates", async () => {
    assert.deepEqual(await detectIn({ "README.md": "# demo\n", "src/main.py": "print(1)\n" }), {
      checks: [],
      hints: [],
      skipped: [],
      configFiles: [],
    });
  });

  await t.step("a missing root is an error naming it", async () => {
    await using dir = await tempDir();
    const missing = join(dir.path, "nope");
    await assert.rejects(() => detectChecks(missing), {
      name: "NotFound",
      message: `Cannot detect checks in "${missing}": no such folder`,
    });
  });
});

Deno.test("deno.json tasks become deno task checks, test then check then lint", async (t) => {
  await t.step("test, check and lint tasks in any order come out in kind order", async () => {
    const detection = await detectIn({
      "deno.json": JSON.stringify({
        tasks: { lint: "deno lint", fmt: "deno fmt", check: "deno check .", test: "deno test -A" },
      }),
    });
    assert.deepEqual(detection, {
      checks: [
        {
          name: "deno task test",
          command: "deno task test",
          source: "deno.json tasks.test",
          why: "deno.json has tasks.test",
          executable: "deno",
          runner: "deno",
          kind: "test",
        },
        {
          name: "deno task check",
          command: "deno task check",
          source: "deno.json tasks.check",
          why: "deno.json has tasks.check",
          executable: "deno",
          kind: "typecheck",
        },
        {
          name: "deno task lint",
          command: "deno task lint",
          source: "deno.json tasks.lint",
          why: "deno.json has tasks.lint",
          executable: "deno",
          kind: "lint",
        },
      ],
      hints: [],
      skipped: [],
      configFiles: ["deno.json"],
    });
  });

  await t.step("deno.jsonc with comments, trailing commas and object tasks is read", async () => {
    const detection = await detectIn({
      "deno.jsonc": `{
        // the gate
        "tasks": {
          "test": { "command": "deno test --allow-read", "description": "unit tests" },
        },
      }`,
    });
    assert.deepEqual(detection.checks, [{
      name: "deno task test",
      command: "deno task test",
      source: "deno.jsonc tasks.test",
      why: "deno.jsonc has tasks.test",
      executable: "deno",
      runner: "deno",
      kind: "test",
    }]);
    assert.deepEqual(detection.configFiles, ["deno.jsonc"]);
  });

  await t.step("a test task that does not run deno test has no runner", async () => {
    const detection = await detectIn({ "deno.json": '{ "tasks": { "test": "./run-tests.sh" } }' });
    assert.deepEqual(detection.checks, [{
      name: "deno task test",
      command: "deno task test",
      source: "deno.json tasks.test",
      why: "deno.json has tasks.test",
      executable: "deno",
      kind: "test",
    }]);
  });

  await t.step("deno.json without a test, check or lint task is skipped", async () => {
    assert.deepEqual(
      await detectIn({ "deno.json": '{ "tasks": { "dev": "deno run main.ts" } }' }),
      {
        checks: [],
        hints: [],
        skipped: [{ source: "deno.json", why: 'no "test", "check" or "lint" task' }],
        configFiles: [],
      },
    );
    assert.deepEqual((await detectIn({ "deno.json": '{ "imports": {} }' })).skipped, [
      { source: "deno.json", why: 'no "test", "check" or "lint" task' },
    ]);
  });

  await t.step("deno.json takes precedence over deno.jsonc", async () => {
    const detection = await detectIn({
      "deno.json": '{ "tasks": { "lint": "deno lint" } }',
      "deno.jsonc": '{ "tasks": { "test": "deno test" } }',
    });
    assert.deepEqual(detection.checks.map((found) => found.source), ["deno.json tasks.lint"]);
    assert.deepEqual(detection.skipped, [
      { source: "deno.jsonc", why: "deno.json takes precedence" },
    ]);
    assert.deepEqual(detection.configFiles, ["deno.json"]);
  });

  await t.step("a task that is neither a string nor an object is skipped", async () => {
    const detection = await detectIn({ "deno.json": '{ "tasks": { "test": 3, "lint": "x" } }' });
    assert.deepEqual(detection.checks.map((found) => found.command), ["deno task lint"]);
    assert.deepEqual(detection.skipped, [
      { source: "deno.json tasks.test", why: "the task is neither a string nor an object" },
    ]);
  });
});

Deno.test("package.json scripts run with the package manager its lock file names", async (t) => {
  const scripts = JSON.stringify({
    name: "demo",
    scripts: { build: "tsc -b", lint: "eslint .", typecheck: "tsc --noEmit", test: "jest" },
  });

  await t.step("package-lock.json names npm; test, typecheck, lint in that order", async () => {
    const detection = await detectIn({ "package.json": scripts, "package-lock.json": "{}" });
    assert.deepEqual(detection, {
      checks: [
        { ...npmScript("test", "test"), runner: "jest" },
        npmScript("typecheck", "typecheck"),
        npmScript("lint", "lint"),
      ],
      hints: [],
      skipped: [],
      configFiles: ["package.json"],
    });
  });

  const locks: Array<[string, string, string[]]> = [
    ["npm-shrinkwrap.json", "npm", ["npm test", "npm run typecheck", "npm run lint"]],
    ["pnpm-lock.yaml", "pnpm", ["pnpm test", "pnpm run typecheck", "pnpm run lint"]],
    ["yarn.lock", "yarn", ["yarn test", "yarn run typecheck", "yarn run lint"]],
    ["bun.lock", "bun", ["bun run test", "bun run typecheck", "bun run lint"]],
    ["bun.lockb", "bun", ["bun run test", "bun run typecheck", "bun run lint"]],
  ];
  for (const [lock, manager, commands] of locks) {
    await t.step(`${lock} names ${manager}`, async () => {
      const detection = await detectIn({ "package.json": scripts, [lock]: "" });
      const reason = `${lock} names ${manager}`;
      assert.deepEqual(detection.checks, [
        { ...npmScript("test", "test", reason, manager), runner: "jest" },
        npmScript("typecheck", "typecheck", reason, manager),
        npmScript("lint", "lint", reason, manager),
      ]);
      assert.deepEqual(detection.checks.map((found) => found.command), commands);
    });
  }

  await t.step("packageManager names the manager when there is no lock file", async () => {
    const detection = await detectIn({
      "package.json": '{ "packageManager": "pnpm@9.1.0", "scripts": { "test": "vitest run" } }',
    });
    assert.deepEqual(detection.checks, [{
      name: "pnpm test",
      command: "pnpm test",
      source: "package.json scripts.test",
      why: 'package.json has scripts.test; packageManager "pnpm@9.1.0" names pnpm',
      executable: "pnpm",
      runner: "vitest",
      kind: "test",
    }]);
  });

  await t.step("with neither lock file nor packageManager, npm is the default", async () => {
    const detection = await detectIn({ "package.json": '{ "scripts": { "lint": "eslint ." } }' });
    assert.deepEqual(detection.checks, [
      npmScript("lint", "lint", "no lock file; npm by default"),
    ]);
  });

  await t.step("an unknown packageManager falls back to npm and says so", async () => {
    const detection = await detectIn({
      "package.json": '{ "packageManager": "deno@2.0.0", "scripts": { "lint": "eslint ." } }',
    });
    assert.deepEqual(detection.checks, [
      npmScript(
        "lint",
        "lint",
        'packageManager "deno@2.0.0" is not npm, pnpm, yarn or bun; npm by default',
      ),
    ]);
  });

  await t.step("a lock file wins over packageManager", async () => {
    const detection = await detectIn({
      "package.json": '{ "packageManager": "pnpm@9.1.0", "scripts": { "lint": "eslint ." } }',
      "yarn.lock": "",
    });
    assert.deepEqual(detection.checks.map((found) => found.command), ["yarn run lint"]);
  });

  await t.step("with several lock files, the one packageManager agrees with wins", async () => {
    const detection = await detectIn({
      "package.json": '{ "packageManager": "yarn@4.1.0", "scripts": { "lint": "eslint ." } }',
      "package-lock.json": "{}",
      "yarn.lock": "",
    });
    assert.deepEqual(detection.checks, [
      npmScript("lint", "lint", "yarn.lock names yarn (package-lock.json ignored)", "yarn"),
    ]);
  });

  await t.step("with several lock files and no packageManager, npm's lock wins", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "lint": "eslint ." } }',
      "pnpm-lock.yaml": "",
      "package-lock.json": "{}",
    });
    assert.deepEqual(detection.checks, [
      npmScript("lint", "lint", "package-lock.json names npm (pnpm-lock.yaml ignored)"),
    ]);
  });

  await t.step("scripts other than test, typecheck and lint are ignored", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "type-check": "tsc", "build": "tsc", "start": "node ." } }',
    });
    assert.deepEqual(detection, {
      checks: [],
      hints: [],
      skipped: [{ source: "package.json", why: 'no "test", "typecheck" or "lint" script' }],
      configFiles: [],
    });
  });

  await t.step("jest and vitest configs are config files when a test script exists", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "test": "vitest run" } }',
      "vitest.config.ts": "export default {};\n",
      "jest.config.js": "module.exports = {};\n",
      "vite.config.ts": "export default {};\n",
    });
    assert.deepEqual(detection.configFiles, ["package.json", "jest.config.js", "vitest.config.ts"]);
    const lintOnly = await detectIn({
      "package.json": '{ "scripts": { "lint": "eslint ." } }',
      "jest.config.js": "module.exports = {};\n",
    });
    assert.deepEqual(lintOnly.configFiles, ["package.json"]);
  });

  await t.step("a package.json in a subfolder is not examined", async () => {
    assert.deepEqual(
      await detectIn({ "web/package.json": '{ "scripts": { "test": "jest" } }' }),
      { checks: [], hints: [], skipped: [], configFiles: [] },
    );
  });
});

Deno.test("npm's placeholder test script is skipped, not run", async (t) => {
  await t.step("the default npm init script is recorded in skipped", async () => {
    const placeholder = 'echo "Error: no test specified" && exit 1';
    const detection = await detectIn({
      "package.json": JSON.stringify({ scripts: { test: placeholder, lint: "eslint ." } }),
      "package-lock.json": "{}",
    });
    assert.deepEqual(detection, {
      checks: [npmScript("lint", "lint")],
      hints: [],
      skipped: [{
        source: "package.json scripts.test",
        why: `npm's placeholder test script: ${JSON.stringify(placeholder)}`,
      }],
      configFiles: ["package.json"],
    });
  });

  await t.step("a variant of the placeholder is matched loosely", async () => {
    const detection = await detectIn({
      "package.json": JSON.stringify({
        scripts: { test: 'echo \\"Error: no test specified\\"; exit 1' },
      }),
    });
    assert.deepEqual(detection.checks, []);
    assert.equal(detection.skipped.length, 1);
    assert.equal(detection.skipped[0].source, "package.json scripts.test");
    assert.match(detection.skipped[0].why, /^npm's placeholder test script: /);
    assert.deepEqual(detection.configFiles, []);
  });

  await t.step("a real script that mentions exit 1 is kept", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "test": "node --test || exit 1" } }',
    });
    assert.deepEqual(detection.checks, [{
      ...npmScript("test", "test", "no lock file; npm by default"),
      runner: "node",
    }]);
  });

  await t.step("empty and non-string scripts are skipped with their reason", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "test": "  ", "lint": ["eslint"] } }',
    });
    assert.deepEqual(detection.checks, []);
    assert.deepEqual(detection.skipped, [
      { source: "package.json scripts.test", why: "the script is empty" },
      { source: "package.json scripts.lint", why: "the script is not a string" },
    ]);
  });
});

Deno.test("the test runner is told from the script text", async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ["node --test", "node"],
    ["node --experimental-strip-types --test test/", "node"],
    ["tsc && node --import tsx --test", "node"],
    ["node --test-reporter=spec index.js", undefined],
    ["deno test -A", "deno"],
    ["jest --ci", "jest"],
    ["./node_modules/.bin/jest", "jest"],
    ["vitest run", "vitest"],
    ["python -m pytest -q", "pytest"],
    ["go test ./...", "go"],
    ["cargo +nightly test", "cargo"],
    ["bun test", undefined],
    ["mocha", "mocha"],
    ["ava", undefined],
    ["jest && vitest run", undefined],
  ];
  for (const [script, runner] of cases) {
    await t.step(`${JSON.stringify(script)} -> ${runner ?? "none"}`, async () => {
      const detection = await detectIn({
        "package.json": JSON.stringify({ scripts: { test: script } }),
      });
      assert.equal(detection.checks.length, 1);
      assert.equal(detection.checks[0].runner, runner);
      assert.equal("runner" in detection.checks[0], runner !== undefined);
    });
  }

  await t.step("lint and typecheck checks never have a runner", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": { "lint": "jest --listTests", "typecheck": "deno test" } }',
    });
    assert.deepEqual(detection.checks.map((found) => "runner" in found), [false, false]);
  });
});

Deno.test("a Makefile's test target becomes make test", async (t) => {
  await t.step("a test target is detected, with the runner its recipe starts", async () => {
    const detection = await detectIn({
      "Makefile":
        ".PHONY: build test\nbuild:\n\tgo build ./...\n\ntest: build\n\tgo test -race ./...\n",
    });
    assert.deepEqual(detection, {
      checks: [{
        name: "make test",
        command: "make test",
        source: 'Makefile target "test"',
        why: 'Makefile has a "test" target',
        executable: "make",
        runner: "go",
        kind: "test",
      }],
      hints: [],
      skipped: [],
      configFiles: ["Makefile"],
    });
  });

  await t.step("a recipe with no known runner gives a check without runner", async () => {
    const detection = await detectIn({ "makefile": "test:\n\t./scripts/test.sh\n" });
    assert.deepEqual(detection.checks, [{
      name: "make test",
      command: "make test",
      source: 'makefile target "test"',
      why: 'makefile has a "test" target',
      executable: "make",
      kind: "test",
    }]);
    assert.deepEqual(detection.configFiles, ["makefile"]);
  });

  await t.step("a test target among several targets of a rule is found", async () => {
    const detection = await detectIn({ "GNUmakefile": "check test: ; cargo test\n" });
    assert.deepEqual(detection.checks.map((found) => [found.source, found.runner]), [
      ['GNUmakefile target "test"', "cargo"],
    ]);
  });

  await t.step("a Makefile without a test target is skipped", async () => {
    assert.deepEqual(
      await detectIn({ "Makefile": "TEST := 1\ntest := yes\ntest_all:\n\techo\ntests:\n\techo\n" }),
      {
        checks: [],
        hints: [],
        skipped: [{ source: "Makefile", why: 'no "test" target' }],
        configFiles: [],
      },
    );
  });
});

Deno.test("Python projects run pytest, or tox or nox when configured", async (t) => {
  const pytest = (source: string, why: string): DetectedCheck => ({
    name: "pytest",
    command: "python3 -m pytest",
    source,
    why,
    executable: "python3",
    runner: "pytest",
    kind: "test",
  });

  await t.step("pytest.ini", async () => {
    assert.deepEqual(await detectIn({ "pytest.ini": "[pytest]\naddopts = -q\n" }), {
      checks: [pytest("pytest.ini", "pytest.ini configures pytest")],
      hints: [],
      skipped: [],
      configFiles: ["pytest.ini"],
    });
  });

  await t.step("pyproject.toml [tool.pytest.ini_options]", async () => {
    const detection = await detectIn({
      "pyproject.toml": '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
    });
    assert.deepEqual(detection.checks, [
      pytest(
        "pyproject.toml [tool.pytest.ini_options]",
        "pyproject.toml [tool.pytest.ini_options] configures pytest",
      ),
    ]);
    assert.deepEqual(detection.configFiles, ["pyproject.toml"]);
  });

  await t.step("setup.cfg [tool:pytest]", async () => {
    const detection = await detectIn({ "setup.cfg": "[metadata]\nname = demo\n[tool:pytest]\n" });
    assert.deepEqual(detection.checks, [
      pytest("setup.cfg [tool:pytest]", "setup.cfg [tool:pytest] configures pytest"),
    ]);
    assert.deepEqual(detection.configFiles, ["setup.cfg"]);
  });

  await t.step("conftest.py at the root", async () => {
    const detection = await detectIn({ "conftest.py": "" });
    assert.deepEqual(detection.checks, [pytest("conftest.py", "conftest.py is at the root")]);
    assert.deepEqual(detection.configFiles, ["conftest.py"]);
  });

  await t.step("pyproject.toml and setup.cfg without pytest sections give nothing", async () => {
    assert.deepEqual(
      await detectIn({
        "pyproject.toml": '[project]\nname = "demo"\n# [tool.pytest.ini_options] later\n',
        "setup.cfg": "[metadata]\nname = demo\n",
      }),
      { checks: [], hints: [], skipped: [], configFiles: [] },
    );
  });

  await t.step("nox is used instead of pytest", async () => {
    const detection = await detectIn({
      "noxfile.py": "import nox\n",
      "pyproject.toml": "[tool.pytest.ini_options]\n",
    });
    assert.deepEqual(detection, {
      checks: [{
        name: "nox",
        command: "nox",
        source: "noxfile.py",
        why: "noxfile.py configures nox; nox runs pytest in its environments",
        executable: "nox",
        kind: "test",
      }],
      hints: [],
      skipped: [{
        source: "pyproject.toml [tool.pytest.ini_options]",
        why: "nox runs pytest, so pytest is not run directly",
      }],
      configFiles: ["noxfile.py", "pyproject.toml"],
    });
  });

  await t.step("a tox.ini that only configures other tools is not tox", async () => {
    const detection = await detectIn({ "tox.ini": "[flake8]\nmax-line-length = 100\n" });
    assert.deepEqual(detection, {
      checks: [],
      hints: [],
      skipped: [{ source: "tox.ini", why: "no [tox] or [testenv] section" }],
      configFiles: [],
    });
  });

  await t.step("a tox.ini [pytest] section alone means pytest", async () => {
    const detection = await detectIn({ "tox.ini": "[pytest]\naddopts = -q\n" });
    assert.deepEqual(detection.checks, [
      pytest("tox.ini [pytest]", "tox.ini [pytest] configures pytest"),
    ]);
    assert.deepEqual(detection.skipped, [
      { source: "tox.ini", why: "no [tox] or [testenv] section" },
    ]);
    assert.deepEqual(detection.configFiles, ["tox.ini"]);
  });
});

Deno.test("Cargo.toml and go.mod run the language's own test command", async (t) => {
  await t.step("Cargo.toml gives cargo test", async () => {
    assert.deepEqual(await detectIn({ "Cargo.toml": '[package]\nname = "demo"\n' }), {
      checks: [{
        name: "cargo test",
        command: "cargo test",
        source: "Cargo.toml",
        why: "Cargo.toml is at the root",
        executable: "cargo",
        runner: "cargo",
        kind: "test",
      }],
      hints: [],
      skipped: [],
      configFiles: ["Cargo.toml"],
    });
  });

  await t.step("go.mod gives go test ./...", async () => {
    assert.deepEqual(await detectIn({ "go.mod": "module example.com/demo\n\ngo 1.22\n" }), {
      checks: [{
        name: "go test ./...",
        command: "go test ./...",
        source: "go.mod",
        why: "go.mod is at the root",
        executable: "go",
        runner: "go",
        kind: "test",
      }],
      hints: [],
      skipped: [],
      configFiles: ["go.mod"],
    });
  });
});

Deno.test("checks from several sources come in the order deno, package.json, Makefile, Python, Cargo, Go", async () => {
  const detection = await detectIn({
    "go.mod": "module example.com/demo\n",
    "Cargo.toml": "[package]\n",
    "pytest.ini": "[pytest]\n",
    "Makefile": "test:\n\techo ok\n",
    "package.json": '{ "scripts": { "test": "jest" } }',
    "bun.lock": "",
    "deno.json": '{ "tasks": { "lint": "deno lint" } }',
  });
  assert.deepEqual(detection.checks.map((found) => [found.name, found.kind, found.executable]), [
    ["deno task lint", "lint", "deno"],
    ["bun run test", "test", "bun"],
    ["make test", "test", "make"],
    ["pytest", "test", "python3"],
    ["cargo test", "test", "cargo"],
    ["go test ./...", "test", "go"],
  ]);
  assert.deepEqual(detection.configFiles, [
    "deno.json",
    "package.json",
    "Makefile",
    "pytest.ini",
    "Cargo.toml",
    "go.mod",
  ]);
  assert.deepEqual(detection.skipped, []);
});

Deno.test("malformed files are recorded in skipped, never thrown", async (t) => {
  await t.step("a package.json with a syntax error names the line and column", async () => {
    assert.deepEqual(
      await detectIn({ "package.json": '{\n  "scripts": { "test": "jest", }\n}\n' }),
      {
        checks: [],
        hints: [],
        skipped: [{
          source: "package.json",
          why: "invalid JSON: line 2, column 32: property name expected",
        }],
        configFiles: [],
      },
    );
  });

  await t.step("package.json is strict JSON: comments are an error", async () => {
    const detection = await detectIn({
      "package.json": '// scripts\n{ "scripts": { "test": "jest" } }',
    });
    assert.deepEqual(detection.skipped, [{
      source: "package.json",
      why: "invalid JSON: line 1, column 1: invalid comment token",
    }]);
  });

  await t.step("a truncated deno.json is reported as such", async () => {
    const detection = await detectIn({ "deno.json": '{ "tasks": { "test": ' });
    assert.deepEqual(detection.skipped, [{
      source: "deno.json",
      why: "invalid JSONC: line 1, column 22: unexpected end of file, value expected",
    }]);
    assert.deepEqual(detection.checks, []);
  });

  await t.step("a top level that is not an object is skipped", async () => {
    const detection = await detectIn({ "package.json": "[]", "deno.json": '"tasks"' });
    assert.deepEqual(detection.skipped, [
      { source: "deno.json", why: "the top level is not an object" },
      { source: "package.json", why: "the top level is not an object" },
    ]);
  });

  await t.step("scripts and tasks that are not objects are skipped", async () => {
    const detection = await detectIn({
      "package.json": '{ "scripts": ["test"] }',
      "deno.json": '{ "tasks": "test" }',
    });
    assert.deepEqual(detection.skipped, [
      { source: "deno.json", why: '"tasks" is not an object' },
      { source: "package.json", why: '"scripts" is not an object' },
    ]);
  });

  await t.step("other sources are still detected next to a malformed file", async () => {
    const detection = await detectIn({ "package.json": "{", "go.mod": "module x\n" });
    assert.deepEqual(detection.checks.map((found) => found.command), ["go test ./..."]);
    assert.deepEqual(detection.configFiles, ["go.mod"]);
    assert.equal(detection.skipped.length, 1);
  });

  await t.step("an unreadable candidate is skipped with the read error", async () => {
    await using dir = await repo({});
    // A dangling symlink is listed as a file but cannot be read.
    await Deno.symlink(join(dir.path, "missing.json"), join(dir.path, "package.json"));
    const detection = await detectChecks(dir.path);
    assert.deepEqual(detection.checks, []);
    assert.equal(detection.skipped.length, 1);
    assert.equal(detection.skipped[0].source, "package.json");
    assert.match(detection.skipped[0].why, /^cannot read it: /);
  });
});

Deno.test("formatDetection prints the checks, the CI commands not run, and the skipped", async (t) => {
  await t.step("a detected repository reads as checks with reasons, hints and skips", async () => {
    const detection = await detectIn({
      "package.json": JSON.stringify({
        scripts: { test: 'echo "Error: no test specified" && exit 1', lint: "eslint ." },
      }),
      "pnpm-lock.yaml": "",
      "pytest.ini": "[pytest]\n",
      "Makefile": "all:\n\techo\n",
      ".github/workflows/ci.yml": "on: [push]\njobs:\n  ci:\n    steps:\n" +
        "      - name: Install\n        run: pnpm install\n" +
        "      - name: Smoke\n        run: ./smoke.sh\n",
    });
    assert.equal(
      formatDetection(detection),
      [
        "Checks, in the order they run:",
        "  pnpm run lint  (package.json has scripts.lint; pnpm-lock.yaml names pnpm)",
        "  pytest: python3 -m pytest  (pytest.ini configures pytest)",
        "CI commands not run:",
        '  ./smoke.sh  (.github/workflows/ci.yml, job "ci", step "Smoke": smoke.sh is not a package manager, make, cargo, go, deno or a Python test runner; the job runs ./smoke.sh, which is not a file of the repository)',
        "Skipped:",
        "  package.json scripts.test  " +
        `(npm's placeholder test script: "echo \\"Error: no test specified\\" && exit 1")`,
        '  Makefile  (no "test" target)',
        '  .github/workflows/ci.yml job "ci" step "Install"  ("pnpm install" is setup (it installs or prepares), not a check)',
      ].join("\n"),
    );
  });

  await t.step("without checks the first line says so, and hints still follow", () => {
    assert.equal(
      formatDetection({
        checks: [],
        hints: [{ file: ".github/workflows/ci.yml", job: "a", step: "b", run: "make ci" }],
        skipped: [],
        configFiles: [],
      }),
      'No checks found\nCI commands not run:\n  make ci  (.github/workflows/ci.yml, job "a", step "b")',
    );
  });
});
