import assert from "node:assert/strict";
import {
  escapeJs,
  escapeRe2,
  escapeRust,
  filterArgs,
  filteredCommand,
  shellQuote,
} from "../../../agents/evidence/run/test_filter.ts";
import { runRepoCheck } from "../../../agents/evidence/run/check_run.ts";
import type { RepoCheck } from "../../../agents/evidence/run/check_run.ts";

/** A reader of the check's folder holding only `files`. */
function folder(files: Record<string, unknown>) {
  return (path: string) => Promise.resolve(path in files ? JSON.stringify(files[path]) : undefined);
}

const NONE = folder({});

Deno.test("each runner's filter names exactly the failed tests, escaped for its patterns", async (t) => {
  const names = ["math > adds (1+1)", "math > a.b*c"];
  await t.step("node: the leaf names, matched alone or at the end of the full name", () => {
    assert.deepEqual(filterArgs("node", names), [
      "--test-name-pattern=(?:^| )(?:adds \\(1\\+1\\)|a\\.b\\*c)$",
    ]);
  });
  await t.step("deno: the top-level names in a /regex/ filter, escaped for Rust", () => {
    assert.deepEqual(filterArgs("deno", ["parent > step", "x|y [z]#"]), [
      "--filter",
      "/^(?:parent|x\\|y \\[z\\]\\#)$/",
    ]);
  });
  await t.step("pytest: node ids as arguments", () => {
    assert.deepEqual(filterArgs("pytest", ["tests/test_a.py::test_x[1-2]", "t.py::K::m"]), [
      "tests/test_a.py::test_x[1-2]",
      "t.py::K::m",
    ]);
  });
  await t.step("go: top-level tests in an anchored -run", () => {
    assert.deepEqual(filterArgs("go", ["TestA/sub case", "TestB", "TestA/other"]), [
      "-run",
      "^(?:TestA|TestB)$",
    ]);
  });
  await t.step("cargo: exact names after the test binary's --exact", () => {
    assert.deepEqual(filterArgs("cargo", ["tests::adds", "test_display"]), [
      "--exact",
      "tests::adds",
      "test_display",
    ]);
  });
  await t.step("jest, vitest, mocha: the full title, describe blocks spaced, anchored", () => {
    const pattern = "^(?:math adds \\(1\\+1\\)|math a\\.b\\*c)$";
    assert.deepEqual(filterArgs("jest", names), ["-t", pattern]);
    assert.deepEqual(filterArgs("vitest", names), ["-t", pattern]);
    assert.deepEqual(filterArgs("mocha", names), ["--grep", pattern]);
  });
  await t.step("names a filter cannot address leave the check whole", () => {
    assert.match(
      (filterArgs("pytest", ["--co"]) as { why: string }).why,
      /starts with "-"/,
    );
    assert.match((filterArgs("cargo", ["-q"]) as { why: string }).why, /starts with "-"/);
    assert.match(
      (filterArgs("pytest", ["test_add"]) as { why: string }).why,
      /not a pytest node id/,
    );
    assert.match((filterArgs("jest", ["a\nb"]) as { why: string }).why, /spans lines/);
    assert.match((filterArgs("node", []) as { why: string }).why, /no test/);
  });
  await t.step("escaping: every metacharacter of each flavour is literal", () => {
    const text = "a.b*c+d?e(f)g[h]i{j}k|l^m$n\\o";
    for (const escape of [escapeJs, escapeRe2, escapeRust]) {
      // JavaScript reads all three the same way for these characters.
      assert.ok(new RegExp(`^${escape(text)}$`).test(text), escape.name);
      assert.ok(!new RegExp(`^${escape(text)}$`).test("aXb*c+d?e(f)g[h]i{j}k|l^m$n\\o"));
    }
    assert.equal(escapeRust("#&~-"), "\\#\\&\\~\\-");
    assert.equal(shellQuote("it's $(touch x)"), `'it'\\''s $(touch x)'`);
    assert.equal(shellQuote("tests/a.py::t"), "tests/a.py::t");
  });
});

