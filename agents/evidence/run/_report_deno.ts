/**
 * deno test's output: results, steps, its ERRORS section and summary.
 *
 * @module
 */

import { dropParents, Names, type Parsed, report, type Status, Tree } from "./_report_common.ts";

export const DENO_RESULT =
  /^( *)(?:(?:\.{1,2}\/|\/|file:\/\/)\S* => )?(.+) \.\.\. (ok|FAILED|ignored|cancelled)\b(.*\((?:[\d.]+[a-zµ]+)+\))\s*$/;
export const DENO_START = /^( *)(?:(?:\.{1,2}\/|\/|file:\/\/)\S* => )?(.+) \.\.\.$/;
export const DENO_ERROR_HEADER = /^(.+?) => \S+:\d+:\d+$/;
export const DENO_SUMMARY = /^(ok|FAILED) \| (\d+) passed(?: \([^)]*\))? \| (\d+) failed(.*)$/;
export const DENO_IGNORED = /\| (\d+) ignored(?: \((\d+) steps?\))?/;

export function parseDeno(lines: string[]): Parsed {
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
