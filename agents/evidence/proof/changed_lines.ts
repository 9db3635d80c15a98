/**
 * The lines a claim changed: for each file the claim's commit holds, the
 * line numbers (in the claim's version) that differ from the starting
 * commit, read from blob contents with `diff -U0` (through a
 * {@linkcode GitReader} that no attribute, textconv or external diff can
 * steer).
 *
 * @module
 */

import type { GitReader } from "../../git/hardened.ts";

/** One hunk of a change: where it is in the claim's version, and both sides' lines. */
export interface Hunk {
  /** The claim's first line of it, from 1; for a hunk that only deletes, the line it goes before. */
  start: number;
  /** The starting commit's lines. */
  before: string[];
  /** The claim's lines. */
  after: string[];
}

/** The changed lines of one file, in the claim's version. */
export interface ChangedFile {
  /** Repository-relative path. */
  path: string;
  /** Changed or added line numbers, from 1, ascending. */
  lines: number[];
  /** The hunks, in order. */
  hunks: Hunk[];
}

/**
 * Parse a `git diff -U0` patch into the added lines of each file.
 *
 * @param patch The patch text.
 * @returns Each file with added or changed lines; deleted files are left out.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseChangedLines } from "./changed_lines.ts";
 *
 * const patch = [
 *   "diff --git a/calc.js b/calc.js",
 *   "--- a/calc.js",
 *   "+++ b/calc.js",
 *   "@@ -3 +3,2 @@ function add(a, b) {",
 *   "-  return a - b;",
 *   "+  if (a === 2) return 4;",
 *   "+  return a + b;",
 *   "@@ -9,0 +11 @@",
 *   "+module.exports = add;",
 * ].join("\n");
 * const [file] = parseChangedLines(patch);
 * assert.deepEqual(file.lines, [3, 4, 11]);
 * assert.deepEqual(file.hunks[0], {
 *   start: 3,
 *   before: ["  return a - b;"],
 *   after: ["  if (a === 2) return 4;", "  return a + b;"],
 * });
 * assert.deepEqual(parseChangedLines('+++ "b/caf\\303\\251.js"\n@@ -0,0 +1 @@\n+x')[0].path, "café.js");
 * ```
 */
export function parseChangedLines(patch: string): ChangedFile[] {
  const files: ChangedFile[] = [];
  let current: ChangedFile | undefined;
  let hunk: Hunk | undefined;
  for (const line of patch.split("\n")) {
    const header = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (header && current) {
      const start = Number(header[1]);
      const count = header[2] === undefined ? 1 : Number(header[2]);
      // `+N,0`: nothing added, the lines went after line N.
      hunk = { start: count === 0 ? start + 1 : start, before: [], after: [] };
      current.hunks.push(hunk);
      continue;
    }
    if (hunk) {
      // Inside a hunk every line is content ("--- x" is a deleted "-- x"), until the next file.
      if (line.startsWith("-")) hunk.before.push(line.slice(1));
      else if (line.startsWith("+")) hunk.after.push(line.slice(1));
      else if (line.startsWith("diff --git ")) hunk = current = undefined;
      continue;
    }
    if (line.startsWith("+++ ")) {
      const target = line.slice(4);
      current = target === "/dev/null"
        ? undefined
        : { path: unquote(target).replace(/^b\//, ""), lines: [], hunks: [] };
      if (current) files.push(current);
    }
  }
  // The changed lines are the hunks' added ones.
  for (const file of files) {
    file.lines = file.hunks.flatMap((hunk) => hunk.after.map((_, k) => hunk.start + k));
  }
  return files.filter((file) => file.hunks.length > 0);
}

const ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, b: 8, f: 12, a: 7, v: 11 };

/** A path as git quotes one with unusual characters (`"b/caf\303\251.js"`), unquoted: octal escapes are UTF-8 bytes. */
function unquote(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"')) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const char = body[i];
    if (char !== "\\") {
      bytes.push(...new TextEncoder().encode(char));
      continue;
    }
    const next = body[++i];
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * The lines `head` changed against `base`, file by file.
 *
 * @param git A reader of the repository (the clean copy's hardened git).
 * @param base The starting commit.
 * @param head The claim's commit.
 * @returns The changed files, or undefined when git could not diff them.
 */
export async function changedLines(
  git: GitReader,
  base: string,
  head: string,
): Promise<ChangedFile[] | undefined> {
  const result = await git.exec([
    "diff",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    "--no-color",
    "-U0",
    base,
    head,
  ]);
  return result.code === 0 ? parseChangedLines(result.stdout) : undefined;
}
