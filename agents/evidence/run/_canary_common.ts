/**
 * What the canaries of every runner share: the canary's names, where its
 * file goes (beside the test files the claim changed, else the first one
 * found), and the runner's command line as the repository's check gives it,
 * without what selects tests. Private to `run/`: `canary.ts` is the entry.
 *
 * @module
 */

import path from "node:path";
import { splitShell } from "../_shell_words.ts";
import type { RepoCheck } from "./check_run.ts";
import { runnerCommand, scriptOf, shellQuote } from "./test_filter.ts";
import type { TestRunner } from "./test_report.ts";

/** One canary: its random token, the tests that must fail, the one that must pass. */
export interface Canary {
  /** The random token in every name. */
  token: string;
  /** Names of the tests that must fail. */
  mustFail: string[];
  /** Name of the test that must pass. */
  mustPass: string;
}

/** A canary file written into the copy, and how its runner runs it there. */
export interface Placed {
  /** The canary its file holds. */
  canary: Canary;
  /** The shell command that runs the canary alone. */
  command: string;
  /** The folder it runs in. */
  cwd: string;
  /** Where it ran, when a runner places more than one (a Go package). */
  where?: string;
  /** What the runner's canaries left out, when something (Go packages past the limit). */
  leftOut?: string;
}

/** What a runner's placer is given. */
export interface PlaceContext {
  /** The clean copy. */
  dir: string;
  /** The checks run by this runner. */
  checks: readonly RepoCheck[];
  /** Files the claim changed, relative to the copy (empty when unknown). */
  changed: readonly string[];
  /** The random token of this run. */
  token: string;
  /** Writes a canary file (its folders made as needed), to be removed after the run. */
  write(file: string, text: string): Promise<void>;
}

/** The canaries of one runner, or why there is none. */
export type Placement = Placed[] | { why: string };

/**
 * The names of a canary, after the runner's conventions: pytest's
 * `test_x`, Go's `TestX`, Rust's snake case, and plain words elsewhere.
 *
 * @param runner The runner.
 * @param token The random token.
 * @param styles What each must-fail test fails through (letters, digits and `_`).
 * @returns The canary.
 */
export function canaryNames(runner: TestRunner, token: string, styles: readonly string[]): Canary {
  const name = (what: string) => {
    if (runner === "pytest") return `test_finishline_canary_${token}_${what}`;
    if (runner === "cargo") return `finishline_canary_${token}_${what}`;
    if (runner === "go") {
      const pascal = what.split("_").map((part) => part.charAt(0).toUpperCase() + part.slice(1));
      return `TestFinishlineCanary${token}${pascal.join("")}`;
    }
    return `finishline canary ${token} ${what}`;
  };
  return {
    token,
    mustFail: styles.map((style) => name(`must_fail_${style}`)),
    mustPass: name("must_pass"),
  };
}

/** A style's name from a library's specifier: `chai` → `chai`, `@std/assert` → `std_assert`. */
export function styleName(specifier: string): string {
  return specifier.replace(/^(?:npm|jsr|node):/, "").replace(/@[\d^~<>=.x*-]+(?=\/|$)/g, "")
    .replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 40) || "lib";
}

/** Two different random integers. */
export function distinctNumbers(): [number, number] {
  const values = crypto.getRandomValues(new Uint32Array(2));
  const a = values[0] % 1_000_000;
  const b = a + 1 + (values[1] % 1000);
  return [a, b];
}

/** How many of the repository's test files are read for what they import. */
export const TEST_FILES_READ = 200;

/** Folders no runner's tests are looked for in. */
const SKIPPED_FOLDERS =
  /^(node_modules|\.git|\.venv|venv|__pycache__|\.tox|target|dist|build|vendor|testdata)$/;

/**
 * The test files of a runner in the copy, at most {@linkcode TEST_FILES_READ}:
 * those the claim changed first, so that the canary goes where the claim's
 * tests are (a per-folder conftest, a Go package, a jest project applies to
 * them), then the others in folder order.
 *
 * @param dir The copy.
 * @param pattern What a test file's path (relative, with `/`) looks like.
 * @param changed Files the claim changed.
 * @returns Relative paths.
 */
export async function testFiles(
  dir: string,
  pattern: RegExp,
  changed: readonly string[],
): Promise<string[]> {
  const found: string[] = changed.filter((file) =>
    pattern.test(file) && !file.split("/").some((part) => SKIPPED_FOLDERS.test(part)) &&
    isFile(path.join(dir, file))
  ).slice(0, TEST_FILES_READ);
  const walk = async (relative: string): Promise<void> => {
    const entries: Deno.DirEntry[] = [];
    for await (const entry of Deno.readDir(path.join(dir, relative))) entries.push(entry);
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const entry of entries) {
      if (found.length >= TEST_FILES_READ) return;
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory && !SKIPPED_FOLDERS.test(entry.name)) await walk(child);
      else if (entry.isFile && pattern.test(child) && !found.includes(child)) found.push(child);
    }
  };
  await walk("").catch(() => {});
  return found;
}

/** Whether a path is a file. */
export function isFile(file: string): boolean {
  try {
    return Deno.statSync(file).isFile;
  } catch {
    return false;
  }
}

/**
 * A canary file's name beside a test file, taking that file's ending so that
 * the runner's pattern for test files matches it: `math.test.ts` gives
 * `finishline-canary-<token>.test.ts`, `math_test.ts` gives
 * `finishline-canary-<token>_test.ts`, `test.ts` gives `finishline-canary-<token>.test.ts`.
 */
export function besideName(neighbour: string, token: string): string {
  const base = path.basename(neighbour);
  const ending = /([._-](?:test|spec))?(\.[^.]+)+$/.exec(base);
  const stem = ending ? base.slice(0, ending.index) : base;
  const suffix = /^(?:test|spec)$/.test(stem) ? `.${base}` : ending?.[0] ?? "";
  return `finishline-canary-${token}${suffix}`;
}

