/**
 * The held-out reproduction test: a verifier session, independent of the
 * worker, writes tests that reproduce the task in the repository's own test
 * framework, on a worktree of the starting commit. A test is kept only when
 * it fails there with a named failure that is not a syntax, import or build
 * error, and the rest of the suite stays as the baseline had it. The kept
 * files are held out of the worker's tree; the gate adds them to the clean
 * copy of the worker's final commit, where they must pass.
 *
 * @module
 */

import type { GitRepo } from "../../git/repo.ts";
import type { CheckRun } from "../run/check_run.ts";

/** A reproduction test the verifier wrote, checked, and held out. */
export interface HeldOutTest {
  /** The test files, as the verifier wrote them (repository-relative paths). */
  files: Array<{ path: string; content: string }>;
  /** The checks that run them (their failing runs named the tests). */
  checks: string[];
  /** The tests that fail on the starting commit: these must pass at the end. */
  tests: string[];
  /** What the failures said on the starting commit (assertion lines, no code). */
  messages: string[];
}

/** What the verifier's attempt came to. */
export type Reproduction =
  | { kept: true; test: HeldOutTest; notes: string[] }
  | { kept: false; why: string; notes: string[] };

/**
 * Output that says the tests never ran for the task's reason: they do not
 * parse, import, or build. Such a test fails on every commit.
 */
const SETUP_ERROR =
  /\bSyntaxError\b|\bIndentationError\b|Cannot find module|ERR_MODULE_NOT_FOUND|\bModuleNotFoundError\b|error\[E\d{4}\]|\[build failed\]|could not compile|error: expected|ReferenceError: (?:describe|it|test|expect) is not defined/;

/**
 * Why a run's failure does not show the behaviour (a syntax, import or build
 * error), or undefined.
 *
 * @param tail The last lines of the run's output.
 * @returns The first offending line, trimmed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { setupError } from "./reproduction.ts";
 *
 * assert.equal(setupError("x\nSyntaxError: Unexpected token '}'\n"), "SyntaxError: Unexpected token '}'");
 * assert.equal(setupError("AssertionError: 5 == 2"), undefined);
 * ```
 */
export function setupError(tail: string): string | undefined {
  return tail.split("\n").find((line) => SETUP_ERROR.test(line))?.trim().slice(0, 200);
}

/** A failing "test" that is a test file's path (node --test, vitest and jest name a file that did not load so). */
const LOAD_FAILURE = /^[^\s:]*\.(?:[cm]?[jt]sx?|py|rb)$/;

/**
 * Whether a failing "test" is a test file that did not load (node --test,
 * vitest and jest name such a file by its path).
 *
 * @param name A failing test's name.
 * @returns True for a file's path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isLoadFailure } from "./reproduction.ts";
 *
 * assert.equal(isLoadFailure("test/subtract.test.js"), true);
 * assert.equal(isLoadFailure("subtract subtracts"), false);
 * ```
 */
export function isLoadFailure(name: string): boolean {
  return LOAD_FAILURE.test(name);
}

/** Lines that state what an assertion expected, not the code around it. */
const ASSERTION =
  /AssertionError|\bexpected\b|\bExpected\b|\bReceived\b|\bactual\b|assert(?:ion)? failed|\bassert\b.*==|!=|to (?:equal|be|match)|panicked at/;
/** Code frames runners print around the failing line. */
const CODE_FRAME = /^\s*(?:>|\d+\s*\||\|)|^\s*at\s/;

/**
 * The assertion lines of a failing run: what the test expected and got,
 * without code frames or stack lines; at most `limit`, each at most 200
 * characters.
 *
 * @param tail The last lines of the run's output.
 * @param limit How many lines.
 * @returns The lines, trimmed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { assertionLines } from "./reproduction.ts";
 *
 * const tail = [
 *   "not ok 1 - subtract subtracts",
 *   "  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
 *   "  8 !== 2",
 *   "    at TestContext.<anonymous> (test/math.test.js:4:10)",
 *   "> 4 | assert.equal(subtract(5, 3), 2);",
 * ].join("\n");
 * assert.deepEqual(assertionLines(tail), [
 *   "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
 *   "8 !== 2",
 * ]);
 * ```
 */
export function assertionLines(tail: string, limit = 4): string[] {
  const found: string[] = [];
  for (const line of tail.split("\n")) {
    if (found.length >= limit) break;
    if (CODE_FRAME.test(line) || !ASSERTION.test(line)) continue;
    const text = line.trim().slice(0, 200);
    if (text !== "" && !found.includes(text)) found.push(text);
  }
  return found;
}

/**
 * Judges the verifier's tests from the checks run with them on the starting
 * commit, against the baseline's runs.
 *
 * A test is kept when a check names it failing now and the baseline did
 * not, that check's failure is not a setup error, and every check green at
 * the baseline either stays green or fails only in new tests.
 *
 * @param runs The checks, run on the starting commit with the verifier's files.
 * @param baseline The same checks on the starting commit without them.
 * @returns The new failing tests by check, or why there is none.
 */
export function judgeReproduction(
  runs: CheckRun[],
  baseline: CheckRun[],
): { checks: string[]; tests: string[]; messages: string[] } | { why: string } {
  const checks: string[] = [];
  const tests: string[] = [];
  const messages: string[] = [];
  const problems: string[] = [];
  for (const run of runs) {
    if (run.green) continue;
    const before = baseline.find((entry) => entry.name === run.name);
    const broken = setupError(run.tail);
    if (broken) {
      problems.push(`"${run.name}" fails before any test runs (${broken})`);
      continue;
    }
    const earlier = new Set(before?.failing ?? []);
    const fresh = run.failing.filter((name) => !earlier.has(name));
    // A runner names a file it could not load by its path: no test of it ran.
    const unloaded = fresh.filter(isLoadFailure);
    if (unloaded.length > 0) {
      problems.push(
        `"${run.name}" fails before any test runs (${
          unloaded.map((name) => name.split("/").at(-1)).join(", ")
        } did not load)`,
      );
      continue;
    }
    if (fresh.length === 0) {
      if (before?.green) {
        problems.push(`"${run.name}" fails without naming a failing test`);
      }
      continue;
    }
    checks.push(run.name);
    tests.push(...fresh.filter((name) => !tests.includes(name)));
    messages.push(...assertionLines(run.tail).filter((line) => !messages.includes(line)));
  }
  if (problems.length > 0) return { why: problems.join("; ") };
  if (tests.length === 0) {
    return {
      why: "the tests it wrote pass on the starting commit: they do not reproduce the task",
    };
  }
  return { checks, tests, messages };
}

/**
 * The files the verifier changed in its worktree, split into test files
 * (kept) and others (dropped: the verifier writes tests, not code; a
 * deleted file is never a test to keep).
 *
 * @param repo The worktree's repository (git runs hardened).
 * @param isTest Whether a path is a test file.
 * @param exclude Paths to leave out (the dependency folders linked in).
 * @returns Repository-relative paths.
 */
export async function verifierChanges(
  repo: GitRepo,
  isTest: (path: string) => boolean,
  exclude: string[],
): Promise<{ tests: string[]; others: string[] }> {
  const status = await repo.status(exclude);
  const tests: string[] = [];
  const others: string[] = [];
  for (const file of new Set([...status?.staged ?? [], ...status?.unstaged ?? []])) {
    const present = await Deno.lstat(`${repo.root}/${file}`).then(
      (info) => info.isFile,
      () => false,
    );
    (present && isTest(file) ? tests : others).push(file);
  }
  return { tests, others };
}
