/**
 * A canary the agent's code cannot pass. In the clean copy of a claim,
 * finishline writes a test file of its own for each runner it can place one
 * for (node --test, pytest): tests that must fail (a false assertion through
 * each of the runner's assertion styles, a thrown error) and one that must
 * pass, their names and values random per run, so the code under test cannot
 * special-case them. The file first imports the modules the repository's
 * test files import (each in a try: one that cannot load alone is skipped),
 * so code that tampers with the runner when imported (a module that turns
 * `node:assert` into no-ops, a plugin that turns failures into passes) acts
 * on the canary too. If a must-fail test passes, the must-pass one fails, or
 * the runner exits 0 while a test failed, the runner was tampered with: the
 * claim is refused. The canary runs its own file only, never the suite
 * again. Runners it cannot place a file for are listed as not canaried.
 *
 * @module
 */

import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type CheckRun, type RepoCheck, runRepoCheck } from "./check_run.ts";
import type { TestRunner } from "./test_report.ts";

/** What the canary found for one runner. */
export interface CanaryResult {
  /** The runner (`node`, `pytest`, or another detected one). */
  runner: string;
  /** `held`: the runner failed what must fail; `tampered`: it did not; `not canaried`: no canary ran. */
  outcome: "held" | "tampered" | "not canaried";
  /** Why, when not held. */
  why?: string;
  /** Wall time of the canary's run, in milliseconds. */
  durationMs?: number;
}

/** The runners a canary file is written for; the others are listed as not canaried. */
const CANARIED: ReadonlySet<TestRunner> = new Set(["node", "pytest"]);

/** How many of the repository's test files are read for the modules they import. */
const TEST_FILES_READ = 200;

/** One canary: its random token, the tests that must fail, the one that must pass. */
export interface Canary {
  /** The random token in every name. */
  token: string;
  /** Names of the tests that must fail. */
  mustFail: string[];
  /** Name of the test that must pass. */
  mustPass: string;
}

/**
 * Run the canaries of the checks' runners in a clean copy: one small run of
 * finishline's own test file per runner, never the suite.
 *
 * @param dir The clean copy of the claim.
 * @param checks The checks (their runners say which canaries to write).
 * @param options The timeout of one run, the abort signal.
 * @returns One result per runner of the checks.
 */
