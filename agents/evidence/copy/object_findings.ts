/**
 * What the clean copy's repository finds that refuses a claim by itself: a
 * file of the copy that is not the bytes of its blob (something between
 * git's objects and the files, such as a filter, an attribute, a link out of
 * the tree, or a write after the checkout), and a source file that git calls
 * binary by its content, whose diff no scan can read.
 *
 * @module
 */

import path from "node:path";

/** How the copy's own finding starts ({@linkcode ObjectCopy.verify}). */
export const OBJECT_FINDING: RegExp =
  /^the clean copy of [0-9a-f]+ does not hold what its objects hold/;

/**
 * The feedback for a copy whose files are not its commit's objects.
 *
 * @param finding What {@linkcode ObjectCopy.verify} found.
 * @returns The feedback.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { objectFinding } from "./object_findings.ts";
 *
 * assert.match(objectFinding("the clean copy of abc does not hold what its objects hold: \"a\""), /^finishline checks/);
 * ```
 */
export function objectFinding(finding: string): string {
  return `finishline checks a copy of your commit made from git's objects, with every file compared with its blob before anything runs, and ${finding}. The checks did not run. Commit the files as they should be read (no filter, attribute or link that makes the checked-out files differ from what the commit holds)`;
}

/** Extensions of files that are source or documentation: text, whose diff the gate reads. */
const TEXT_SOURCES: ReadonlySet<string> = new Set(
  (
    "js mjs cjs jsx ts tsx mts cts py pyi pyx rs go rb java kt kts c h cc cpp cxx hpp hh cs " +
    "php swift scala sh bash zsh md rst txt json jsonc json5 yaml yml toml ini cfg html css " +
    "scss less vue svelte lua pl pm ex exs erl hs ml mli clj dart r jl zig nim sql mk cmake " +
    "gradle groovy xml svg tex adoc"
  ).split(" "),
);

/** File names without an extension that are source too. */
const TEXT_NAMES: ReadonlySet<string> = new Set([
  "Makefile",
  "GNUmakefile",
  "makefile",
  "Dockerfile",
  "Rakefile",
  "Gemfile",
  "Justfile",
  "Cargo.lock",
]);

/**
 * Whether a path names a source or documentation file (by its extension).
 *
 * @param file A repository path.
 * @returns True for source and documentation.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isTextSource } from "./object_findings.ts";
 *
 * assert.equal(isTextSource("src/lib.rs"), true);
 * assert.equal(isTextSource("assets/logo.png"), false);
 * ```
 */
export function isTextSource(file: string): boolean {
  const name = path.posix.basename(file);
  if (TEXT_NAMES.has(name)) return true;
  const dot = name.lastIndexOf(".");
  return dot > 0 && TEXT_SOURCES.has(name.slice(dot + 1).toLowerCase());
}

/**
 * The source files added or changed between `base` and `head` that git
 * calls binary by their content (a NUL byte near the start): attributes are
 * neutral in finishline's repository, so this is the bytes' doing.
 *
 * @param copy The clean copy's repository.
 * @param base The starting commit.
 * @param head The claim's commit.
 * @returns The paths.
 */
export async function binarySources(
  copy: {
    run(
      args: string[],
      options: { text?: boolean },
    ): Promise<{ code: number; stdout: string; stderr: string }>;
  },
  base: string,
  head: string,
): Promise<string[]> {
  const listed = await copy.run(
    ["diff", "--numstat", "-z", "--no-renames", "--diff-filter=AM", base, head],
    { text: false },
  );
  if (listed.code !== 0) return [];
  const found: string[] = [];
  for (const record of listed.stdout.split("\0")) {
    const match = /^-\t-\t(.+)$/s.exec(record);
    if (match && isTextSource(match[1])) found.push(match[1]);
  }
  return found;
}

/**
 * The feedback for source files git calls binary.
 *
 * @param files Their paths.
 * @returns The feedback.
 */
export function binaryFinding(files: string[]): string {
  const shown = files.slice(0, 8).map((file) => `"${file}"`).join(", ");
  const more = files.length > 8 ? ` and ${files.length - 8} more` : "";
  return `${shown}${more} ${
    files.length === 1 ? "is a source file" : "are source files"
  } that git calls binary by ${
    files.length === 1 ? "its" : "their"
  } content (a NUL byte near the start): no diff or scan of finishline's can read ${
    files.length === 1 ? "it" : "them"
  }, so the checks did not run. Commit source as text`;
}
