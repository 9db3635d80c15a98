/**
 * Reading a test runner's output: which tests failed, and how many ran,
 * passed, failed, were skipped, ignored or left as todo.
 *
 * {@linkcode parseTestReport} knows the console output of `node --test` (spec
 * and TAP reporters), `deno test`, pytest, `go test`, `cargo test`, jest,
 * vitest and mocha (spec, TAP and json reporters). Colour codes are stripped
 * first, output cut off part-way still yields the failures it holds, and the
 * output of workspace runners is read package by package: pnpm's `-r` line
 * prefixes, yarn's `[pkg]: `, turbo's `pkg:test: `, and the `> pkg@1.0.0 test`
 * and `> nx run pkg:test` headers of npm workspaces and nx.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTestReport } from "@finishline/agents";
 * import { testCounts, testsRun } from "./test_report.ts";
 *
 * const report = parseTestReport(
 *   "--- FAIL: TestAdd (0.00s)\nFAIL\nFAIL\texample.com/m\t0.002s\n",
 * );
 * assert.deepEqual(report, { runner: "go", failed: ["TestAdd"], failedCount: 1 });
 * assert.equal(testsRun(report), undefined);
 * assert.deepEqual(testCounts(report), { failed: 1 });
 * ```
 *
 * @module
 */

import type { TestCounts } from "../../record/iteration.ts";

export type { TestCounts };

/** Test runners whose output names failing tests. */
export type TestRunner =
  | "node"
  | "deno"
  | "pytest"
  | "go"
  | "cargo"
  | "jest"
  | "vitest"
  | "mocha";

/** What a test run's output says. */
export interface TestReport {
  /** The format recognised; absent when none was. */
  runner?: TestRunner;
  /**
   * Names of the failing tests, in order, without repeats, as the runner names
   * them: "math > adds" for vitest and jest describe nesting, "tests/test_x.py::test_add"
   * for pytest, "TestAdd" or "TestAdd/sub" for go, "tests::adds" for cargo, "adds"
   * or "suite > adds" for node --test subtests, "parent > step" for deno test steps,
   * "suite > adds" for mocha's spec reporter and "suite adds" (its full title) for
   * its TAP and json reporters. A parent reported failing only because a nested
   * test failed is left out in favour of that nested test. In the output of
   * several workspace packages, each name starts with its package: "packages/a: adds".
   */
  failed: string[];
  /** Tests that passed, from the summary line, when given. */
  passed?: number;
  /** Tests that failed, from the summary line, when given. */
  failedCount?: number;
  /**
   * Tests skipped, when the runner reports them: node, pytest, `go test -v`,
   * jest, vitest, and mocha's pending tests.
   */
  skipped?: number;
  /** Tests ignored, when the runner reports them: cargo's `#[ignore]`, deno's `ignore` (steps included). */
  ignored?: number;
  /** Tests left as todo, when the runner reports them: node, jest, vitest, and pytest's xfail and xpass. */
  todo?: number;
  /** Names of the skipped, ignored and todo tests, where the output names them. */
  skippedTests?: string[];
}

/**
 * Read failing test names and counts from a runner's output; `hint` picks the
 * format first, otherwise every format is tried and the one that recognises a
 * summary wins. Never throws.
 *
 * Without a summary line (output cut off part-way), the format that names the
 * most failing tests wins and the counts are left out. The counts are those of
 * the summary lines, summed when the output holds several runs: pytest's errors
 * count as failed, cargo's are summed over its test binaries, and go's are
 * counted from its `--- PASS`, `--- SKIP` (verbose runs only) and `--- FAIL`
 * lines. A count the runner reports only when it is not zero (jest's skipped,
 * pytest's xfailed) is 0 when its summary leaves it out. Output that no runner's
 * format recognises but that holds a line such as "Tests failed: 4" or
 * "4 tests failed" gives those counts, without a runner.
 *
 * @param output What the runner printed (stdout and stderr), colour codes and all.
 * @param hint The runner believed to have printed it.
 * @returns The failing tests and counts; `{ failed: [] }` when no format is recognised.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTestReport } from "@finishline/agents";
 *
 * const output = [
 *   "FAILED tests/test_math.py::test_add - assert (1 + 1) == 3",
 *   "========== 1 failed, 2 passed, 1 skipped in 0.03s ==========",
 * ].join("\n");
 * assert.deepEqual(parseTestReport(output, "pytest"), {
 *   runner: "pytest",
 *   failed: ["tests/test_math.py::test_add"],
 *   passed: 2,
 *   failedCount: 1,
 *   skipped: 1,
 *   todo: 0,
 * });
 * assert.deepEqual(parseTestReport("Compiling...\nDone."), { failed: [] });
 * assert.deepEqual(parseTestReport("Tests passed: 6\nTests failed: 4"), {
 *   failed: [],
 *   passed: 6,
 *   failedCount: 4,
 * });
 * ```
 */
export function parseTestReport(output: string, hint?: TestRunner): TestReport {
  try {
    const lines = plainLines(typeof output === "string" ? output : "");
    const streams = splitStreams(lines);
    if (streams.length === 1) return parseStream(streams[0].lines, hint)?.report ?? { failed: [] };
    // Names carry their package only when several packages ran, so that a
    // single-package project's names read as its runner prints them.
    const labels = new Set(streams.flatMap((stream) => stream.label ?? []));
    return merge(
      streams.flatMap((stream) => {
        const parsed = parseStream(stream.lines, hint);
        if (parsed === undefined) return [];
        const label = labels.size > 1 && stream.label !== "." ? stream.label : undefined;
        return [{ parsed, label }];
      }),
    );
  } catch {
    // The parsers only match strings; this guards the promise made to callers.
    return { failed: [] };
  }
}