Deno.test("the filter reaches the runner through the check's own command", async (t) => {
  const check = (command: string, runner: RepoCheck["runner"]): RepoCheck => ({
    name: command,
    command,
    runner,
  });
  const command = async (c: RepoCheck, names: string[], read = NONE) => {
    const filtered = await filteredCommand(c, names, { read });
    return "command" in filtered ? filtered.command : `(${filtered.why})`;
  };
  await t.step(
    "a runner's own command: the filter is added where the runner reads it",
    async () => {
      assert.equal(
        await command(check("node --test test/", "node"), ["adds"]),
        "node --test '--test-name-pattern=(?:^| )(?:adds)$' test/",
      );
      assert.equal(
        await command(check("deno test -A", "deno"), ["adds"]),
        "deno test -A --filter '/^(?:adds)$/'",
      );
      assert.equal(
        await command(check("python3 -m pytest", "pytest"), ["t/test_a.py::test_x[a b]"]),
        "python3 -m pytest 't/test_a.py::test_x[a b]'",
      );
      assert.equal(
        await command(check("go test ./...", "go"), ["TestA"]),
        "go test ./... -run '^(?:TestA)$'",
      );
      assert.equal(
        await command(check("cargo test", "cargo"), ["tests::adds"]),
        "cargo test -- --exact tests::adds",
      );
      assert.equal(
        await command(check("cargo test -- --nocapture", "cargo"), ["adds"]),
        "cargo test -- --nocapture --exact adds",
      );
      assert.equal(
        await command(check("CI=1 npx jest --coverage", "jest"), ["a > b"]),
        "CI=1 npx jest --coverage -t '^(?:a b)$'",
      );
    },
  );
  await t.step("in a module's folder, as detection writes it: after the cd", async () => {
    assert.equal(
      await command(check("cd v4 && go test ./...", "go"), ["TestCompare"]),
      "cd v4 && go test ./... -run '^(?:TestCompare)$'",
    );
    assert.equal(
      await command(check('cd "my crate" && cargo test', "cargo"), ["adds"]),
      `cd "my crate" && cargo test -- --exact adds`,
    );
    const pkg = folder({ "package.json": { scripts: { test: "jest" } } });
    assert.match(await command(check("cd web && npm test", "jest"), ["a"], pkg), /not/);
    assert.match(
      await command(check("cd v4 && go test ./... && go vet ./...", "go"), ["TestA"]),
      /not/,
    );
  });
  await t.step(
    "a package script of one runner command: passed on through the manager",
    async () => {
      const pkg = folder({
        "package.json": {
          scripts: { test: "WARN_EXIT=1 jest --coverage -w 2", unit: "mocha test/*.js" },
        },
      });
      assert.equal(
        await command(check("npm test", "jest"), ["adds"], pkg),
        "npm test -- -t '^(?:adds)$'",
      );
      assert.equal(
        await command(check("pnpm test", "jest"), ["adds"], pkg),
        "pnpm run test -t '^(?:adds)$'",
      );
      assert.equal(
        await command(check("yarn run unit", "mocha"), ["s > adds"], pkg),
        "yarn run unit --grep '^(?:s adds)$'",
      );
      const deno = folder({ "deno.json": { tasks: { test: { command: "deno test -A" } } } });
      assert.equal(
        await command(check("deno task test", "deno"), ["adds"], deno),
        "deno task test --filter '/^(?:adds)$/'",
      );
    },
  );
  await t.step("anything the filter might not reach is not narrowed", async () => {
    const pkg = folder({
      "package.json": {
        scripts: {
          test: "jest && npm run lint",
          node: "node --test test/",
          nodeAll: "node --test",
          passed: "vitest run -- x",
        },
      },
    });
    assert.match(await command(check("npm test", "jest"), ["a"], pkg), /is not one jest command/);
    assert.match(
      await command(check("npm run node", "node"), ["a"], pkg),
      /options only before its files/,
    );
    assert.equal(
      await command(check("npm run nodeAll", "node"), ["a"], pkg),
      "npm run nodeAll -- '--test-name-pattern=(?:^| )(?:a)$'",
    );
    assert.match(await command(check("npm run passed", "vitest"), ["a"], pkg), /with --/);
    assert.match(await command(check("npm test -w packages/a", "jest"), ["a"], pkg), /not/);
    assert.match(await command(check("make test", "pytest"), ["t.py::a"]), /not/);
    assert.match(await command(check("npm test", undefined), ["a"], pkg), /runner is not known/);
    assert.match(await command(check("npm test", "jest"), ["a"]), /no script "test"/);
    assert.match(await command(check("pytest | tee log", "pytest"), ["t.py::a"]), /not/);
  });
});

