/**
 * pytest's output: short summaries, verbose lines and the closing summary.
 *
 * @module
 */

import { add, countOf, Names, type Parsed, report } from "./_report_common.ts";

export const PYTEST_SHORT = /^(?:FAILED|ERROR) (.+?)(?: - .*)?$/;
export const PYTEST_SHORT_XFAIL = /^(?:XFAIL|XPASS) (\S+?\.py\S*)(?: - .*)?$/;
export const PYTEST_SHORT_SKIPPED = /^SKIPPED \[\d+\] (\S+?\.py:\d+)(?::.*)?$/;
export const PYTEST_VERBOSE =
  /^(\S+?\.py(?:::.+?)?) (FAILED|ERROR|PASSED|SKIPPED|XFAIL|XPASS)(?: \(.*\))?(?:\s+\[\s*\d+%\])?$/;
export const PYTEST_SUMMARY = /^=*\s*(.+?) in [\d.]+s\b.*?=*$/;
export const PYTEST_SUMMARY_PART =
  /^\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)$/;

export function parsePytest(lines: string[]): Parsed {
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