/**
 * Total tests run (passed + failed) when known.
 *
 * @param report A report from {@linkcode parseTestReport}.
 * @returns `passed + failedCount`, or `undefined` when either is unknown.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTestReport } from "@finishline/agents";
 * import { testsRun } from "./test_report.ts";
 *
 * assert.equal(testsRun(parseTestReport("ok | 3 passed | 1 failed (12ms)")), 4);
 * assert.equal(testsRun({ failed: ["adds"], failedCount: 1 }), undefined);
 * ```
 */
export function testsRun(report: TestReport): number | undefined {
  if (report.passed === undefined || report.failedCount === undefined) return undefined;
  return report.passed + report.failedCount;
}

/**
 * The counts of a report, for comparing two runs of a check: tests run
 * (passed + failed), passed, failed, skipped, ignored and todo, each left out
 * when the output does not say.
 *
 * @param report A report from {@linkcode parseTestReport}.
 * @returns The counts, or `undefined` when the output gave none.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTestReport } from "@finishline/agents";
 * import { testCounts } from "./test_report.ts";
 *
 * const output = "test result: ok. 1 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out";
 * assert.deepEqual(testCounts(parseTestReport(output)), {
 *   run: 1,
 *   passed: 1,
 *   failed: 0,
 *   ignored: 2,
 * });
 * assert.equal(testCounts(parseTestReport("Compiling...")), undefined);
 * ```
 */
export function testCounts(report: TestReport): TestCounts | undefined {
  const counts: TestCounts = {};
  const run = testsRun(report);
  if (run !== undefined) counts.run = run;
  if (report.passed !== undefined) counts.passed = report.passed;
  if (report.failedCount !== undefined) counts.failed = report.failedCount;
  if (report.skipped !== undefined) counts.skipped = report.skipped;
  if (report.ignored !== undefined) counts.ignored = report.ignored;
  if (report.todo !== undefined) counts.todo = report.todo;
  return Object.keys(counts).length > 0 ? counts : undefined;
}

interface Parsed {
  report: TestReport;
  /** Whether a summary line was found, which makes the format certain. */
  summary: boolean;
}

type Parser = (lines: string[]) => Parsed;

// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/**
 * The lines of a runner's output as a terminal would leave them: colour codes
 * removed, and of a line redrawn with a carriage return only its last part.
 *
 * @param output The output.
 * @returns Its lines.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { plainLines } from "./test_report.ts";
 *
 * assert.deepEqual(plainLines("\x1b[31mFAILED\x1b[0m\n10%\r100%"), ["FAILED", "100%"]);
 * ```
 */
export function plainLines(output: string): string[] {
  return output.replace(ANSI, "").split(/\r?\n/).map((line) => {
    // A lone carriage return redraws the line; what is left on screen is the last part.
    const cr = line.lastIndexOf("\r");
    return cr === -1 ? line : line.slice(cr + 1);
  });
}

/** One runner's output, and the package it ran for when a workspace runner said. */
interface Stream {
  /** The package (a folder for pnpm, a name otherwise); "." is the workspace root. */
  label?: string;
  lines: string[];
}

/** pnpm -r announces each package's script: "packages/a test$ node --test". */
const PNPM_START = /^(\S+) (\S+)\$ \S/;
/** turbo's first line of each task: "a:test: cache miss, executing 3f9d34ae3e0e61c5". */
const TURBO_START = /^([^\s:]+):([^\s:]+): cache (?:miss|hit|bypass)\b/;
/** yarn workspaces foreach -v: "[a]: ✔ adds", and yarn 3's report form "➤ YN0000: [a]: ". */
const YARN_LINE = /^(?:➤ YN0000: )?\[([^\]\s]+)\]:(?: (.*))?$/;
/** npm (and pnpm for one package) before a script: "> a@1.0.0 test", then "> node --test". */
const NPM_HEADER = /^> (\S+)@\S+ \S+(?: \S.*)?$/;
/** nx before each task: "> nx run a:test". */
const NX_HEADER = /^> nx run (\S+?):\S+/;

/**
 * The output cut into one stream per package and run: lines carrying a
 * workspace runner's prefix go to that package without the prefix (parallel
 * runs interleave their lines), and a header starts a new run.
 */
function splitStreams(lines: string[]): Stream[] {
  const prefixed = new Map<string, Stream>();
  const prefixes: Array<{ prefix: string; key: string; label: string }> = [];
  const yarnCounts = new Map<string, number>();
  for (const line of lines) {
    const pnpm = PNPM_START.exec(line);
    if (pnpm !== null) {
      prefixes.push({ prefix: `${pnpm[1]} ${pnpm[2]}:`, key: line, label: pnpm[1] });
      continue;
    }
    const turbo = TURBO_START.exec(line);
    if (turbo !== null) {
      prefixes.push({ prefix: `${turbo[1]}:${turbo[2]}:`, key: line, label: turbo[1] });
      continue;
    }
    const yarn = YARN_LINE.exec(line);
    if (yarn !== null) yarnCounts.set(yarn[1], (yarnCounts.get(yarn[1]) ?? 0) + 1);
  }
  // A "[name]: " seen once is more likely a log line than a package's output.
  const yarnLabels = new Set([...yarnCounts].filter(([, count]) => count > 1).map(([l]) => l));
  const outer: string[] = [];
  for (const line of lines) {
    const match = prefixes.find(({ prefix }) => line === prefix || line.startsWith(`${prefix} `));
    if (match !== undefined) {
      const stream = prefixed.get(match.prefix) ?? { label: match.label, lines: [] };
      prefixed.set(match.prefix, stream);
      stream.lines.push(line.slice(match.prefix.length + 1));
      continue;
    }
    const yarn = YARN_LINE.exec(line);
    if (yarn !== null && yarnLabels.has(yarn[1])) {
      const key = `[${yarn[1]}]`;
      const stream = prefixed.get(key) ?? { label: yarn[1], lines: [] };
      prefixed.set(key, stream);
      stream.lines.push(yarn[2] ?? "");
      continue;
    }
    outer.push(line);
  }
  return [{ lines: outer }, ...prefixed.values()].flatMap(splitHeaders);
}

/** A stream cut at npm and nx headers, each run named after its package. */
function splitHeaders(stream: Stream): Stream[] {
  const runs: Stream[] = [{ label: stream.label, lines: [] }];
  for (const [i, line] of stream.lines.entries()) {
    const nx = NX_HEADER.exec(line);
    const npm = nx === null ? NPM_HEADER.exec(line) : null;
    // npm's header is followed by the script's command line, which tells it from a quote.
    if (nx !== null || (npm !== null && stream.lines[i + 1]?.startsWith("> "))) {
      runs.push({ label: stream.label ?? (nx ?? npm)![1], lines: [] });
      continue;
    }
    runs[runs.length - 1].lines.push(line);
  }
  return runs.filter((run, i) => i > 0 || run.lines.some((line) => line.trim() !== ""));
}

/** One stream read with the hinted format first, then every format, then the generic counts. */
function parseStream(lines: string[], hint: TestRunner | undefined): Parsed | undefined {
  if (hint !== undefined) {
    const parser = PARSERS.find(([runner]) => runner === hint);
    if (parser !== undefined) {
      const parsed = parser[1](lines);
      if (parsed.summary || parsed.report.failed.length > 0) return parsed;
    }
  }
  let best: Parsed | undefined;
  for (const [, parse] of PARSERS) {
    const parsed = parse(lines);
    if (parsed.summary) return parsed;
    if (parsed.report.failed.length > (best?.report.failed.length ?? 0)) best = parsed;
  }
  return best ?? parseGeneric(lines);
}

const COUNT_FIELDS = ["passed", "failedCount", "skipped", "ignored", "todo"] as const;

/** The reports of several packages' runs as one: names prefixed with their package, counts summed. */
function merge(parts: Array<{ parsed: Parsed; label?: string }>): TestReport {
  const result: TestReport = { failed: [] };
  const runner = parts.find((part) => part.parsed.summary)?.parsed.report.runner ??
    parts.find((part) => part.parsed.report.runner !== undefined)?.parsed.report.runner;
  if (runner !== undefined) result.runner = runner;
  const failed = new Names();
  const skipped = new Names();
  for (const { parsed: { report }, label } of parts) {
    const named = (name: string) => label === undefined ? name : `${label}: ${name}`;
    for (const name of report.failed) failed.add(named(name));
    for (const name of report.skippedTests ?? []) skipped.add(named(name));
    for (const field of COUNT_FIELDS) {
      if (report[field] !== undefined) result[field] = (result[field] ?? 0) + report[field];
    }
  }
  result.failed = failed.list();
  if (skipped.list().length > 0) result.skippedTests = skipped.list();
  return result;
}

/** Failing names in first-seen order, without repeats. */
class Names {
  #names: string[] = [];
  #seen = new Set<string>();
  #leaves: string[] = [];

  add(name: string): void {
    const trimmed = name.trim();
    if (trimmed === "" || this.#seen.has(trimmed)) return;
    this.#seen.add(trimmed);
    this.#names.push(trimmed);
  }

  /** A name given without its parents; kept only if no full name ends with it. */
  addLeaf(name: string): void {
    this.#leaves.push(name.trim());
  }

  list(): string[] {
    const names = [...this.#names];
    for (const leaf of this.#leaves) {
      if (leaf === "" || names.some((n) => n === leaf || n.endsWith(` > ${leaf}`))) continue;
      names.push(leaf);
    }
    return names;
  }
}

type Status = "passed" | "failed" | "skipped";

/**
 * Nested results of runners that report children before their parent (node
 * --test, TAP, deno test steps), turned into "parent > child" names. The
 * headers these runners print when a parent starts name the parents of
 * children whose parent never reported, as in output cut off part-way.
 */
class Tree {
  #entries: { level: number; path: string[]; parents: string[]; status: Status }[] = [];
  #open: string[] = [];

  open(level: number, name: string): void {
    this.#open.length = Math.min(this.#open.length, level);
    this.#open[level] = name;
  }

  add(level: number, name: string, status: Status): void {
    for (let i = this.#entries.length - 1; i >= 0 && this.#entries[i].level > level; i--) {
      this.#entries[i].path.unshift(name);
    }
    const parents = Array.from({ length: level }, (_, l) => this.#open[l] ?? "");
    this.#entries.push({ level, path: [name], parents, status });
    this.#open.length = Math.min(this.#open.length, level);
  }

  failedNames(): string[] {
    return dropParents(this.#names("failed"), " > ");
  }

  skippedNames(): string[] {
    return this.#names("skipped");
  }

  #names(status: Status): string[] {
    return this.#entries.filter((e) => e.status === status).map((e) => {
      const missing = e.parents.slice(0, Math.max(0, e.level - (e.path.length - 1)));
      return [...missing.filter((p) => p !== ""), ...e.path].join(" > ");
    });
  }
}

/** Leave out names whose failure is only that of a nested test also named. */
function dropParents(names: string[], separator: string): string[] {
  return names.filter((name) => !names.some((other) => other.startsWith(name + separator)));
}

interface Found {
  failed: string[];
  passed?: number;
  failedCount?: number;
  skipped?: number;
  ignored?: number;
  todo?: number;
  skippedTests?: string[];
}

function report(runner: TestRunner | undefined, found: Found): TestReport {
  const result: TestReport = runner === undefined
    ? { failed: found.failed }
    : { runner, failed: found.failed };
  for (const field of COUNT_FIELDS) {
    if (found[field] !== undefined) result[field] = found[field];
  }
  const skipped = [...new Set(found.skippedTests ?? [])];
  if (skipped.length > 0) result.skippedTests = skipped;
  return result;
}

function countOf(text: string, word: string): number | undefined {
  const match = new RegExp(`(\\d+) ${word}\\b`).exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** `a + b`, where an unknown count leaves the other as it is. */
function add(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : a + b;
}

// Node's spec reporter prints " # reason" after the duration of a skipped or
// todo test; skipped ones carry "﹣", so a "✖" with it is a failing todo.
const NODE_SPEC = /^( *)(✔|✖|﹣|▶) (.*?)(?: \(([\d.]+m?s)\)(?: # (.*))?)?$/;
const NODE_SPEC_FAILING = /^✖ (.*?)(?: \([\d.]+m?s\)(?: # (.*))?)?$/;
const NODE_TAP = /^( *)(not ok|ok) \d+(?: - (.*))?$/;
const NODE_TAP_SUBTEST = /^( *)# Subtest: (.*)$/;
const NODE_COUNT = /^(?:ℹ|#) (tests|pass|fail|skipped|todo) (\d+)$/;

function parseNode(lines: string[]): Parsed {
  const spec = new Tree();
  const tap = new Tree();
  const names = new Names();
  const counts: Record<string, number> = {};
  let inFailingSection = false;
  let mochaTap = false;
  for (const line of lines) {
    if (MOCHA_TAP.test(line)) mochaTap = true;
    const count = NODE_COUNT.exec(line);
    if (count !== null) {
      // Several runs in one output (`node --test a && node --test b`) add up.
      counts[count[1]] = (counts[count[1]] ?? 0) + Number(count[2]);
      continue;
    }
    if (line === "✖ failing tests:") {
      inFailingSection = true;
      continue;
    }
    // That closing list holds only failures; any other result starts another run.
    if (inFailingSection && /^(?:✔|﹣|▶) |^TAP version/.test(line)) inFailingSection = false;
    if (inFailingSection) {
      // That closing list names tests without their suites.
      const failing = NODE_SPEC_FAILING.exec(line);
      if (failing !== null && failing[2] === undefined) names.addLeaf(failing[1]);
      continue;
    }
    const subtest = NODE_TAP_SUBTEST.exec(line);
    if (subtest !== null) {
      tap.open(Math.floor(subtest[1].length / 4), splitTapDescription(subtest[2]).name);
      continue;
    }
    const tapLine = NODE_TAP.exec(line);
    if (tapLine !== null) {
      const { name, directive } = splitTapDescription(tapLine[3] ?? "");
      const level = Math.floor(tapLine[1].length / 4);
      tap.add(level, name, tapStatus(tapLine[2] === "not ok", directive));
      continue;
    }
    const specLine = NODE_SPEC.exec(line);
    if (specLine === null) continue;
    const [, indent, mark, name, duration, directive] = specLine;
    // A bare "▶ suite" opens a suite; its result comes after its children.
    if (mark === "▶" && duration === undefined) {
      spec.open(Math.floor(indent.length / 2), name);
      continue;
    }
    const status: Status = mark === "﹣" || directive !== undefined
      ? "skipped"
      : mark === "✖"
      ? "failed"
      : "passed";
    spec.add(Math.floor(indent.length / 2), name, status);
  }
  for (const name of [...spec.failedNames(), ...tap.failedNames()]) names.add(name);
  // mocha's TAP reporter prints the same "# pass" lines; its results are not node's.
  const summary = (counts.pass !== undefined || counts.fail !== undefined) && !mochaTap;
  return {
    report: report("node", {
      failed: names.list(),
      passed: counts.pass,
      failedCount: counts.fail,
      skipped: summary ? counts.skipped : undefined,
      todo: summary ? counts.todo : undefined,
      skippedTests: [...spec.skippedNames(), ...tap.skippedNames()],
    }),
    summary,
  };
}

/** A TAP result: "not ok" fails unless marked TODO; SKIP and TODO set the test aside. */
function tapStatus(notOk: boolean, directive: string): Status {
  if (/^(?:skip|todo)\b/i.test(directive)) return "skipped";
  return notOk ? "failed" : "passed";
}

/** Split a TAP description at its first unescaped `#`, undoing TAP's escapes. */
function splitTapDescription(text: string): { name: string; directive: string } {
  const match = /^((?:\\.|[^\\#])*)(?:#\s*(.*))?$/.exec(text);
  const raw = match?.[1] ?? text;
  return { name: raw.trim().replace(/\\(.)/g, "$1"), directive: match?.[2] ?? "" };
}

const DENO_RESULT =
  /^( *)(?:(?:\.{1,2}\/|\/|file:\/\/)\S* => )?(.+) \.\.\. (ok|FAILED|ignored|cancelled)\b(.*\((?:[\d.]+[a-zµ]+)+\))\s*$/;
const DENO_START = /^( *)(?:(?:\.{1,2}\/|\/|file:\/\/)\S* => )?(.+) \.\.\.$/;
const DENO_ERROR_HEADER = /^(.+?) => \S+:\d+:\d+$/;
const DENO_SUMMARY = /^(ok|FAILED) \| (\d+) passed(?: \([^)]*\))? \| (\d+) failed(.*)$/;
const DENO_IGNORED = /\| (\d+) ignored(?: \((\d+) steps?\))?/;

function parseDeno(lines: string[]): Parsed {
  const tree = new Tree();
  const names = new Names();
  let inErrors = false;
  let passed: number | undefined;
  let failedCount: number | undefined;
  let ignored: number | undefined;
  for (const line of lines) {
    const summary = DENO_SUMMARY.exec(line);
    if (summary !== null) {
      passed = (passed ?? 0) + Number(summary[2]);
      failedCount = (failedCount ?? 0) + Number(summary[3]);
      // An ignored step counts: ignoring a failing step is how a test is made to pass.
      const ignoredPart = DENO_IGNORED.exec(summary[4]);
      ignored = (ignored ?? 0) + Number(ignoredPart?.[1] ?? 0) + Number(ignoredPart?.[2] ?? 0);
      inErrors = false;
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === "ERRORS" || trimmed === "FAILURES") {
      inErrors = true;
      continue;
    }
    if (inErrors) {
      const header = DENO_ERROR_HEADER.exec(line);
      if (header !== null) names.add(header[1].split(" ... ").join(" > "));
      else if (/^\S+ \(uncaught error\)$/.test(line)) names.add(line);
      continue;
    }
    const result = DENO_RESULT.exec(line);
    if (result !== null) {
      const status: Status = result[3] === "FAILED"
        ? "failed"
        : result[3] === "ignored"
        ? "skipped"
        : "passed";
      tree.add(Math.floor(result[1].length / 2), result[2], status);
      continue;
    }
    const started = DENO_START.exec(line);
    if (started !== null) tree.open(Math.floor(started[1].length / 2), started[2]);
  }
  const listed = new Names();
  for (const name of tree.failedNames()) listed.add(name);
  for (const name of names.list()) listed.add(name);
  return {
    report: report("deno", {
      failed: dropParents(listed.list(), " > "),
      passed,
      failedCount,
      ignored,
      skippedTests: tree.skippedNames(),
    }),
    summary: passed !== undefined,
  };
}

const PYTEST_SHORT = /^(?:FAILED|ERROR) (.+?)(?: - .*)?$/;
const PYTEST_SHORT_XFAIL = /^(?:XFAIL|XPASS) (\S+?\.py\S*)(?: - .*)?$/;
const PYTEST_SHORT_SKIPPED = /^SKIPPED \[\d+\] (\S+?\.py:\d+)(?::.*)?$/;
const PYTEST_VERBOSE =
  /^(\S+?\.py(?:::.+?)?) (FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS)(?: \(.*\))?(?:\s+\[\s*\d+%\])?$/;
const PYTEST_SUMMARY = /^=*\s*(.+?) in [\d.]+s\b.*?=*$/;
const PYTEST_SUMMARY_PART =
  /^\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)$/;

function parsePytest(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  let passed: number | undefined;
  let failedCount: number | undefined;
  let skipped: number | undefined;
  let todo: number | undefined;
  for (const line of lines) {
    const verbose = PYTEST_VERBOSE.exec(line);
    if (verbose !== null) {
      if (verbose[2] === "FAILED" || verbose[2] === "ERROR") names.add(verbose[1]);
      if (/^(?:SKIPPED|XFAIL|XPASS)$/.test(verbose[2])) skippedTests.push(verbose[1]);
      continue;
    }
    const short = PYTEST_SHORT.exec(line);
    if (short !== null && /\.py\b/.test(short[1])) {
      names.add(short[1]);
      continue;
    }
    const set = PYTEST_SHORT_XFAIL.exec(line) ?? PYTEST_SHORT_SKIPPED.exec(line);
    if (set !== null) {
      skippedTests.push(set[1]);
      continue;
    }
    const summary = PYTEST_SUMMARY.exec(line);
    if (summary === null) continue;
    const text = summary[1].trim();
    if (text === "no tests ran") {
      passed = add(passed, 0);
      failedCount = add(failedCount, 0);
      skipped = add(skipped, 0);
      todo = add(todo, 0);
    } else if (text.split(", ").every((part) => PYTEST_SUMMARY_PART.test(part))) {
      // tox and nox print one summary per environment; they add up.
      passed = add(passed, countOf(text, "passed") ?? 0);
      failedCount = add(
        failedCount,
        (countOf(text, "failed") ?? 0) + (countOf(text, "errors?") ?? 0),
      );
      skipped = add(skipped, countOf(text, "skipped") ?? 0);
      // An xfail mark sets a failing test aside as todo does.
      todo = add(todo, (countOf(text, "xfailed") ?? 0) + (countOf(text, "xpassed") ?? 0));
    }
  }
  return {
    report: report("pytest", {
      failed: names.list(),
      passed,
      failedCount,
      skipped,
      todo,
      skippedTests,
    }),
    summary: passed !== undefined,
  };
}

const GO_RESULT = /^\s*--- (FAIL|PASS|SKIP): (\S+) \([\d.]+s\)/;
const GO_PACKAGE = /^(ok|FAIL)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[([^\]]+)\])(?:\s.*)?$/;