/** Options of a runner's command line: which take a value, and which are left out of the canary's. */
export interface RunnerOptions {
  /** Options written with their value as the next word (`--config x`). */
  values: readonly string[];
  /**
   * Options that choose which tests run (names, paths, shards, changed
   * files, stopping at the first failure) or send the output elsewhere: the
   * canary chooses its own tests, and its output is read.
   */
  dropped: readonly string[];
  /**
   * What a test file's path looks like, for runners whose other arguments may
   * be an option's value; without it, every argument selects tests.
   */
  testFile?: RegExp;
}

/** The runner's command line as a check gives it: its variables, the runner's word, and its options. */
export interface RunnerLine {
  /** `NAME=value` words before the command. */
  env: string[];
  /** The program as the check names it (`node`, `tsx`, `./node_modules/.bin/jest`). */
  program: string;
  /** The options kept, in order (test selections and file arguments left out). */
  options: string[];
}

/**
 * The options the checks pass to the runner, directly or through the one
 * command of a package script or deno task, without what selects tests: the
 * canary runs under the same options (a `--require`, a config file, build
 * tags), so one that tampers with the runner acts on it too.
 *
 * @param context The copy and the checks.
 * @param runner The runner.
 * @param table Its options.
 * @returns The line, or undefined when no check runs the runner in one command.
 */
export async function runnerLine(
  context: PlaceContext,
  runner: TestRunner,
  table: RunnerOptions,
): Promise<RunnerLine | undefined> {
  const read = (file: string) =>
    Deno.readTextFile(path.join(context.dir, file)).catch(() => undefined);
  for (const check of context.checks) {
    let text = check.command;
    if (runnerCommand(text) !== runner) {
      const script = await scriptOf(text, read);
      if ("why" in script || runnerCommand(script.text) !== runner) continue;
      text = script.text;
    }
    const split = splitShell(text);
    if (!("units" in split) || split.units.length !== 1) continue;
    return lineOf(split.units[0].words, runner, table, (word) => selects(context.dir, word, table));
  }
  return undefined;
}

/** Subcommands between the program and its options. */
const SUBCOMMANDS: Partial<Record<TestRunner, RegExp>> = {
  deno: /^test$/,
  go: /^test$/,
  cargo: /^(?:\+\S+|test)$/,
  vitest: /^(?:run|watch|dev)$/,
};

/**
 * Whether a word that is not an option names tests: a glob, a folder, a file
 * the runner takes as a test file, or anything at all for runners whose
 * every argument is a test selection (Go's packages, cargo's name filters).
 * Other words are an option's value (`--preload setup.ts`) and kept.
 */
function selects(dir: string, word: string, table: RunnerOptions): boolean {
  if (table.testFile === undefined || /[*?[{]/.test(word)) return true;
  const target = path.resolve(dir, word);
  try {
    if (Deno.statSync(target).isDirectory) return true;
  } catch {
    return false;
  }
  return table.testFile.test(path.relative(dir, target).split(path.sep).join("/"));
}

function lineOf(
  words: string[],
  runner: TestRunner,
  table: RunnerOptions,
  selection: (word: string) => boolean,
): RunnerLine {
  const env: string[] = [];
  let at = 0;
  for (; at < words.length; at++) {
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[at])) env.push(words[at]);
    else if (words[at] !== "npx" && words[at] !== "cross-env") break;
  }
  // The program, then its subcommands (`deno test`, `cargo +nightly test`, `vitest run`).
  const program = words[at++] ?? "";
  const subcommand = SUBCOMMANDS[runner];
  while (subcommand && at < words.length && subcommand.test(words[at])) at++;
  const options: string[] = [];
  const values = new Set(table.values);
  const dropped = new Set(table.dropped);
  for (; at < words.length; at++) {
    const word = words[at];
    // What follows `--` (cargo's test binary, deno's script) or go's -args is the program's own.
    if (word === "--" || (runner === "go" && /^--?args$/.test(word))) break;
    if (!word.startsWith("-") || word === "-") {
      if (!selection(word)) options.push(word);
      continue;
    }
    const name = runner === "go" ? word.replace(/^--?/, "-").split("=")[0] : word.split("=")[0];
    const takesValue = values.has(name) && !word.includes("=");
    const value = takesValue && at + 1 < words.length ? words[++at] : undefined;
    if (dropped.has(name)) continue;
    options.push(word);
    if (value !== undefined) options.push(value);
  }
  return { env, program, options };
}

/**
 * A shell command line: variables, then words, each quoted as needed.
 *
 * @param env `NAME=value` words.
 * @param words The command and its arguments.
 * @returns The text.
 */
export function commandLine(env: readonly string[], words: readonly string[]): string {
  const assignments = env.map((word) => {
    const at = word.indexOf("=");
    return `${word.slice(0, at)}=${shellQuote(word.slice(at + 1))}`;
  });
  return [...assignments, ...words.map(shellQuote)].join(" ");
}

/** A relative specifier from `from` (a folder) to `file`, starting with `./` or `../`. */
export function relativeSpecifier(from: string, file: string): string {
  const relative = path.relative(from, file).split(path.sep).join("/");
  return relative.startsWith(".") ? relative : `./${relative}`;
}

/** The nearest folder at or above `folder`, up to `root`, for which `has` holds. */
export function nearest(
  root: string,
  folder: string,
  has: (folder: string) => boolean,
): string | undefined {
  for (let at = folder;; at = path.dirname(at)) {
    if (has(at)) return at;
    if (path.relative(root, at) === "" || !at.startsWith(root)) return undefined;
  }
}
