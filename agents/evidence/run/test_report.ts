/**
 * Reading a test runner's output: which tests failed, and how many ran,
 * passed, failed, were skipped, ignored or left as todo.
 *
 * {@linkcode parseTestReport} knows the console output of `node --test` (spec
 * and TAP reporters), `deno test`, pytest, `go test`, `cargo test`, jest,
 * vitest and mocha (spec, TAP and json reporters), ctest, `meson test`,
 * automake's `make check` harness, minitest, test-unit, Maven and Gradle. Colour codes are stripped
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

import {
  COUNT_FIELDS,
  Names,
  type Parsed,
  type Parser,
  report,
  type TestReport,
  type TestRunner,
} from "./_report_common.ts";
import { parseDeno } from "./_report_deno.ts";
import { parseCargo, parseGo } from "./_report_go_rust.ts";
import { parseJest, parseVitest } from "./_report_jest_vitest.ts";
import { parseMocha } from "./_report_mocha.ts";
import { parseAutomake, parseCtest, parseMeson } from "./_report_native.ts";
import { parseGradle, parseMaven } from "./_report_jvm.ts";
import { parseMinitest, parseTestUnit } from "./_report_ruby.ts";
import { parseNode } from "./_report_node.ts";
import { parsePytest } from "./_report_python.ts";

export type { TestCounts, TestReport, TestRunner } from "./_report_common.ts";

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
  ["ctest", parseCtest],
  ["meson", parseMeson],
  ["automake", parseAutomake],
  ["minitest", parseMinitest],
  ["test-unit", parseTestUnit],
  ["maven", parseMaven],
  ["gradle", parseGradle],
];
