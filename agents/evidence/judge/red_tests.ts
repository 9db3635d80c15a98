/**
 * Tests red at the baseline, found by name wherever they live: in a test
 * file, or inline in a source file (Rust's `#[test] fn name` in a
 * `#[cfg(test)]` module, Python's `def test_name`, JavaScript's
 * `test("name", ...)`, Go's `func TestName`). A claim that changes such a
 * test's body where no test glob protects the file (an `assert_eq!` edited
 * inside `src/lib.rs`, with no marker added or removed) is caught here: the
 * file counts as protected, and its original test bodies are spliced back
 * into the claim's version (the fix beside them stays) before the checks run
 * again. A failing test whose original body still fails is not fixed.
 *
 * @module
 */

import path from "node:path";
import type { GitRepo } from "../../git/repo.ts";
import type { ChecksEvidence } from "../../record/iteration.ts";

/** A source file whose red tests the claim changed. */
export interface RedTestEdit {
  /** The path, relative to the repository root. */
  path: string;
  /** The red tests whose definition changed (or went). */
  tests: string[];
  /** The claim's version with every changed red test's original definition put back; undefined when one went. */
  spliced?: string;
}

/**
 * The line range of a test's definition in a source file, by its name as
 * the runner reports it (`tests::adds`, `tests/test_x.py::test_adds[1]`,
 * `adds`, `TestAdds`).
 *
 * @param source The file's text.
 * @param file Its path (the extension tells the language).
 * @param name The test's name in the runner's report.
 * @returns The first and last line (0-based, inclusive), or undefined when it is not defined here.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { testDefinition } from "./red_tests.ts";
 *
 * const rust = "fn add(a: i32, b: i32) -> i32 { a - b }\n#[cfg(test)]\nmod tests {\n  use super::*;\n  #[test]\n  fn adds() {\n    assert_eq!(add(2, 3), 5);\n  }\n}\n";
 * assert.deepEqual(testDefinition(rust, "src/lib.rs", "tests::adds"), { start: 4, end: 7 });
 * assert.equal(testDefinition(rust, "src/lib.rs", "tests::subtracts"), undefined);
 * ```
 */
