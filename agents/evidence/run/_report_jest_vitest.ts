/**
 * jest's and vitest's console output.
 *
 * @module
 */

import { add, countOf, Names, type Parsed, report } from "./_report_common.ts";

export const JEST_TITLE = /^\s*● (.+)$/;
export const JEST_FILE = /^\s*(?:FAIL|PASS)\s+(\S.*?)\s*(?:\(\d.*\))?$/;
export const JEST_CROSS = /^\s*✕ (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$/;
export const JEST_SET_ASIDE = /^\s*(?:○ skipped|✎ todo) (.+)$/;
export const JEST_SUMMARY = /^Tests:\s+(.*\d+ total.*)$/;

export function parseJest(lines: string[]): Parsed {
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

export const VITEST_FAIL = /^\s*FAIL\s+(?:\|[^|]+\|\s+)?(.+?)\s*$/;
export const VITEST_CROSS = /^\s*× (.+?)(?: \d+(?:\.\d+)?m?s)?(?: \[retry.*\])?$/;
export const VITEST_SET_ASIDE = /^\s*(?:↓|□) (.+?)(?: \[(?:skipped|todo)\])?$/;
export const VITEST_SUMMARY = /^\s*Tests\s+(.*\d+ (?:passed|failed|skipped|todo).*\(\d+\))\s*$/;

export function parseVitest(lines: string[]): Parsed {
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