function parseGo(lines: string[]): Parsed {
  const failed: string[] = [];
  const passedNames: string[] = [];
  const skippedNames: string[] = [];
  const brokenPackages: string[] = [];
  let verbose = false;
  let summary = false;
  for (const line of lines) {
    if (line.startsWith("=== RUN ")) verbose = true;
    const result = GO_RESULT.exec(line);
    if (result !== null) {
      if (result[1] === "FAIL") failed.push(result[2]);
      // Only verbose runs print passes and skips.
      if (result[1] === "PASS" || result[1] === "SKIP") verbose = true;
      if (result[1] === "PASS") passedNames.push(result[2]);
      if (result[1] === "SKIP") skippedNames.push(result[2]);
      continue;
    }
    const pkg = GO_PACKAGE.exec(line);
    if (pkg !== null) {
      summary = true;
      // A package that did not build has no test names; the package stands for them.
      if (pkg[1] === "FAIL" && pkg[3] !== undefined && pkg[3] !== "no test files") {
        brokenPackages.push(pkg[2]);
      }
    }
  }
  const names = new Names();
  for (const name of dropParents(failed, "/")) names.add(name);
  for (const name of brokenPackages) names.add(name);
  const all = [...failed, ...passedNames, ...skippedNames];
  const leaves = (list: string[]) =>
    new Set(list.filter((name) => !all.some((n) => n.startsWith(`${name}/`))));
  const list = names.list();
  const counted = summary && verbose;
  return {
    report: report("go", {
      failed: list,
      passed: counted ? leaves(passedNames).size : undefined,
      failedCount: summary ? list.length : undefined,
      skipped: counted ? leaves(skippedNames).size : undefined,
      skippedTests: [...leaves(skippedNames)],
    }),
    summary,
  };
}

