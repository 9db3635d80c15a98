/**
 * mocha's output: the spec, TAP and json reporters.
 *
 * @module
 */

import { Names, type Parsed, report } from "./_report_common.ts";

export const MOCHA_PASSING = /^\s*(\d+) passing \(\d+(?:\.\d+)?[a-z]+\)\s*$/;
export const MOCHA_PENDING = /^\s*(\d+) pending\s*$/;
export const MOCHA_FAILING = /^\s*(\d+) failing\s*$/;
export const MOCHA_DETAIL = /^ {2}\d+\) (.*)$/;
export const MOCHA_LISTED = /^((?: {2})+)(?:(?:✔|✓) .*|- (.*)|\d+\) (.*)|(\S.*))$/;
export const MOCHA_TAP = /^(not ok|ok) \d+ (?!- )(.*?)(?: # (SKIP|TODO)\b.*)?$/;
export const MOCHA_TAP_COUNT = /^# (pass|fail) (\d+)$/;

/** mocha's spec reporter (the default), its TAP reporter ("ok 1 suite test", no dash) and its json reporter. */
export function parseMocha(lines: string[]): Parsed {
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
export function parseMochaJson(lines: string[]): Parsed | undefined {
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
