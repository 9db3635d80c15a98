/**
 * What the test-output parsers share: the runner names, the report they
 * return, and the helpers that collect failing names (flat and nested) and
 * counts. Private to `run/`: `test_report.ts` is the entry.
 *
 * @module
 */

import type { TestCounts } from "../../record/iteration.ts";

export type { TestCounts };

/** Test runners whose output names failing tests. */
export type TestRunner =
  | "node"
  | "deno"
  | "pytest"
  | "go"
  | "cargo"
  | "jest"
  | "vitest"
  | "mocha"
  | "ctest"
  | "meson"
  | "automake"
  | "minitest"
  | "test-unit"
  | "maven"
  | "gradle";

/** What a test run's output says. */
export interface TestReport {
  /** The format recognised; absent when none was. */
  runner?: TestRunner;
  /**
   * Names of the failing tests, in order, without repeats, as the runner names
   * them: "math > adds" for vitest and jest describe nesting, "tests/test_x.py::test_add"
   * for pytest, "TestAdd" or "TestAdd/sub" for go, "tests::adds" for cargo, "adds"
   * or "suite > adds" for node --test subtests, "parent > step" for deno test steps,
   * "suite > adds" for mocha's spec reporter and "suite adds" (its full title) for
   * its TAP and json reporters. A parent reported failing only because a nested
   * test failed is left out in favour of that nested test. In the output of
   * several workspace packages, each name starts with its package: "packages/a: adds".
   */
  failed: string[];
  /** Tests that passed, from the summary line, when given. */
  passed?: number;
  /** Tests that failed, from the summary line, when given. */
  failedCount?: number;
  /**
   * Tests skipped, when the runner reports them: node, pytest, `go test -v`,
   * jest, vitest, and mocha's pending tests.
   */
  skipped?: number;
  /** Tests ignored, when the runner reports them: cargo's `#[ignore]`, deno's `ignore` (steps included). */
  ignored?: number;
  /** Tests left as todo, when the runner reports them: node, jest, vitest, and pytest's xfail and xpass. */
  todo?: number;
  /** Names of the skipped, ignored and todo tests, where the output names them. */
  skippedTests?: string[];
}

/** One parser's reading of one stream. */
export interface Parsed {
  report: TestReport;
  /** Whether a summary line was found, which makes the format certain. */
  summary: boolean;
}

export type Parser = (lines: string[]) => Parsed;

export const COUNT_FIELDS = ["passed", "failedCount", "skipped", "ignored", "todo"] as const;

/** Failing names in first-seen order, without repeats. */
export class Names {
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

export type Status = "passed" | "failed" | "skipped";

/**
 * Nested results of runners that report children before their parent (node
 * --test, TAP, deno test steps), turned into "parent > child" names. The
 * headers these runners print when a parent starts name the parents of
 * children whose parent never reported, as in output cut off part-way.
 */
export class Tree {
  #entries: { level: number; path: string[]; parents: string[]; status: Status }[] = [];
  #open: string[] = [];

  open(level: number, name: string): void {
    this.#open.length = Math.min(this.#open.length, level);
    this.#open[level] = name;
  }

  add(level: number, name: string, status: Status): void {
    for (let i = this.#entries.length - 1; i >= 0 && this.#entries[i].level > level; i--) {
      this.#entries[i].path.unshift(name);
    }
    const parents = Array.from({ length: level }, (_, l) => this.#open[l] ?? "");
    this.#entries.push({ level, path: [name], parents, status });
    this.#open.length = Math.min(this.#open.length, level);
  }

  failedNames(): string[] {
    return dropParents(this.#names("failed"), " > ");
  }

  skippedNames(): string[] {
    return this.#names("skipped");
  }

  #names(status: Status): string[] {
    return this.#entries.filter((e) => e.status === status).map((e) => {
      const missing = e.parents.slice(0, Math.max(0, e.level - (e.path.length - 1)));
      return [...missing.filter((p) => p !== ""), ...e.path].join(" > ");
    });
  }
}

/** Leave out names whose failure is only that of a nested test also named. */
export function dropParents(names: string[], separator: string): string[] {
  return names.filter((name) => !names.some((other) => other.startsWith(name + separator)));
}

export interface Found {
  failed: string[];
  passed?: number;
  failedCount?: number;
  skipped?: number;
  ignored?: number;
  todo?: number;
  skippedTests?: string[];
}

export function report(runner: TestRunner | undefined, found: Found): TestReport {
  const result: TestReport = runner === undefined
    ? { failed: found.failed }
    : { runner, failed: found.failed };
  for (const field of COUNT_FIELDS) {
    if (found[field] !== undefined) result[field] = found[field];
  }
  const skipped = [...new Set(found.skippedTests ?? [])];
  if (skipped.length > 0) result.skippedTests = skipped;
  return result;
}

export function countOf(text: string, word: string): number | undefined {
  const match = new RegExp(`(\\d+) ${word}\\b`).exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** `a + b`, where an unknown count leaves the other as it is. */
export function add(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : a + b;
}