const CARGO_RESULT = /^test (.+) \.\.\. (FAILED|ok|ignored\b.*)$/;
const CARGO_SUMMARY =
  /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;(?: (\d+) ignored;)?/;

function parseCargo(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  let passed: number | undefined;
  let failedCount: number | undefined;
  let ignored: number | undefined;
  let failuresList = false;
  for (const [i, line] of lines.entries()) {
    const summary = CARGO_SUMMARY.exec(line);
    if (summary !== null) {
      passed = (passed ?? 0) + Number(summary[1]);
      failedCount = (failedCount ?? 0) + Number(summary[2]);
      ignored = add(ignored, summary[3] === undefined ? undefined : Number(summary[3]));
      failuresList = false;
      continue;
    }
    const result = CARGO_RESULT.exec(line);
    if (result !== null) {
      if (result[2] === "FAILED") names.add(result[1]);
      if (result[2].startsWith("ignored")) skippedTests.push(result[1]);
      continue;
    }
    if (line === "failures:") {
      // The first "failures:" heads the captured output; the second lists the names.
      const next = lines.slice(i + 1).find((l) => l.trim() !== "");
      failuresList = next !== undefined && !next.startsWith("---- ");
      continue;
    }
    if (failuresList) {
      if (line.startsWith("    ") && line.trim() !== "") names.add(line);
      else if (line.trim() !== "") failuresList = false;
    }
  }
  return {
    report: report("cargo", { failed: names.list(), passed, failedCount, ignored, skippedTests }),
    summary: passed !== undefined,
  };
}

