/**
 * Reading a test runner's output: which tests failed, and how many ran.
 *
 * {@linkcode parseTestReport} knows the console output of `node --test` (spec
 * and TAP reporters), `deno test`, pytest, `go test`, `cargo test`, jest and
 * vitest. Colour codes are stripped first, and output cut off part-way still
 * yields the failures it holds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTestReport, testsRun } from "@finishline/agents";
 *
 * const report = parseTestReport(
 *   "--- FAIL: TestAdd (0.00s)\nFAIL\nFAIL\texample.com/m\t0.002s\n",
 * );
 * assert.deepEqual(report, { runner: "go", failed: ["TestAdd"], failedCount: 1 });
 * assert.equal(testsRun(report), undefined);
 * ```
 *
 * @module
 */

/** Test runners whose output names failing tests. */
export type TestRunner = "node" | "deno" | "pytest" | "go" | "cargo" | "jest" | "vitest";

/** What a test run's output says. */
export interface TestReport {
  /** The format recognised; absent when none was. */
  runner?: TestRunner;
  /**
   * Names of the failing tests, in order, without repeats, as the runner names
   * them: "math > adds" for vitest and jest describe nesting, "tests/test_x.py::test_add"
   * for pytest, "TestAdd" or "TestAdd/sub" for go, "tests::adds" for cargo, "adds"
   * or "suite > adds" for node --test subtests, "parent > step" for deno test steps.
   * A parent reported failing only because a nested test failed is left out in
   * favour of that nested test.
   */
  failed: string[];
  /** Tests that passed, from the summary line, when given. */
  passed?: number;
  /** Tests that failed, from the summary line, when given. */
  failedCount?: number;
}

/**
 * Read failing test names and counts from a runner's output; `hint` picks the
 * format first, otherwise every format is tried and the one that recognises a
 * summary wins. Never throws.
 *
 * Without a summary line (output cut off part-way), the format that names the
 * most failing tests wins and the counts are left out. The counts are those of
 * the summary lines: pytest's errors count as failed, cargo's are summed over
 * its test binaries, and go's are counted from its `--- PASS` (verbose runs
 * only) and `--- FAIL` lines.
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
 *   "========== 1 failed, 2 passed in 0.03s ==========",
 * ].join("\n");
 * assert.deepEqual(parseTestReport(output, "pytest"), {
 *   runner: "pytest",
 *   failed: ["tests/test_math.py::test_add"],
 *   passed: 2,
 *   failedCount: 1,
 * });
 * assert.deepEqual(parseTestReport("Compiling...\nDone."), { failed: [] });
 * ```
 */
