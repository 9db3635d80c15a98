/**
 * A canary the agent's code cannot pass. In the clean copy of a claim,
 * finishline writes a test file of its own for each runner it can place one
 * for (node --test, pytest, deno test, jest, vitest, mocha, go test, cargo
 * test): tests that must fail (a false assertion through each of the
 * runner's assertion styles and each assertion library the tests import, a
 * thrown error) and one that must pass, their names and values random per
 * run, so the code under test cannot special-case them.
 *
 * The file goes where the code that could tamper with the runner reaches:
 * beside the test files the claim changed (else the first found), in the
 * same Go package, in the package's `tests/` for cargo; it first imports the
 * modules the repository's tests import (each in a try: one that cannot load
 * alone is skipped); and it runs with the project's own runner, its
 * configuration, and the options the check passes it, less those that
 * select tests. So a module that turns `node:assert` into no-ops, a setup
 * file that replaces `expect`, a plugin or hook that turns failures into
 * passes, a `TestMain` that exits 0, an import map that swaps the assertion
 * library, or a test-binary runner that hides the exit status acts on the
 * canary too. If a must-fail test passes, the must-pass one fails, or the
 * runner exits 0 while a test failed, the runner was tampered with: the
 * claim is refused. The canary runs its own file only, never the suite
 * again. The runners it cannot place a file for are listed as not
 * canaried, with why.
 *
 * @module
 */

import { existsSync } from "node:fs";
import path from "node:path";
import { type CheckRun, type RepoCheck, runRepoCheck } from "./check_run.ts";
import type { TestRunner } from "./test_report.ts";
import {
  type Canary,
  canaryNames,
  type PlaceContext,
  type Placed,
  type Placement,
} from "./_canary_common.ts";
import { placeDeno, placeJest, placeMocha, placeNode, placeVitest } from "./_canary_js.ts";
import { placeCargo, placeGo } from "./_canary_go_rust.ts";
import { placePytest } from "./_canary_python.ts";

export type { Canary } from "./_canary_common.ts";

/** What the canary found for one runner. */
export interface CanaryResult {
  /** The runner (`node`, `pytest`, or another detected one). */
  runner: string;
  /** `held`: the runner failed what must fail; `tampered`: it did not; `not canaried`: no canary ran. */
  outcome: "held" | "tampered" | "not canaried";
  /** Why, when not held; for a held canary, what it left out, if anything. */
  why?: string;
  /** Wall time of the canary's runs, in milliseconds. */
  durationMs?: number;
}

/** How each runner's canary is placed. */
const PLACERS: Partial<Record<TestRunner, (context: PlaceContext) => Promise<Placement>>> = {
  node: placeNode,
  pytest: placePytest,
  deno: placeDeno,
  jest: placeJest,
  vitest: placeVitest,
  mocha: placeMocha,
  go: placeGo,
  cargo: placeCargo,
};

/** Why the other runners have no canary. */
const NOT_CANARIED: Partial<Record<TestRunner, string>> = {
  ctest:
    "ctest runs the programs a CMake build makes: a canary would be a change to the build and a rebuild, not a file beside the tests",
  meson:
    "meson test runs the programs its build makes: a canary would be a change to meson.build and a rebuild",
  automake:
    "make check runs the programs Makefile.am lists: a canary would be a change to the build and a rebuild",
  maven:
    "a canary in Maven means compiling a test class through the build, tens of seconds at every claim; finishline does not place one",
  gradle:
    "a canary in Gradle means compiling a test class through the build, tens of seconds at every claim; finishline does not place one",
  minitest:
    "finishline does not place a canary for Ruby's runners: rake's test task picks its files by a pattern of the Rakefile's own",
  "test-unit":
    "finishline does not place a canary for Ruby's runners: rake's test task picks its files by a pattern of the Rakefile's own",
};

/** The must-fail styles of {@linkcode newCanary} when none are given. */
const DEFAULT_STYLES: Partial<Record<TestRunner, string[]>> = {
  node: ["ok", "equal", "strictEqual", "deepStrictEqual", "strict", "throws", "throw"],
  pytest: ["assert", "raise", "fail"],
};

/**
 * Run the canaries of the checks' runners in a clean copy: one small run of
 * finishline's own test file per runner (per changed package for Go), never
 * the suite.
 *
 * @param dir The clean copy of the claim.
 * @param checks The checks (their runners say which canaries to write).
 * @param options The timeout of one run, the abort signal, and the files the
 * claim changed (relative to the copy), where the canary goes first.
 * @returns One result per runner of the checks.
 */
export async function runCanaries(
  dir: string,
  checks: readonly RepoCheck[],
  options: { timeoutMs: number; signal?: AbortSignal; changed?: readonly string[] },
): Promise<CanaryResult[]> {
  const runners = [...new Set(checks.flatMap((check) => check.runner ? [check.runner] : []))];
  const results: CanaryResult[] = [];
  for (const runner of runners) {
    const place = PLACERS[runner];
    if (!place) {
      results.push({
        runner,
        outcome: "not canaried",
        why: NOT_CANARIED[runner] ?? "finishline cannot place a test file for this runner",
      });
      continue;
    }
    const own = checks.filter((check) => check.runner === runner);
    results.push(await runCanary(dir, runner, place, { ...options, checks: own }));
  }
  return results;
}