const JEST_TITLE = /^\s*● (.+)$/;
const JEST_FILE = /^\s*(?:FAIL|PASS)\s+(\S.*?)\s*(?:\(\d.*\))?$/;
const JEST_CROSS = /^\s*✕ (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$/;
const JEST_SET_ASIDE = /^\s*(?:○ skipped|✎ todo) (.+)$/;
const JEST_SUMMARY = /^Tests:\s+(.*\d+ total.*)$/;

function parseJest(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  let file: string | undefined;
  let passed: number | undefined;
  let failedCount: number | undefined;
  let skipped: number | undefined;
  let todo: number | undefined;
  for (const line of lines) {
    const summary = JEST_SUMMARY.exec(line);
    if (summary !== null) {
      passed = add(passed, countOf(summary[1], "passed") ?? 0);
      failedCount = add(failedCount, countOf(summary[1], "failed") ?? 0);
      skipped = add(skipped, countOf(summary[1], "skipped") ?? 0);
      todo = add(todo, countOf(summary[1], "todo") ?? 0);
      continue;
    }
    const title = JEST_TITLE.exec(line);
    if (title !== null) {
      const text = title[1].trim();
      if (text === "Test suite failed to run") {
        if (file !== undefined) names.add(file);
      } else if (
        text !== "Console" && !/^(?:Validation|Deprecation) (?:Error|Warning)/.test(text)
      ) {
        names.add(text.split(" › ").join(" > "));
      }
      continue;
    }
    const cross = JEST_CROSS.exec(line);
    if (cross !== null) {
      names.addLeaf(cross[1]);
      continue;
    }
    const aside = JEST_SET_ASIDE.exec(line);
    if (aside !== null) {
      skippedTests.push(aside[1].trim());
      continue;
    }
    const fileLine = JEST_FILE.exec(line);
    if (fileLine !== null && !fileLine[1].includes(" > ")) file = fileLine[1];
  }
  return {
    report: report("jest", {
      failed: names.list(),
      passed,
      failedCount,
      skipped,
      todo,
      skippedTests,
    }),
    summary: passed !== undefined,
  };
}

const VITEST_FAIL = /^\s*FAIL\s+(?:\|[^|]+\|\s+)?(.+?)\s*$/;
const VITEST_CROSS = /^\s*× (.+?)(?: \d+(?:\.\d+)?m?s)?(?: \[retry.*\])?$/;
const VITEST_SET_ASIDE = /^\s*(?:↓|□) (.+?)(?: \[(?:skipped|todo)\])?$/;
const VITEST_SUMMARY = /^\s*Tests\s+(.*\d+ (?:passed|failed|skipped|todo).*\(\d+\))\s*$/;

function parseVitest(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  let passed: number | undefined;
  let failedCount: number | undefined;
  let skipped: number | undefined;
  let todo: number | undefined;
  for (const line of lines) {
    const summary = VITEST_SUMMARY.exec(line);
    if (summary !== null) {
      passed = add(passed, countOf(summary[1], "passed") ?? 0);
      failedCount = add(failedCount, countOf(summary[1], "failed") ?? 0);
      skipped = add(skipped, countOf(summary[1], "skipped") ?? 0);
      todo = add(todo, countOf(summary[1], "todo") ?? 0);
      continue;
    }
    if (/^\s*Tests\s+no tests\s*$/.test(line)) {
      passed = add(passed, 0);
      failedCount = add(failedCount, 0);
      skipped = add(skipped, 0);
      todo = add(todo, 0);
      continue;
    }
    const fail = VITEST_FAIL.exec(line);
    if (fail !== null) {
      const parts = fail[1].split(" > ");
      // The first part is the test file; a file that failed to load shows " [ file ]".
      if (parts.length > 1) names.add(parts.slice(1).join(" > "));
      else if (/ \[ .+ \]$/.test(fail[1])) names.add(fail[1].replace(/ \[ .+ \]$/, ""));
      continue;
    }
    const cross = VITEST_CROSS.exec(line);
    if (cross !== null) {
      names.addLeaf(cross[1]);
      continue;
    }
    const aside = VITEST_SET_ASIDE.exec(line);
    if (aside !== null) {
      // The verbose reporter starts the name with its file.
      const parts = aside[1].split(" > ");
      const file = parts.length > 1 && /\.[cm]?[jt]sx?$/.test(parts[0]);
      skippedTests.push((file ? parts.slice(1) : parts).join(" > "));
    }
  }
  return {
    report: report("vitest", {
      failed: names.list(),
      passed,
      failedCount,
      skipped,
      todo,
      skippedTests,
    }),
    summary: passed !== undefined,
  };
}

const MOCHA_PASSING = /^\s*(\d+) passing \(\d+(?:\.\d+)?[a-z]+\)\s*$/;
const MOCHA_PENDING = /^\s*(\d+) pending\s*$/;
const MOCHA_FAILING = /^\s*(\d+) failing\s*$/;
const MOCHA_DETAIL = /^ {2}\d+\) (.*)$/;
const MOCHA_LISTED = /^((?: {2})+)(?:(?:✔|✓) .*|- (.*)|\d+\) (.*)|(\S.*))$/;
const MOCHA_TAP = /^(not ok|ok) \d+ (?!- )(.*?)(?: # (SKIP|TODO)\b.*)?$/;
const MOCHA_TAP_COUNT = /^# (pass|fail) (\d+)$/;

/** mocha's spec reporter (the default), its TAP reporter ("ok 1 suite test", no dash) and its json reporter. */
function parseMocha(lines: string[]): Parsed {
  const json = parseMochaJson(lines);
  if (json !== undefined) return json;
  const details = new Names();
  const listed = new Names();
  const tapFailed = new Names();
  const skippedTests: string[] = [];
  const suites: string[] = [];
  const tap: Record<string, number> = {};
  let tapSkipped = 0;
  let tapLines = 0;
  let passed: number | undefined;
  let pending: number | undefined;
  let failing: number | undefined;
  let inDetails = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const passing = MOCHA_PASSING.exec(line);
    if (passing !== null) {
      passed = (passed ?? 0) + Number(passing[1]);
      inDetails = false;
      continue;
    }
    const pendingLine = MOCHA_PENDING.exec(line);
    if (pendingLine !== null && passed !== undefined) {
      pending = (pending ?? 0) + Number(pendingLine[1]);
      continue;
    }
    const failingLine = MOCHA_FAILING.exec(line);
    if (failingLine !== null && passed !== undefined) {
      failing = (failing ?? 0) + Number(failingLine[1]);
      inDetails = true;
      continue;
    }
    if (inDetails) {
      // "  2) math\n       integers\n         adds:": the title's parts, the last ending in ":".
      const detail = MOCHA_DETAIL.exec(line);
      if (detail === null) continue;
      const parts = [detail[1].trim()];
      while (!parts[parts.length - 1].endsWith(":") && /^ {4,}\S/.test(lines[i + 1] ?? "")) {
        parts.push(lines[++i].trim());
      }
      const last = parts[parts.length - 1];
      if (last.endsWith(":")) {
        parts[parts.length - 1] = last.slice(0, -1);
        details.add(parts.join(" > "));
      }
      continue;
    }
    const tapLine = MOCHA_TAP.exec(line);
    if (tapLine !== null) {
      tapLines++;
      if (tapLine[3] !== undefined) {
        skippedTests.push(tapLine[2]);
        if (tapLine[3] === "SKIP") tapSkipped++;
      } else if (tapLine[1] === "not ok") tapFailed.add(tapLine[2]);
      continue;
    }
    const tapCount = MOCHA_TAP_COUNT.exec(line);
    if (tapCount !== null) {
      tap[tapCount[1]] = (tap[tapCount[1]] ?? 0) + Number(tapCount[2]);
      continue;
    }
    // The list printed as tests run, indented two spaces a level; it names the
    // failures when the output stops before its details.
    const item = MOCHA_LISTED.exec(line);
    if (item === null || passed !== undefined) continue;
    const level = item[1].length / 2 - 1;
    const [, , pendingName, failedName, suite] = item;
    if (suite !== undefined) {
      suites.length = level;
      suites[level] = suite.trim();
      continue;
    }
    const path = [...suites.slice(0, level), (pendingName ?? failedName ?? "").trim()];
    if (pendingName !== undefined) skippedTests.push(path.join(" > "));
    if (failedName !== undefined) listed.add(path.join(" > "));
  }
  if (passed !== undefined) {
    const failed = details.list().length > 0 ? details.list() : listed.list();
    return {
      report: report("mocha", {
        failed,
        passed,
        failedCount: failing ?? 0,
        skipped: pending ?? 0,
        skippedTests,
      }),
      summary: true,
    };
  }
  // mocha's TAP has node's "# pass" lines, so it is told apart by its results.
  const tapSummary = tapLines > 0 && tap.pass !== undefined;
  if (tapLines > 0) {
    return {
      report: report("mocha", {
        failed: tapFailed.list(),
        passed: tap.pass,
        failedCount: tap.fail,
        skipped: tapSummary ? tapSkipped : undefined,
        skippedTests,
      }),
      summary: tapSummary,
    };
  }
  return { report: report("mocha", { failed: listed.list(), skippedTests }), summary: false };
}

