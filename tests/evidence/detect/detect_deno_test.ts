// A Deno project's checks from deno.json and CI, run with the real deno; a
// project whose jsr: imports cannot be had is listed as "could not run",
// never as a red check the agent must fix.

import assert from "node:assert/strict";
import { detectChecks, formatDetection } from "../../../agents/evidence/detect/detect.ts";
import { runRepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { filteredCommand } from "../../../agents/evidence/run/test_filter.ts";
import type { ToolResult } from "../../../agents/support/process.ts";
import { tempDir } from "../../_helpers.ts";
import { detectIn, repo } from "./_detect_helpers.ts";

const PROJECT = {
  "deno.json": JSON.stringify({ lint: {}, fmt: { lineWidth: 100 } }),
  "math.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
  "math_test.ts": [
    'import assert from "node:assert/strict";',
    'import { add } from "./math.ts";',
    "",
    'Deno.test("adds", () => assert.equal(add(1, 1), 2));',
    'Deno.test("adds zero", () => assert.equal(add(2, 0), 2));',
    "",
  ].join("\n"),
};

/** What deno 2.9 prints when JSR cannot be reached and the cache is cold (captured here). */
const DENO_OFFLINE =
  "Download https://jsr.io/@std/assert/meta.json\nerror: JSR package manifest for '@std/assert' failed to load. Import 'https://jsr.io/@std/assert/meta.json' failed.\n";

Deno.test("a deno.json without tasks: deno test -A, deno lint and deno fmt --check", async (t) => {
  await t.step("detected from the config's lint and fmt and the test files", async () => {
    await using dir = await repo(PROJECT);
    const { checks } = await detectChecks(dir.path);
    assert.deepEqual(checks.map((check) => [check.command, check.kind, check.runner]), [
      ["deno test -A", "test", "deno"],
      ["deno lint", "lint", undefined],
      ["deno fmt --check", "lint", undefined],
    ]);
  });
  await t.step("run for real: a broken add names its test, narrowed to it", async () => {
    await using dir = await repo({
      ...PROJECT,
      "math.ts": PROJECT["math.ts"].replace("a + b", "a - b"),
    });
    const [test] = (await detectChecks(dir.path)).checks;
    const run = await runRepoCheck(test, { cwd: dir.path, timeoutMs: 120_000 });
    assert.equal(run.green, false);
    assert.deepEqual(run.failing, ["adds"]);
    assert.deepEqual(run.counts, { run: 2, passed: 1, failed: 1, ignored: 0 });
    const narrowed = await filteredCommand(test, run.failing, {
      read: () => Promise.resolve(undefined),
    });
    assert.deepEqual(narrowed, { command: "deno test -A --filter '/^(?:adds)$/'" });
  });
  await t.step("a test task stands in for deno test; CI's deno check joins", async () => {
    const detection = await detectIn({
      ...PROJECT,
      "deno.json": JSON.stringify({ tasks: { test: "deno test -A" }, fmt: {} }),
      ".github/workflows/ci.yml":
        "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: deno task test\n      - run: deno check math.ts\n",
    });
    assert.deepEqual(detection.checks.map((check) => check.command), [
      "deno task test",
      "deno fmt --check",
      "deno check math.ts",
    ]);
  });
});

Deno.test("jsr: imports that cannot be had: tests and type checks could not run, lint and fmt still do", async (t) => {
  const files = {
    ...PROJECT,
    "deno.json": JSON.stringify({
      imports: { "@std/assert": "jsr:@std/assert@^1" },
      tasks: { test: "deno test -A", check: "deno check ." },
      fmt: {},
    }),
    ".github/workflows/ci.yml":
      "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: deno test -A\n",
  };
  await t.step("with deno's own answer when JSR is unreachable and the cache is cold", async () => {
    await using dir = await repo(files);
    const probe = (executable: string, args: string[]): Promise<ToolResult> =>
      Promise.resolve(
        executable === "deno" && args[0] === "info"
          ? { code: 1, stdout: "", stderr: DENO_OFFLINE }
          : { code: 127, stdout: "", stderr: "not found" },
      );
    const detection = await detectChecks(dir.path, { probe });
    assert.deepEqual(detection.checks.map((check) => check.command), ["deno fmt --check"]);
    const why =
      "could not run: dependencies unreachable (it imports jsr:@std/assert@^1, which is neither in Deno's cache nor reachable from here)";
    assert.deepEqual(
      detection.skipped.filter((entry) => entry.why.endsWith(why)).map((entry) => entry.source),
      [
        "deno.json tasks.test",
        "deno.json tasks.check",
        '.github/workflows/ci.yml job "t" step "deno test -A"',
      ],
    );
  });
  await t.step(
    "on this machine, with a cold cache: decided by what deno itself can fetch",
    async () => {
      await using dir = await repo(files);
      await using cache = await tempDir("finishline-deno-dir-");
      const previous = Deno.env.get("DENO_DIR");
      Deno.env.set("DENO_DIR", cache.path);
      try {
        const info = await new Deno.Command("deno", {
          args: ["info", "jsr:@std/assert@^1"],
          cwd: dir.path,
          stdout: "null",
          stderr: "null",
        }).output();
        const detection = await detectChecks(dir.path);
        const text = formatDetection(detection);
        if (info.success) {
          assert.match(text, /deno task test/, "JSR reachable: the tests run");
        } else {
          assert.doesNotMatch(text, /^ {2}deno task test {2}\(/m);
          assert.match(text, /deno\.json tasks\.test {2}\(could not run: dependencies unreachable/);
        }
      } finally {
        if (previous === undefined) Deno.env.delete("DENO_DIR");
        else Deno.env.set("DENO_DIR", previous);
      }
    },
  );
});