export function testDefinition(
  source: string,
  file: string,
  name: string,
): { start: number; end: number } | undefined {
  const lines = source.split("\n");
  const extension = path.posix.extname(file).slice(1);
  const short = escape(lastSegment(name));
  if (extension === "rs") {
    const at = findLine(
      lines,
      new RegExp(`^\\s*(?:pub(?:\\([^)]*\\))?\\s+)?(?:async\\s+)?fn\\s+${short}\\s*[(<]`),
    );
    if (at < 0 || !attributed(lines, at, /#\[(?:[\w:]+::)?test\b/)) return undefined;
    const end = closing(lines, at, "{", "}");
    return end < 0 ? undefined : { start: attributeStart(lines, at), end };
  }
  if (extension === "go") {
    const at = findLine(lines, new RegExp(`^func\\s+${short}\\s*\\(`));
    const end = at < 0 ? -1 : closing(lines, at, "{", "}");
    return end < 0 ? undefined : { start: at, end };
  }
  if (extension === "py") {
    const bare = escape(lastSegment(name).replace(/\[.*\]$/, ""));
    const at = findLine(lines, new RegExp(`^(\\s*)(?:async\\s+)?def\\s+${bare}\\s*\\(`));
    if (at < 0) return undefined;
    const indent = /^\s*/.exec(lines[at])![0].length;
    let end = at;
    for (let index = at + 1; index < lines.length; index++) {
      if (lines[index].trim() === "") continue;
      if (/^\s*/.exec(lines[index])![0].length <= indent) break;
      end = index;
    }
    return { start: attributeStart(lines, at, /^\s*@/), end };
  }
  if (/^[cm]?[jt]sx?$/.test(extension)) {
    // node --test and jest name a nested test "outer > inner"; the innermost is defined here.
    const inner = escape(name.split(" > ").at(-1)!.trim());
    const at = findLine(
      lines,
      new RegExp(`\\b(?:test|it)(?:\\.\\w+)*\\s*\\(\\s*(['"\`])${inner}\\1`),
    );
    const end = at < 0 ? -1 : closing(lines, at, "(", ")");
    return end < 0 ? undefined : { start: at, end };
  }
  return undefined;
}

/**
 * The red tests a claim changed in source files no test glob protects:
 * each file whose base version defines one of the tests, and whose claim
 * version defines it differently or no more.
 *
 * @param repo The repository.
 * @param revisions The starting commit and the claim's commit.
 * @param failing The tests red at the baseline, by name.
 * @param skip Files already protected as a whole (test files: their originals are put back whole).
 * @returns The edits, with the claim's version spliced back where it can be.
 */
export async function redTestEdits(
  repo: GitRepo,
  revisions: { base: string; head: string },
  failing: string[],
  skip: ReadonlySet<string>,
): Promise<RedTestEdit[]> {
  if (failing.length === 0) return [];
  const listed = await repo.exec([
    "diff",
    "--name-only",
    "-z",
    "--diff-filter=M",
    revisions.base,
    revisions.head,
  ]);
  if (listed.code !== 0) return [];
  const files = listed.stdout.split("\0").filter((file) =>
    file !== "" && !skip.has(file) && /\.(rs|go|py|[cm]?[jt]sx?)$/.test(file)
  );
  const edits: RedTestEdit[] = [];
  for (const file of files) {
    const [before, after] = await Promise.all([
      repo.exec(["cat-file", "blob", `${revisions.base}:${file}`]),
      repo.exec(["cat-file", "blob", `${revisions.head}:${file}`]),
    ]);
    if (before.code !== 0 || after.code !== 0) continue;
    const edit = editOf(file, before.stdout, after.stdout, failing);
    if (edit) edits.push(edit);
  }
  return edits;
}

/** The red tests of one file whose definition changed, and the claim's text with the originals put back. */
function editOf(
  file: string,
  before: string,
  after: string,
  failing: string[],
): RedTestEdit | undefined {
  const original = before.split("\n");
  let spliced: string[] | undefined = after.split("\n");
  const tests: string[] = [];
  for (const name of failing) {
    const was = testDefinition(before, file, name);
    if (!was) continue;
    const text = original.slice(was.start, was.end + 1);
    const current: { start: number; end: number } | undefined = spliced
      ? testDefinition(spliced.join("\n"), file, name)
      : undefined;
    const now = testDefinition(after, file, name);
    if (now && after.split("\n").slice(now.start, now.end + 1).join("\n") === text.join("\n")) {
      continue;
    }
    if (!tests.includes(name)) tests.push(name);
    if (!spliced) continue;
    if (!current) {
      // The test went: only the whole original file can bring it back.
      spliced = undefined;
      continue;
    }
    spliced = [
      ...spliced.slice(0, current.start),
      ...text,
      ...spliced.slice(current.end + 1),
    ];
  }
  if (tests.length === 0) return undefined;
  return { path: file, tests, ...(spliced ? { spliced: spliced.join("\n") } : {}) };
}

/** The last `::`-separated segment of a test name (`tests::adds` -> `adds`). */
function lastSegment(name: string): string {
  return name.split("::").at(-1)!.trim();
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

function findLine(lines: string[], pattern: RegExp): number {
  return lines.findIndex((line) => pattern.test(line));
}

/** Whether the attribute lines right above `at` hold one matching `pattern`. */
function attributed(lines: string[], at: number, pattern: RegExp): boolean {
  for (let index = at - 1; index >= 0 && /^\s*(#\[|\/\/)/.test(lines[index]); index--) {
    if (pattern.test(lines[index])) return true;
  }
  return false;
}

/** The first line of the attributes (or decorators) right above `at`. */
function attributeStart(lines: string[], at: number, pattern = /^\s*#\[/): number {
  let start = at;
  while (start > 0 && pattern.test(lines[start - 1])) start--;
  return start;
}

/**
 * The line where the bracket opened first at or after line `from` closes,
 * skipping strings and line comments roughly; -1 when it never does.
 */
function closing(lines: string[], from: number, open: string, close: string): number {
  let depth = 0;
  let opened = false;
  for (let index = from; index < lines.length; index++) {
    const line = lines[index].replace(
      /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g,
      '""',
    )
      .replace(/\/\/.*$/, "");
    for (const char of line) {
      if (char === open) {
        depth++;
        opened = true;
      } else if (char === close) {
        depth--;
        if (opened && depth === 0) return index;
      }
    }
  }
  return -1;
}

/** A red test edit as the gate records it: a protected change, and the file with its originals put back. */
export interface RedTestChange {
  /** The change, as the report and the reviewer see it. */
  change: ChecksEvidence["testsChanged"][number];
  /** The claim's version with the original test definitions; undefined when a test went. */
  spliced?: string;
}

/**
 * The claim's changes to tests red at the baseline in files nothing else
 * protects, for the gate: each is a protected change ("changes the failing
 * test `adds`").
 *
 * @param claim The repository and the claim's commit.
 * @param base The starting commit.
 * @param baseline Each check at the baseline (its failing tests).
 * @param protectedChanges The protected files the claim changed: put back whole, not looked in.
 * @returns The changes.
 */
export async function redTestChanges(
  claim: { repo: GitRepo; head: string },
  base: string,
  baseline: ReadonlyMap<string, { run: { failing: string[] } }>,
  protectedChanges: ReadonlyArray<{ path: string }>,
): Promise<RedTestChange[]> {
  const failing = [...new Set([...baseline.values()].flatMap((view) => view.run.failing))];
  const edits = await redTestEdits(
    claim.repo,
    { base, head: claim.head },
    failing,
    new Set(protectedChanges.map((entry) => entry.path)),
  );
  return edits.map((edit) => ({
    change: {
      path: edit.path,
      change: "modified" as const,
      why: `${edit.spliced === undefined ? "removes" : "changes"} the failing ${
        edit.tests.length === 1 ? "test" : "tests"
      } ${edit.tests.map((name) => `\`${name}\``).join(", ")}`,
    },
    ...(edit.spliced === undefined ? {} : { spliced: edit.spliced }),
  }));
}

/**
 * Write the spliced files into a copy of the claim.
 *
 * @param dir The copy's folder.
 * @param changes The changes whose files have their original tests put back.
 * @returns An error, or undefined.
 */
export async function writeSplices(
  dir: string,
  changes: RedTestChange[],
): Promise<string | undefined> {
  try {
    for (const change of changes) {
      if (change.spliced !== undefined) {
        await Deno.writeTextFile(path.join(dir, change.change.path), change.spliced);
      }
    }
    return undefined;
  } catch (error) {
    return `the original tests could not be put back: ${String(error)}`;
  }
}