/** mocha's json reporter: one object with "stats", "failures" and "pending". */
function parseMochaJson(lines: string[]): Parsed | undefined {
  const start = lines.findIndex((line, i) =>
    line === "{" && /^\s*"stats": \{$/.test(lines[i + 1] ?? "")
  );
  const end = lines.lastIndexOf("}");
  if (start === -1 || end < start) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(lines.slice(start, end + 1).join("\n"));
  } catch {
    return undefined;
  }
  const { stats, failures, pending } = (data ?? {}) as Record<string, unknown>;
  const count = (key: string) => {
    const value = (stats as Record<string, unknown> | undefined)?.[key];
    return typeof value === "number" ? value : undefined;
  };
  const passed = count("passes");
  if (passed === undefined) return undefined;
  const titles = (list: unknown) =>
    (Array.isArray(list) ? list : []).map((test) => (test as { fullTitle?: unknown })?.fullTitle)
      .filter((title): title is string => typeof title === "string");
  const failed = new Names();
  for (const title of titles(failures)) failed.add(title);
  return {
    report: report("mocha", {
      failed: failed.list(),
      passed,
      failedCount: count("failures") ?? 0,
      skipped: count("pending") ?? 0,
      skippedTests: titles(pending),
    }),
    summary: true,
  };
}