export async function runCanaries(
  dir: string,
  checks: readonly RepoCheck[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<CanaryResult[]> {
  const runners = [...new Set(checks.flatMap((check) => check.runner ? [check.runner] : []))];
  const results: CanaryResult[] = [];
  for (const runner of runners) {
    if (!CANARIED.has(runner)) {
      results.push({
        runner,
        outcome: "not canaried",
        why: "finishline cannot place a test file for this runner",
      });
      continue;
    }
    results.push(await runCanary(dir, runner, options));
  }
  return results;
}

/** Write, run and remove the canary of one runner. */
async function runCanary(
  dir: string,
  runner: TestRunner,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<CanaryResult> {
  const canary = newCanary(runner);
  const tests = await testFiles(dir, runner);
  const placed = runner === "node"
    ? await nodeCanary(dir, canary, tests)
    : await pytestCanary(dir, canary, tests);
  try {
    const run = await runRepoCheck(
      { name: `canary (${runner})`, command: placed.command, runner },
      { ...options, cwd: dir },
    );
    return { ...judgeCanary(canary, run), runner, durationMs: run.durationMs };
  } finally {
    await Deno.remove(placed.file).catch(() => {});
  }
}

/**
 * A canary with a fresh random token: its names cannot be known before the run.
 *
 * @param runner The runner: its names follow the runner's conventions.
 * @returns The canary.
 */
export function newCanary(runner: TestRunner): Canary {
  const token = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  const styles = runner === "pytest"
    ? ["assert", "raise", "fail"]
    : ["ok", "equal", "strictEqual", "deepStrictEqual", "strict", "throws", "throw"];
  const name = (what: string) =>
    runner === "pytest"
      ? `test_finishline_canary_${token}_${what}`
      : `finishline canary ${token} ${what}`;
  return {
    token,
    mustFail: styles.map((style) => name(`must_fail_${style}`)),
    mustPass: name("must_pass"),
  };
}

/**
 * The canary's verdict from its run: held when every must-fail test failed,
 * the must-pass test did not, and the runner's exit code said so.
 *
 * @param canary The canary.
 * @param run Its run (failing tests named by the runner's output).
 * @returns The outcome and why.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { judgeCanary, newCanary } from "./canary.ts";
 *
 * const canary = newCanary("node");
 * const run = (code: number, failing: string[]) =>
 *   ({ name: "canary", green: code === 0, code, timedOut: false, failing, testsRun: 8, durationMs: 1, tail: "" });
 * assert.equal(judgeCanary(canary, run(1, canary.mustFail)).outcome, "held");
 * assert.equal(judgeCanary(canary, run(0, [])).outcome, "tampered");
 * assert.equal(judgeCanary(canary, run(0, canary.mustFail)).outcome, "tampered");
 * ```
 */
export function judgeCanary(
  canary: Canary,
  run: CheckRun,
): { outcome: CanaryResult["outcome"]; why?: string } {
  if (run.timedOut) return { outcome: "not canaried", why: "its run timed out" };
  // pytest names a test by its node id (`tests/test_x.py::test_y`).
  const failed = (name: string) =>
    run.failing.some((test) => test === name || test.endsWith(`::${name}`));
  const passed = canary.mustFail.filter((name) => !failed(name));
  const named = [...canary.mustFail, canary.mustPass].some(failed);
  // The file did not load (node names the file as one failing test; pytest collects none).
  const ran = named || (run.testsRun ?? 0) > 1 || (run.code === 0 && (run.testsRun ?? 0) > 0);
  if (!ran && run.code !== 0) {
    return { outcome: "not canaried", why: `the runner could not run it (exit code ${run.code})` };
  }
  if (!ran) {
    return run.code === 0
      ? { outcome: "tampered", why: "the runner ran none of finishline's tests and exited 0" }
      : { outcome: "not canaried", why: `the runner did not run it (exit code ${run.code})` };
  }
  if (passed.length > 0) {
    return {
      outcome: "tampered",
      why: `finishline's tests that must fail passed: ${
        passed.map((name) => name.split(canary.token)[1].trim()).join(", ")
      }`,
    };
  }
  if (failed(canary.mustPass)) {
    return { outcome: "tampered", why: "finishline's test that must pass failed" };
  }
  if (run.code === 0) {
    return { outcome: "tampered", why: "the runner exited 0 while finishline's tests failed" };
  }
  return { outcome: "held" };
}

/** Test files of the runner's language in the copy (not under dependency folders), at most {@linkcode TEST_FILES_READ}. */
async function testFiles(dir: string, runner: TestRunner): Promise<string[]> {
  const pattern = runner === "pytest"
    ? /(^|\/)(test_[^/]*|[^/]*_test)\.py$/
    : /(^|\/)(test\/.*|[^/]*[.\-_]test|test-[^/]*|test)\.[cm]?js$/;
  const found: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    if (found.length >= TEST_FILES_READ) return;
    for await (const entry of Deno.readDir(path.join(dir, relative))) {
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory) {
        if (
          /^(node_modules|\.git|\.venv|venv|__pycache__|\.tox|target|dist|build)$/.test(entry.name)
        ) {
          continue;
        }
        await walk(child);
      } else if (entry.isFile && pattern.test(child)) {
        found.push(child);
      }
      if (found.length >= TEST_FILES_READ) return;
    }
  };
  await walk("").catch(() => {});
  return found;
}

/** The node canary: an ES module beside the copy's root, run with `node --test`. */
async function nodeCanary(
  dir: string,
  canary: Canary,
  tests: string[],
): Promise<{ file: string; command: string }> {
  const imports = new Set<string>();
  for (const test of tests) {
    const text = await Deno.readTextFile(path.join(dir, test)).catch(() => "");
    const specifiers = text.matchAll(
      /(?:require\(\s*|from\s+|import\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g,
    );
    for (const [, specifier] of specifiers) {
      const resolved = resolveModule(path.join(dir, path.dirname(test), specifier));
      if (resolved && !tests.includes(path.relative(dir, resolved))) imports.add(resolved);
    }
  }
  const [a, b] = distinctNumbers();
  const n = distinctNumbers()[0];
  const body = {
    ok: `assert.ok(${a} === ${b});`,
    equal: `assert.equal(${a}, ${b});`,
    strictEqual: `assert.strictEqual(${a}, ${b});`,
    deepStrictEqual: `assert.deepStrictEqual([${a}], [${b}]);`,
    strict: `strict.equal(${a}, ${b});`,
    throws: "assert.throws(() => {});",
    throw: `throw new Error("finishline canary ${canary.token}");`,
  };
  const lines = [
    'import { test } from "node:test";',
    'import assert from "node:assert";',
    'import strict from "node:assert/strict";',
    ...[...imports].map((file) =>
      `try { await import(${
        JSON.stringify(pathToFileURL(file).href)
      }); } catch { /* loads alone or not at all */ }`
    ),
    `test(${JSON.stringify(canary.mustPass)}, () => { assert.strictEqual(${n}, ${n}); });`,
    ...canary.mustFail.map((name, index) =>
      `test(${JSON.stringify(name)}, () => { ${Object.values(body)[index]} });`
    ),
    "",
  ];
  const file = path.join(dir, `finishline-canary-${canary.token}.test.mjs`);
  await Deno.writeTextFile(file, lines.join("\n"));
  return { file, command: `node --test ${JSON.stringify(path.basename(file))}` };
}

/** The pytest canary: a test module beside the first test file, so its conftest files apply. */
async function pytestCanary(
  dir: string,
  canary: Canary,
  tests: string[],
): Promise<{ file: string; command: string }> {
  const modules = new Set<string>();
  for (const test of tests) {
    const text = await Deno.readTextFile(path.join(dir, test)).catch(() => "");
    for (
      const [, from, plain] of text.matchAll(/^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))/gm)
    ) {
      const top = (from ?? plain).split(".")[0];
      if (!top) continue;
      const here = [dir, path.join(dir, "src"), path.join(dir, path.dirname(test))];
      if (
        here.some((root) =>
          existsSync(path.join(root, `${top}.py`)) ||
          existsSync(path.join(root, top, "__init__.py"))
        )
      ) {
        modules.add(top);
      }
    }
  }
  const [a, b] = distinctNumbers();
  const n = distinctNumbers()[0];
  const body: Record<string, string> = {
    assert: `assert ${a} == ${b}`,
    raise: `raise AssertionError("finishline canary ${canary.token}")`,
    fail: `import pytest\n    pytest.fail("finishline canary ${canary.token}")`,
  };
  const lines = [
    "import importlib",
    "",
    `for _name in ${JSON.stringify([...modules])}:`,
    "    try:",
    "        importlib.import_module(_name)",
    "    except BaseException:",
    "        pass",
    "",
    `def ${canary.mustPass}():`,
    `    assert ${n} == ${n}`,
    "",
    ...canary.mustFail.flatMap((name) => {
      const style = name.split("must_fail_")[1];
      return [`def ${name}():`, `    ${body[style]}`, ""];
    }),
  ];
  const folder = tests.length > 0 ? path.dirname(tests[0]) : ".";
  const file = path.join(dir, folder, `test_finishline_canary_${canary.token}.py`);
  await Deno.writeTextFile(file, lines.join("\n"));
  const relative = path.relative(dir, file);
  return {
    file,
    command: `python3 -m pytest -q -p no:cacheprovider ${JSON.stringify(relative)}`,
  };
}

/** A module path as node resolves a relative specifier: the file, or with an extension, or its index. */
function resolveModule(target: string): string | undefined {
  const candidates = [
    target,
    ...[".js", ".mjs", ".cjs"].map((extension) => `${target}${extension}`),
    ...["index.js", "index.mjs", "index.cjs"].map((index) => path.join(target, index)),
  ];
  return candidates.find((candidate) => {
    try {
      return Deno.statSync(candidate).isFile;
    } catch {
      return false;
    }
  });
}

/** Two different random integers. */
function distinctNumbers(): [number, number] {
  const values = crypto.getRandomValues(new Uint32Array(2));
  const a = values[0] % 1_000_000;
  const b = a + 1 + (values[1] % 1000);
  return [a, b];
}

/**
 * The refusal of a claim whose runner was tampered with, or undefined.
 *
 * @param results The canaries' results.
 * @returns The feedback for the agent.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canaryProblem } from "./canary.ts";
 *
 * assert.equal(canaryProblem([{ runner: "node", outcome: "held" }]), undefined);
 * assert.match(
 *   canaryProblem([{ runner: "node", outcome: "tampered", why: "the runner exited 0" }])!,
 *   /^The test runner was tampered with/,
 * );
 * ```
 */
export function canaryProblem(results: readonly CanaryResult[]): string | undefined {
  const tampered = results.filter((result) => result.outcome === "tampered");
  if (tampered.length === 0) return undefined;
  return `The test runner was tampered with: finishline added tests of its own to a clean copy of your commit, some that must fail and one that must pass, and ${
    tampered.map((result) => `in ${result.runner}, ${result.why}`).join("; ")
  }. Something in your change makes failing tests pass (code that patches the assertions or the runner when it is imported, a plugin, a hook, a configuration): remove it and fix the code itself`;
}
