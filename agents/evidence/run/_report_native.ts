/**
 * The test drivers of C and C++ build systems: ctest (CMake), `meson test`,
 * and automake's test harness (`make check`).
 *
 * @module
 */

import { add, Names, type Parsed, report } from "./_report_common.ts";

/** "2/3 Test #2: subtracts ....***Failed  0.00 sec", "Passed", "***Skipped", "***Not Run". */
const CTEST_RESULT =
  /^\s*\d+\/\d+ Test\s+#\d+: (.+?) \.+\s*(?:\*\*\*)?(Passed|Failed|Skipped|Not Run|Timeout|Exception|SEGFAULT|\w[\w ]*?)\b.*?\s[\d.]+ sec$/;
/** "67% tests passed, 1 tests failed out of 3". */
const CTEST_SUMMARY = /^\d+% tests passed, (\d+) tests? failed out of (\d+)$/;
/** The closing lists: "The following tests FAILED:" / "did not run:", then "\t  2 - subtracts (Failed)". */
const CTEST_LISTED = /^\s+\d+ - (.+) \(([^)]+)\)$/;

/** ctest: per-test results, the closing list of failures, and the percentage line. */
export function parseCtest(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  let section: "failed" | "notRun" | undefined;
  let failedCount: number | undefined;
  let total: number | undefined;
  for (const line of lines) {
    const summary = CTEST_SUMMARY.exec(line);
    if (summary !== null) {
      failedCount = add(failedCount, Number(summary[1]));
      total = add(total, Number(summary[2]));
      continue;
    }
    if (/^The following tests FAILED:$/.test(line)) {
      section = "failed";
      continue;
    }
    if (/^The following tests did not run:$/.test(line)) {
      section = "notRun";
      continue;
    }
    const listed = CTEST_LISTED.exec(line);
    if (section !== undefined && listed !== null) {
      if (section === "failed") names.add(listed[1]);
      else skippedTests.push(listed[1]);
      continue;
    }
    section = undefined;
    const result = CTEST_RESULT.exec(line);
    if (result === null) continue;
    if (result[2] === "Skipped" || result[2] === "Not Run" && /Disabled/.test(line)) {
      skippedTests.push(result[1]);
    } else if (result[2] !== "Passed") names.add(result[1]);
  }
  const skipped = new Set(skippedTests).size;
  // ctest counts a skipped test among those that "passed".
  const passed = total === undefined || failedCount === undefined
    ? undefined
    : Math.max(0, total - failedCount - skipped);
  return {
    report: report("ctest", {
      failed: names.list(),
      passed,
      failedCount,
      skipped: total === undefined ? undefined : skipped,
      skippedTests,
    }),
    summary: total !== undefined,
  };
}

/** "2/3 demo:math / subtracts FAIL   0.01s   exit status 1". */
const MESON_RESULT =
  /^\s*\d+\/\d+ (.+?)\s+(OK|FAIL|SKIP|TIMEOUT|EXPECTEDFAIL|UNEXPECTEDPASS|ERROR)\s+[\d.]+s\b/;
/** The closing counts: "Ok:  2", "Fail:  1", "Skipped:  0", ... */
const MESON_COUNT = /^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout):\s+(\d+)\s*$/;

/** `meson test`: one line per test and the closing counts. */
export function parseMeson(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  const counts: Record<string, number> = {};
  for (const line of lines) {
    const count = MESON_COUNT.exec(line);
    if (count !== null) {
      counts[count[1]] = (counts[count[1]] ?? 0) + Number(count[2]);
      continue;
    }
    const result = MESON_RESULT.exec(line);
    if (result === null) continue;
    if (["FAIL", "TIMEOUT", "UNEXPECTEDPASS", "ERROR"].includes(result[2])) names.add(result[1]);
    else if (result[2] === "SKIP" || result[2] === "EXPECTEDFAIL") skippedTests.push(result[1]);
  }
  const summary = counts.Ok !== undefined && counts.Fail !== undefined;
  return {
    report: report("meson", {
      failed: names.list(),
      passed: counts.Ok,
      failedCount: summary
        ? counts.Fail + (counts.Timeout ?? 0) + (counts["Unexpected Pass"] ?? 0)
        : undefined,
      skipped: counts.Skipped,
      todo: counts["Expected Fail"],
      skippedTests,
    }),
    summary,
  };
}

/** "FAIL: tests/t_bad", and the other results of automake's parallel harness. */
const AUTOMAKE_RESULT = /^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): (\S.*?)(?: \d+ - .*)?$/;
/** "# TOTAL: 4", "# PASS:  1", ... */
const AUTOMAKE_COUNT = /^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):\s+(\d+)\s*$/;

/** automake's test harness (`make check`): one line per test, then the suite's counts. */
export function parseAutomake(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  const counts: Record<string, number> = {};
  for (const line of lines) {
    const count = AUTOMAKE_COUNT.exec(line);
    if (count !== null) {
      counts[count[1]] = (counts[count[1]] ?? 0) + Number(count[2]);
      continue;
    }
    const result = AUTOMAKE_RESULT.exec(line);
    if (result === null) continue;
    if (["FAIL", "XPASS", "ERROR"].includes(result[1])) names.add(result[2]);
    else if (result[1] === "SKIP" || result[1] === "XFAIL") skippedTests.push(result[2]);
  }
  const summary = counts.TOTAL !== undefined && counts.PASS !== undefined;
  return {
    report: report("automake", {
      failed: names.list(),
      passed: counts.PASS,
      failedCount: summary
        ? (counts.FAIL ?? 0) + (counts.XPASS ?? 0) + (counts.ERROR ?? 0)
        : undefined,
      skipped: counts.SKIP,
      todo: counts.XFAIL,
      skippedTests,
    }),
    summary,
  };
}