export function parseTestReport(output: string, hint?: TestRunner): TestReport {
  try {
    const lines = plainLines(typeof output === "string" ? output : "");
    if (hint !== undefined) {
      const parser = PARSERS.find(([runner]) => runner === hint);
      if (parser !== undefined) {
        const parsed = parser[1](lines);
        if (parsed.summary || parsed.report.failed.length > 0) return parsed.report;
      }
    }
    let best: Parsed | undefined;
    for (const [, parse] of PARSERS) {
      const parsed = parse(lines);
      if (parsed.summary) return parsed.report;
      if (parsed.report.failed.length > (best?.report.failed.length ?? 0)) best = parsed;
    }
    return best?.report ?? { failed: [] };
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
 * import { parseTestReport, testsRun } from "@finishline/agents";
 *
 * assert.equal(testsRun(parseTestReport("ok | 3 passed | 1 failed (12ms)")), 4);
 * assert.equal(testsRun({ failed: ["adds"], failedCount: 1 }), undefined);
 * ```
 */
export function testsRun(report: TestReport): number | undefined {
  if (report.passed === undefined || report.failedCount === undefined) return undefined;
  return report.passed + report.failedCount;
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

/**
 * Nested results of runners that report children before their parent (node
 * --test, TAP, deno test steps), turned into "parent > child" names. The
 * headers these runners print when a parent starts name the parents of
 * children whose parent never reported, as in output cut off part-way.
 */
class Tree {
  #entries: { level: number; path: string[]; parents: string[]; failed: boolean }[] = [];
  #open: string[] = [];

  open(level: number, name: string): void {
    this.#open.length = Math.min(this.#open.length, level);
    this.#open[level] = name;
  }

  add(level: number, name: string, failed: boolean): void {
    for (let i = this.#entries.length - 1; i >= 0 && this.#entries[i].level > level; i--) {
      this.#entries[i].path.unshift(name);
    }
    const parents = Array.from({ length: level }, (_, l) => this.#open[l] ?? "");
    this.#entries.push({ level, path: [name], parents, failed });
    this.#open.length = Math.min(this.#open.length, level);
  }

  failedNames(): string[] {
    const failed = this.#entries.filter((e) => e.failed).map((e) => {
      const missing = e.parents.slice(0, Math.max(0, e.level - (e.path.length - 1)));
      return [...missing.filter((p) => p !== ""), ...e.path].join(" > ");
    });
    return dropParents(failed, " > ");
  }
}

/** Leave out names whose failure is only that of a nested test also named. */
function dropParents(names: string[], separator: string): string[] {
  return names.filter((name) => !names.some((other) => other.startsWith(name + separator)));
}

function report(
  runner: TestRunner,
  counts: { failed: string[]; passed?: number; failedCount?: number },
): TestReport {
  const result: TestReport = { runner, failed: counts.failed };
  if (counts.passed !== undefined) result.passed = counts.passed;
  if (counts.failedCount !== undefined) result.failedCount = counts.failedCount;
  return result;
}

function countOf(text: string, word: string): number | undefined {
  const match = new RegExp(`(\\d+) ${word}\\b`).exec(text);
  return match === null ? undefined : Number(match[1]);
}

const NODE_SPEC = /^( *)(✔|✖|﹣|▶) (.*?)(?: \(([\d.]+m?s)\))?(?: # (SKIP|TODO|skip|todo)\b.*)?$/;
const NODE_SPEC_FAILING = /^✖ (.*?)(?: \([\d.]+m?s\))?$/;
const NODE_TAP = /^( *)(not ok|ok) \d+(?: - (.*))?$/;
const NODE_TAP_SUBTEST = /^( *)# Subtest: (.*)$/;
const NODE_COUNT = /^(?:ℹ|#) (tests|pass|fail) (\d+)$/;

function parseNode(lines: string[]): Parsed {
  const spec = new Tree();
  const tap = new Tree();
  const names = new Names();
  const counts: Record<string, number> = {};
  let inFailingSection = false;
  for (const line of lines) {
    const count = NODE_COUNT.exec(line);
    if (count !== null) {
      counts[count[1]] = Number(count[2]);
      continue;
    }
    if (line === "✖ failing tests:") {
      inFailingSection = true;
      continue;
    }
    if (inFailingSection) {
      // That closing list names tests without their suites.
      const failing = NODE_SPEC_FAILING.exec(line);
      if (failing !== null) names.addLeaf(failing[1]);
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
      const failed = tapLine[2] === "not ok" && !/^todo\b/i.test(directive);
      tap.add(Math.floor(tapLine[1].length / 4), name, failed);
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
    const failed = mark === "✖" && directive?.toUpperCase() !== "TODO";
    spec.add(Math.floor(indent.length / 2), name, failed);
  }
  for (const name of [...spec.failedNames(), ...tap.failedNames()]) names.add(name);
  const summary = counts.pass !== undefined || counts.fail !== undefined;
  return {
    report: report("node", { failed: names.list(), passed: counts.pass, failedCount: counts.fail }),
    summary,
  };
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
const DENO_SUMMARY = /^(ok|FAILED) \| (\d+) passed(?: \([^)]*\))? \| (\d+) failed/;

function parseDeno(lines: string[]): Parsed {
  const tree = new Tree();
  const names = new Names();
  let inErrors = false;
  let passed: number | undefined;
  let failedCount: number | undefined;
  for (const line of lines) {
    const summary = DENO_SUMMARY.exec(line);
    if (summary !== null) {
      passed = (passed ?? 0) + Number(summary[2]);
      failedCount = (failedCount ?? 0) + Number(summary[3]);
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
      tree.add(Math.floor(result[1].length / 2), result[2], result[3] === "FAILED");
      continue;
    }
    const started = DENO_START.exec(line);
    if (started !== null) tree.open(Math.floor(started[1].length / 2), started[2]);
  }
  const listed = new Names();
  for (const name of tree.failedNames()) listed.add(name);
  for (const name of names.list()) listed.add(name);
  return {
    report: report("deno", { failed: dropParents(listed.list(), " > "), passed, failedCount }),
    summary: passed !== undefined,
  };
}

const PYTEST_SHORT = /^(?:FAILED|ERROR) (.+?)(?: - .*)?$/;
const PYTEST_VERBOSE =
  /^(\S+?\.py(?:::.+?)?) (FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS)(?:\s+\[\s*\d+%\])?$/;
const PYTEST_SUMMARY = /^=*\s*(.+?) in [\d.]+s\b.*?=*$/;
const PYTEST_SUMMARY_PART =
  /^\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)$/;

function parsePytest(lines: string[]): Parsed {
  const names = new Names();
  let passed: number | undefined;
  let failedCount: number | undefined;
  for (const line of lines) {
    const verbose = PYTEST_VERBOSE.exec(line);
    if (verbose !== null) {
      if (verbose[2] === "FAILED" || verbose[2] === "ERROR") names.add(verbose[1]);
      continue;
    }
    const short = PYTEST_SHORT.exec(line);
    if (short !== null && /\.py\b/.test(short[1])) {
      names.add(short[1]);
      continue;
    }
    const summary = PYTEST_SUMMARY.exec(line);
    if (summary === null) continue;
    const text = summary[1].trim();
    if (text === "no tests ran") {
      passed = 0;
      failedCount = 0;
    } else if (text.split(", ").every((part) => PYTEST_SUMMARY_PART.test(part))) {
      passed = countOf(text, "passed") ?? 0;
      failedCount = (countOf(text, "failed") ?? 0) + (countOf(text, "errors?") ?? 0);
    }
  }
  return {
    report: report("pytest", { failed: names.list(), passed, failedCount }),
    summary: passed !== undefined,
  };
}

const GO_RESULT = /^\s*--- (FAIL|PASS|SKIP): (\S+) \([\d.]+s\)/;
const GO_PACKAGE = /^(ok|FAIL)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[([^\]]+)\])(?:\s.*)?$/;

function parseGo(lines: string[]): Parsed {
  const failed: string[] = [];
  const passedNames: string[] = [];
  const brokenPackages: string[] = [];
  let verbose = false;
  let summary = false;
  for (const line of lines) {
    if (line.startsWith("=== RUN ")) verbose = true;
    const result = GO_RESULT.exec(line);
    if (result !== null) {
      if (result[1] === "FAIL") failed.push(result[2]);
      if (result[1] === "PASS") {
        verbose = true;
        passedNames.push(result[2]);
      }
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
  const all = [...failed, ...passedNames];
  const leafPasses = passedNames.filter((name) => !all.some((n) => n.startsWith(`${name}/`)));
  const list = names.list();
  return {
    report: report("go", {
      failed: list,
      passed: summary && verbose ? new Set(leafPasses).size : undefined,
      failedCount: summary ? list.length : undefined,
    }),
    summary,
  };
}

const CARGO_RESULT = /^test (.+) \.\.\. (FAILED|ok|ignored\b.*)$/;
const CARGO_SUMMARY = /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;/;

function parseCargo(lines: string[]): Parsed {
  const names = new Names();
  let passed: number | undefined;
  let failedCount: number | undefined;
  let failuresList = false;
  for (const [i, line] of lines.entries()) {
    const summary = CARGO_SUMMARY.exec(line);
    if (summary !== null) {
      passed = (passed ?? 0) + Number(summary[1]);
      failedCount = (failedCount ?? 0) + Number(summary[2]);
      failuresList = false;
      continue;
    }
    const result = CARGO_RESULT.exec(line);
    if (result !== null) {
      if (result[2] === "FAILED") names.add(result[1]);
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
    report: report("cargo", { failed: names.list(), passed, failedCount }),
    summary: passed !== undefined,
  };
}

const JEST_TITLE = /^\s*● (.+)$/;
const JEST_FILE = /^\s*(?:FAIL|PASS)\s+(\S.*?)\s*(?:\(\d.*\))?$/;
const JEST_CROSS = /^\s*✕ (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$/;
const JEST_SUMMARY = /^Tests:\s+(.*\d+ total.*)$/;

function parseJest(lines: string[]): Parsed {
  const names = new Names();
  let file: string | undefined;
  let passed: number | undefined;
  let failedCount: number | undefined;
  for (const line of lines) {
    const summary = JEST_SUMMARY.exec(line);
    if (summary !== null) {
      passed = countOf(summary[1], "passed") ?? 0;
      failedCount = countOf(summary[1], "failed") ?? 0;
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
    const fileLine = JEST_FILE.exec(line);
    if (fileLine !== null && !fileLine[1].includes(" > ")) file = fileLine[1];
  }
  return {
    report: report("jest", { failed: names.list(), passed, failedCount }),
    summary: passed !== undefined,
  };
}

const VITEST_FAIL = /^\s*FAIL\s+(?:\|[^|]+\|\s+)?(.+?)\s*$/;
const VITEST_CROSS = /^\s*× (.+?)(?: \d+(?:\.\d+)?m?s)?(?: \[retry.*\])?$/;
const VITEST_SUMMARY = /^\s*Tests\s+(.*\d+ (?:passed|failed).*\(\d+\))\s*$/;

function parseVitest(lines: string[]): Parsed {
  const names = new Names();
  let passed: number | undefined;
  let failedCount: number | undefined;
  for (const line of lines) {
    const summary = VITEST_SUMMARY.exec(line);
    if (summary !== null) {
      passed = countOf(summary[1], "passed") ?? 0;
      failedCount = countOf(summary[1], "failed") ?? 0;
      continue;
    }
    if (/^\s*Tests\s+no tests\s*$/.test(line)) {
      passed = 0;
      failedCount = 0;
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
    if (cross !== null) names.addLeaf(cross[1]);
  }
  return {
    report: report("vitest", { failed: names.list(), passed, failedCount }),
    summary: passed !== undefined,
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
  ["node", parseNode],
];
