/**
 * go test's and cargo test's output.
 *
 * @module
 */

import { add, dropParents, Names, type Parsed, report } from "./_report_common.ts";

export const GO_RESULT = /^\s*--- (FAIL|PASS|SKIP): (\S+) \([\d.]+s\)/;
export const GO_PACKAGE = /^(ok|FAIL)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[([^\]]+)\])(?:\s.*)?$/;

export function parseGo(lines: string[]): Parsed {
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

export const CARGO_RESULT = /^test (.+) \.\.\. (FAILED|ok|ignored\b.*)$/;
export const CARGO_SUMMARY =
  /^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;(?: (\d+) ignored;)?/;

export function parseCargo(lines: string[]): Parsed {
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
