/**
 * The JVM's build tools: Maven's surefire report and Gradle's test task.
 *
 * @module
 */

import { add, Names, type Parsed, report } from "./_report_common.ts";

/** The closing "Tests run: 3, Failures: 1, Errors: 0, Skipped: 0" (a class's line has " -- in" or "Time elapsed"). */
const MAVEN_TOTAL =
  /^(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$/;
/** In "Results:": "[ERROR]   AppTest.testSub:20 expected:<2> but was:<3>". */
const MAVEN_LISTED = /^\[ERROR\] {3}(\S+?\.\S+?)(?::\d+)?(?: |$)/;

/** Maven: the results section's failing tests and its totals. */
export function parseMaven(lines: string[]): Parsed {
  const names = new Names();
  let inResults = false;
  let run: number | undefined;
  let failedCount: number | undefined;
  let skipped: number | undefined;
  for (const line of lines) {
    if (/^\[(?:INFO|ERROR|WARNING)\] Results:\s*$/.test(line)) {
      inResults = true;
      continue;
    }
    const total = MAVEN_TOTAL.exec(line);
    if (total !== null && inResults) {
      run = add(run, Number(total[1]));
      failedCount = add(failedCount, Number(total[2]) + Number(total[3]));
      skipped = add(skipped, Number(total[4]));
      inResults = false;
      continue;
    }
    const listed = inResults ? MAVEN_LISTED.exec(line) : null;
    if (listed !== null && !/^(?:Failures|Errors|Tests):?$/.test(listed[1])) names.add(listed[1]);
  }
  return {
    report: report("maven", {
      failed: names.list(),
      passed: run === undefined ? undefined : run - failedCount! - skipped!,
      failedCount,
      skipped,
    }),
    summary: run !== undefined,
  };
}

/** "AppTest > testSub() FAILED". */
const GRADLE_FAILED = /^(\S.*? > .+?) FAILED$/;
/** "3 tests completed, 1 failed, 1 skipped". */
const GRADLE_SUMMARY = /^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?$/;

/** Gradle's test task: the failing tests it prints and its closing count (printed only when one failed). */
export function parseGradle(lines: string[]): Parsed {
  const names = new Names();
  let completed: number | undefined;
  let failedCount: number | undefined;
  let skipped: number | undefined;
  for (const line of lines) {
    const failed = GRADLE_FAILED.exec(line);
    if (failed !== null) {
      names.add(failed[1]);
      continue;
    }
    const summary = GRADLE_SUMMARY.exec(line);
    if (summary !== null) {
      completed = add(completed, Number(summary[1]));
      failedCount = add(failedCount, Number(summary[2] ?? 0));
      skipped = add(skipped, Number(summary[3] ?? 0));
    }
  }
  return {
    report: report("gradle", {
      failed: names.list(),
      passed: completed === undefined ? undefined : completed - failedCount! - skipped!,
      failedCount,
      skipped,
    }),
    summary: completed !== undefined,
  };
}
