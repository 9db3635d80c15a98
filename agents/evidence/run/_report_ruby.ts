/**
 * Ruby's test runners: minitest and test-unit (as `rake test` and `ruby
 * -Itest` print them).
 *
 * @module
 */

import { add, Names, type Parsed, report } from "./_report_common.ts";

/** "  1) Failure:" or "  2) Error:", the test's name on the next line. */
const MINITEST_HEADER = /^\s*\d+\) (Failure|Error):$/;
/** "TestMath#test_subtracts [test/test_m.rb:4]:" or "TestMath#test_boom:". */
const MINITEST_NAME = /^(\S+#\S+?)(?: \[[^\]]+\])?:$/;
/** "4 runs, 2 assertions, 1 failures, 1 errors, 1 skips". */
const MINITEST_SUMMARY = /^(\d+) runs, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) skips$/;

/** minitest: the numbered failures and errors, and the closing counts. */
export function parseMinitest(lines: string[]): Parsed {
  const names = new Names();
  let runs: number | undefined;
  let failedCount: number | undefined;
  let skipped: number | undefined;
  for (const [index, line] of lines.entries()) {
    const summary = MINITEST_SUMMARY.exec(line);
    if (summary !== null) {
      const failed = Number(summary[2]) + Number(summary[3]);
      runs = add(runs, Number(summary[1]));
      failedCount = add(failedCount, failed);
      skipped = add(skipped, Number(summary[4]));
      continue;
    }
    if (MINITEST_HEADER.test(line)) {
      const name = MINITEST_NAME.exec(lines[index + 1] ?? "");
      if (name !== null) names.add(name[1]);
    }
  }
  return {
    report: report("minitest", {
      failed: names.list(),
      passed: runs === undefined ? undefined : runs - failedCount! - skipped!,
      failedCount,
      skipped,
    }),
    summary: runs !== undefined,
  };
}

/** "Failure: test_subtracts(TestMath)", "Error: test_boom(TestMath): RuntimeError: boom". */
const TEST_UNIT_FAULT = /^(Failure|Error): (\S+?)\(([^)]+)\)(?::|$)/;
/** "Omission: later [test_skip(TestMath)]", "Pending: test_pend(TestMath): later". */
const TEST_UNIT_ASIDE = /^(?:Omission|Pending): (?:(\S+?)\(([^)]+)\)|.*\[(\S+?)\(([^)]+)\)\])/;
/** "5 tests, 2 assertions, 1 failures, 1 errors, 1 pendings, 1 omissions, 0 notifications". */
const TEST_UNIT_SUMMARY =
  /^(\d+) tests, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) pendings, (\d+) omissions, \d+ notifications$/;

/** test-unit: each fault's header, named `Class#test` as minitest names it, and the closing counts. */
export function parseTestUnit(lines: string[]): Parsed {
  const names = new Names();
  const skippedTests: string[] = [];
  let tests: number | undefined;
  let failedCount: number | undefined;
  let pendings: number | undefined;
  let omissions: number | undefined;
  for (const line of lines) {
    const summary = TEST_UNIT_SUMMARY.exec(line);
    if (summary !== null) {
      tests = add(tests, Number(summary[1]));
      failedCount = add(failedCount, Number(summary[2]) + Number(summary[3]));
      pendings = add(pendings, Number(summary[4]));
      omissions = add(omissions, Number(summary[5]));
      continue;
    }
    const fault = TEST_UNIT_FAULT.exec(line);
    if (fault !== null) {
      names.add(`${fault[3]}#${fault[2]}`);
      continue;
    }
    const aside = TEST_UNIT_ASIDE.exec(line);
    if (aside !== null) {
      skippedTests.push(`${aside[2] ?? aside[4]}#${aside[1] ?? aside[3]}`);
    }
  }
  return {
    report: report("test-unit", {
      failed: names.list(),
      passed: tests === undefined ? undefined : tests - failedCount! - pendings! - omissions!,
      failedCount,
      skipped: omissions,
      todo: pendings,
      skippedTests,
    }),
    summary: tests !== undefined,
  };
}