Deno.test("real runners run only the named tests, and a name cannot reach the shell", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "finishline-filter-" });
  try {
    const evil = `it's $(touch pwned) \`touch pwned\` "q"`;
    await t.step("node --test", async () => {
      await Deno.writeTextFile(
        `${dir}/math.test.mjs`,
        [
          `import test, { describe } from "node:test";`,
          `describe("math", () => {`,
          `  test("adds (1+1)", () => { throw new Error("no"); });`,
          `  test("adds 1+1", () => { throw new Error("not this one"); });`,
          `  test(${JSON.stringify(evil)}, () => { throw new Error("evil"); });`,
          `  test("subtracts", () => {});`,
          `});`,
        ].join("\n"),
      );
      const check: RepoCheck = { name: "node", command: "node --test", runner: "node" };
      const full = await runRepoCheck(check, { cwd: dir, timeoutMs: 60_000 });
      assert.deepEqual(full.failing, ["math > adds (1+1)", "math > adds 1+1", `math > ${evil}`]);
      const filtered = await filteredCommand(check, ["math > adds (1+1)", `math > ${evil}`], {
        read: NONE,
      });
      assert.ok("command" in filtered);
      const run = await runRepoCheck({ ...check, command: filtered.command }, {
        cwd: dir,
        timeoutMs: 60_000,
      });
      assert.deepEqual(run.failing, ["math > adds (1+1)", `math > ${evil}`]);
      assert.equal(run.counts?.run, 2);
      assert.equal(await Deno.stat(`${dir}/pwned`).then(() => true, () => false), false);
      const none = await filteredCommand(check, ["math > gone"], { read: NONE });
      assert.ok("command" in none);
      const empty = await runRepoCheck({ ...check, command: none.command }, {
        cwd: dir,
        timeoutMs: 60_000,
      });
      assert.equal(empty.counts?.run, 0, "a filter that matches nothing runs nothing");
      await Deno.remove(`${dir}/math.test.mjs`);
    });
    await t.step("deno test", async () => {
      await Deno.writeTextFile(
        `${dir}/math_test.ts`,
        [
          `Deno.test("adds (1+1) #&~", () => { throw new Error("no"); });`,
          `Deno.test("adds (1+1) #&~ too", () => { throw new Error("not this one"); });`,
          `Deno.test("parent", async (t) => { await t.step("step [x]", () => { throw new Error("s"); }); });`,
          `Deno.test("subtracts", () => {});`,
        ].join("\n"),
      );
      const check: RepoCheck = { name: "deno", command: "deno test -A", runner: "deno" };
      const full = await runRepoCheck(check, { cwd: dir, timeoutMs: 60_000 });
      assert.deepEqual(full.failing, ["adds (1+1) #&~", "adds (1+1) #&~ too", "parent > step [x]"]);
      const filtered = await filteredCommand(check, ["adds (1+1) #&~", "parent > step [x]"], {
        read: NONE,
      });
      assert.ok("command" in filtered);
      const run = await runRepoCheck({ ...check, command: filtered.command }, {
        cwd: dir,
        timeoutMs: 60_000,
      });
      assert.deepEqual(run.failing, ["adds (1+1) #&~", "parent > step [x]"]);
      assert.equal(run.counts?.run, 2);
      await Deno.remove(`${dir}/math_test.ts`);
    });
    const pytest = await new Deno.Command("python3", { args: ["-m", "pytest", "--version"] })
      .output().then((out) => out.success, () => false);
    await t.step({
      name: "pytest",
      ignore: !pytest,
      fn: async () => {
        await Deno.writeTextFile(
          `${dir}/test_math.py`,
          [
            "import pytest",
            "@pytest.mark.parametrize('n', ['a b', \"it's $(touch pwned)\"])",
            "def test_adds(n):",
            "    assert False",
            "def test_adds_too():",
            "    assert False",
            "def test_subtracts():",
            "    pass",
          ].join("\n"),
        );
        const check: RepoCheck = {
          name: "pytest",
          command: "python3 -m pytest -p no:cacheprovider",
          runner: "pytest",
        };
        const full = await runRepoCheck(check, { cwd: dir, timeoutMs: 60_000 });
        assert.equal(full.failing.length, 3);
        const named = full.failing.filter((name) => name.includes("test_adds["));
        const filtered = await filteredCommand(check, named, { read: NONE });
        assert.ok("command" in filtered);
        const run = await runRepoCheck({ ...check, command: filtered.command }, {
          cwd: dir,
          timeoutMs: 60_000,
        });
        assert.deepEqual(run.failing, named);
        assert.equal(run.counts?.run, 2);
        assert.equal(await Deno.stat(`${dir}/pwned`).then(() => true, () => false), false);
      },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