/** Place, run and remove the canary of one runner. */
async function runCanary(
  dir: string,
  runner: TestRunner,
  place: (context: PlaceContext) => Promise<Placement>,
  options: {
    timeoutMs: number;
    signal?: AbortSignal;
    changed?: readonly string[];
    checks: readonly RepoCheck[];
  },
): Promise<CanaryResult> {
  const written: string[] = [];
  const context: PlaceContext = {
    dir,
    checks: options.checks,
    changed: options.changed ?? [],
    token: crypto.randomUUID().replaceAll("-", "").slice(0, 12),
    write: async (file, text) => {
      // The folders made for it go with it.
      let top: string | undefined;
      for (let at = path.dirname(file); !existsSync(at); at = path.dirname(at)) top = at;
      if (top) written.push(top);
      await Deno.mkdir(path.dirname(file), { recursive: true });
      written.push(file);
      await Deno.writeTextFile(file, text);
    },
  };
  try {
    const placement = await place(context).catch((error) => ({
      why: `finishline could not write it: ${error instanceof Error ? error.message : error}`,
    }));
    if ("why" in placement) return { runner, outcome: "not canaried", why: placement.why };
    const judged: Array<{ placed: Placed; outcome: CanaryResult["outcome"]; why?: string }> = [];
    let durationMs = 0;
    for (const placed of placement) {
      const run = await runRepoCheck(
        { name: `canary (${runner})`, command: placed.command, runner },
        { timeoutMs: options.timeoutMs, signal: options.signal, cwd: placed.cwd },
      );
      durationMs += run.durationMs;
      judged.push({ placed, ...judgeCanary(placed.canary, run) });
      if (judged.at(-1)!.outcome === "tampered" || options.signal?.aborted) break;
    }
    const at = (entry: (typeof judged)[number]) =>
      entry.placed.where && placement.length > 1 ? `in ${entry.placed.where}, ` : "";
    const tampered = judged.find((entry) => entry.outcome === "tampered");
    if (tampered) {
      return { runner, outcome: "tampered", why: `${at(tampered)}${tampered.why}`, durationMs };
    }
    const missed = judged.filter((entry) => entry.outcome === "not canaried");
    if (missed.length === judged.length) {
      return {
        runner,
        outcome: "not canaried",
        why: missed.map((entry) => `${at(entry)}${entry.why}`).join("; "),
        durationMs,
      };
    }
    const held = judged.filter((entry) => entry.outcome === "held");
    const left = [
      ...missed.map((entry) => `${at(entry)}${entry.why}`),
      ...placement.flatMap((placed) => placed.leftOut ? [placed.leftOut] : []),
    ];
    const note = left.length > 0
      ? `${
        placement.length > 1
          ? `held in ${held.map((entry) => entry.placed.where).join(", ")}; `
          : ""
      }not canaried: ${left.join("; ")}`
      : undefined;
    return { runner, outcome: "held", ...(note ? { why: note } : {}), durationMs };
  } finally {
    for (const file of written.reverse()) {
      await Deno.remove(file, { recursive: true }).catch(() => {});
    }
  }
}

/**
 * A canary with a fresh random token: its names cannot be known before the run.
 *
 * @param runner The runner: its names follow the runner's conventions.
 * @param styles What each must-fail test fails through; the runner's usual ones by default.
 * @returns The canary.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newCanary } from "./canary.ts";
 *
 * const canary = newCanary("go", ["fatal"]);
 * assert.equal(canary.mustFail[0], `TestFinishlineCanary${canary.token}MustFailFatal`);
 * ```
 */
export function newCanary(runner: TestRunner, styles?: readonly string[]): Canary {
  const token = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  return canaryNames(runner, token, styles ?? DEFAULT_STYLES[runner] ?? ["throw"]);
}

/**
 * The canary's verdict from its run, read from the runner's own output: held
 * when every must-fail test is reported failed by name, the must-pass test
 * is not (and counted passed, where the runner counts), and the runner's
 * exit code says a test failed.
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
        passed.map((name) => name.split(canary.token)[1].replace(/^[\s_]+/, "")).join(", ")
      }`,
    };
  }
  if (failed(canary.mustPass)) {
    return { outcome: "tampered", why: "finishline's test that must pass failed" };
  }
  if (run.counts?.passed === 0) {
    return {
      outcome: "tampered",
      why: "the runner reported finishline's test that must pass as not passed",
    };
  }
  if (run.code === 0) {
    return { outcome: "tampered", why: "the runner exited 0 while finishline's tests failed" };
  }
  return { outcome: "held" };
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