// Whole lines only: "Tests failed: 4", "4 tests failed". A word "failed" in a
// log line is not a count.
const GENERIC_COUNT = /^\s*tests? (passed|failed):\s*(\d+)\s*$/i;
const GENERIC_COUNT_AFTER = /^\s*(\d+) tests? (passed|failed)\.?\s*$/i;

/** Counts from a summary no runner's format claims, as a hand-written test script prints them. */
function parseGeneric(lines: string[]): Parsed | undefined {
  const found: Record<string, number> = {};
  for (const line of lines) {
    const before = GENERIC_COUNT.exec(line);
    const after = before === null ? GENERIC_COUNT_AFTER.exec(line) : null;
    const kind = (before?.[1] ?? after?.[2])?.toLowerCase();
    const value = before?.[2] ?? after?.[1];
    if (kind !== undefined && value !== undefined) found[kind] = (found[kind] ?? 0) + Number(value);
  }
  if (found.passed === undefined && found.failed === undefined) return undefined;
  return {
    report: report(undefined, { failed: [], passed: found.passed, failedCount: found.failed }),
    summary: false,
  };
}

/** Most distinctive summaries first: the first format with a summary wins. */
const PARSERS: ReadonlyArray<readonly [TestRunner, Parser]> = [
  ["cargo", parseCargo],
  ["deno", parseDeno],
  ["go", parseGo],
  ["pytest", parsePytest],
  ["vitest", parseVitest],
  ["jest", parseJest],
  ["mocha", parseMocha],
  ["node", parseNode],
];
