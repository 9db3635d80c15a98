/**
 * The files that define "done", protected by their role rather than their
 * place: a file is protected when a check's runner loads it as a test
 * (`verify.protect`, default `DEFAULT_PROTECTED_GLOBS`, at any depth) or
 * as configuration written in source (`RUNNER_CONFIG_GLOBS`: `conftest.py`,
 * `jest.config.js`, ...; the files detection read, and the files a Makefile
 * includes), and a source file is protected when the change adds or removes
 * an inline test or a skip marker (`#[ignore]`, `it.only`,
 * `@pytest.mark.skip`, ...). Any other file is protected unless it is plain
 * source of the repository's languages or documentation, and text
 * (`plain_source.ts`): bytecode, package metadata, `.pth`, binaries,
 * dependency folders, configuration of any name. Added files count as much
 * as modified ones: a new `conftest.py` can skip every test without touching
 * one.
 *
 * @module
 */

import path from "node:path";
import { RUNNER_CONFIG_GLOBS } from "../../definition/definition_types.ts";
import type { GitRepo } from "../../git/repo.ts";
import type { GitReader } from "../../git/hardened.ts";
import { snapshotTree } from "../copy/worktree_run.ts";
import { isText, notPlainSource, repositoryLanguages } from "./plain_source.ts";

/** Which files are protected. */
export interface ProtectOptions {
  /** Globs of test files (`verify.protect`). */
  protect: string[];
  /** Exact paths of the files detection read (package.json, deno.json, ...). */
  configFiles: string[];
  /** Globs of the files the repository's Makefiles include. @default [] */
  includes?: string[];
  /**
   * The repository's languages: with them, a file that is not plain source of
   * one of them or documentation is protected too (the allowlist). Without
   * them, only roles count. @default undefined
   */
  languages?: ReadonlySet<string>;
}

/** A protected file that changed, and why it is protected. */
export interface ProtectedChange {
  /** The path now (relative to the repository root); for a deleted file, the path it had. */
  path: string;
  /** What happened to it. */
  change: "added" | "modified" | "deleted" | "renamed";
  /** The path before a rename. */
  from?: string;
  /** Why it is protected: "test file", "runner configuration", "adds #[ignore]", joined by "; ". */
  why: string;
}

/** Why a path is protected by its role, or undefined; `not plain source: ...` by the allowlist. */
export type ProtectedRole = "test file" | "runner configuration" | `not plain source: ${string}`;

/**
 * Protected files that differ between `base` and the working tree as it is
 * (uncommitted and untracked files included): added, modified, deleted or
 * renamed, each with the reason it is protected.
 *
 * @param repo The repository.
 * @param base The starting commit.
 * @param options Globs of test files and exact paths of configuration files.
 * @returns The changes, in git's order; empty when git failed.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { changedProtectedFiles } from "./protected_files.ts";
 * import { DEFAULT_PROTECTED_GLOBS } from "../../definition/mod.ts";
 * import { GitRepo } from "../../git/repo.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
 *   const repo = (await GitRepo.open(dir))!;
 *   await repo.exec(["config", "user.name", "Ada"]);
 *   await repo.exec(["config", "user.email", "ada@example.com"]);
 *   await Deno.writeTextFile(`${dir}/README.md`, "# x\n");
 *   const base = (await repo.commitPaths(["README.md"], "start"))!;
 *   await Deno.mkdir(`${dir}/tests`);
 *   await Deno.writeTextFile(`${dir}/tests/conftest.py`, "collect_ignore_glob = ['*']\n");
 *   const changes = await changedProtectedFiles(repo, base, {
 *     protect: [...DEFAULT_PROTECTED_GLOBS],
 *     configFiles: [],
 *   });
 *   assert.deepEqual(changes, [
 *     { path: "tests/conftest.py", change: "added", why: "runner configuration" },
 *   ]);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function changedProtectedFiles(
  repo: GitRepo | GitReader,
  base: string,
  options: ProtectOptions & { head?: string },
): Promise<ProtectedChange[]> {
  // A tree of the working tree as it is (untracked files are changes too), or the commit given.
  const snapshot = options.head ? { tree: options.head } : await snapshotTree(repo as GitRepo);
  if (!snapshot) return [];
  const names = await repo.exec(["diff", "--name-status", "-z", "-M", base, snapshot.tree]);
  if (names.code !== 0) return [];
  const entries = parseNameStatus(names.stdout);
  if (entries.length === 0) return [];
  const [patch, includes, tracked] = await Promise.all([
    repo.exec(["diff", "-U0", "-M", "--src-prefix=a/", "--dst-prefix=b/", base, snapshot.tree]),
    makefileIncludes(repo, [base, snapshot.tree]),
    repo.exec(["ls-tree", "-r", "-z", "--name-only", base]),
  ]);
  const markers = patch.code === 0 ? inlineTestMarkers(patch.stdout) : new Map();
  // The languages the repository had at the start: a file the agent adds does not add one.
  const languages = repositoryLanguages(tracked.code === 0 ? tracked.stdout.split("\0") : []);
  const roles = { ...options, includes: [...(options.includes ?? []), ...includes], languages };
  const changed: ProtectedChange[] = [];
  for (const entry of entries) {
    if (entry.path.startsWith(".agent/")) continue;
    const role = protectedRole(entry.path, roles) ??
      (entry.from === undefined ? undefined : protectedRole(entry.from, roles)) ??
      (entry.change === "deleted" ? undefined : await binary(repo, snapshot.tree, entry.path));
    const why = [...(role ? [role] : []), ...(markers.get(entry.path) ?? [])];
    if (why.length === 0) continue;
    changed.push({ ...entry, why: why.join("; ") });
  }
  return changed;
}

/** The allowlist's verdict on content: a file named as source but not text is protected. */
async function binary(
  repo: GitReader,
  tree: string,
  file: string,
): Promise<ProtectedRole | undefined> {
  const blob = await repo.exec(["cat-file", "blob", `${tree}:${file}`]);
  if (blob.code !== 0) return undefined;
  return isText(blob.stdout) ? undefined : "not plain source: binary";
}

/**
 * Whether a repository path is one that defines done.
 *
 * @param file Path relative to the repository root.
 * @param options Globs of test files and exact configuration paths.
 * @returns True when protected.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_PROTECTED_GLOBS } from "../../definition/mod.ts";
 * import { isProtected } from "./protected_files.ts";
 *
 * const languages = new Set(["javascript", "go"]);
 * const options = { protect: [...DEFAULT_PROTECTED_GLOBS], configFiles: [], languages };
 * assert.equal(isProtected("test/math.test.js", options), true);
 * assert.equal(isProtected("packages/api/src/math_test.go", options), true);
 * assert.equal(isProtected("packages/api/package.json", options), true);
 * assert.equal(isProtected("src/math.js", options), false);
 * ```
 */
export function isProtected(file: string, options: ProtectOptions): boolean {
  return protectedRole(file, options) !== undefined;
}

/**
 * The role that protects a repository path: a check's runner loads it as
 * configuration, or as a test.
 *
 * @param file Path relative to the repository root.
 * @param options Globs of test files, exact configuration paths, Makefile
 *   includes, and the repository's languages for the allowlist.
 * @returns The role, or undefined when the path is not protected.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_PROTECTED_GLOBS } from "../../definition/definition_types.ts";
 * import { protectedRole } from "./protected_files.ts";
 *
 * const options = { protect: [...DEFAULT_PROTECTED_GLOBS], configFiles: [] };
 * assert.equal(protectedRole("packages/x/test/a.js", options), "test file");
 * assert.equal(protectedRole("tests/conftest.py", options), "runner configuration");
 * assert.equal(protectedRole("src/contest.py", options), undefined);
 * ```
 */
export function protectedRole(file: string, options: ProtectOptions): ProtectedRole | undefined {
  // finishline's own agent definitions are not the repository's checks.
  if (file.startsWith(".agent/")) return undefined;
  const matches = (glob: string) => path.matchesGlob(file, glob);
  if (
    options.configFiles.includes(file) || RUNNER_CONFIG_GLOBS.some(matches) ||
    (options.includes ?? []).some(matches)
  ) {
    return "runner configuration";
  }
  if (options.protect.some(matches)) return "test file";
  if (!options.languages) return undefined;
  const kind = notPlainSource(file, options.languages);
  return kind ? `not plain source: ${kind}` : undefined;
}

/**
 * Markers in source that make or unmake tests: an inline test module or
 * test, or a skip, ignore or focus that changes which tests run. `.skip(`
 * counts on a test function only: `iter.skip(1)` is ordinary Rust, Java or
 * C# code.
 */
const MARKERS: ReadonlyArray<readonly [RegExp, (match: string) => string]> = [
  [/#\[cfg\(test\)\]/, () => "#[cfg(test)]"],
  [/#\[(?:[\w:]+::)?test\b/, () => "#[test]"],
  [/#\[ignore\b/, () => "#[ignore]"],
  [/@pytest\.mark\.(?:skip|skipif|xfail)\b/, (match) => match],
  [/\bpytest\.skip\(/, (match) => match],
  [/@unittest\.(?:skip\w*|expectedFailure)\b/, (match) => match],
  [/\bself\.skipTest\(/, (match) => match],
  [/\b(?:it|test|describe|context|suite|bench)(?:\.\w+)*\.(?:skip|only|todo)\b/, (match) => match],
  [/\b(?:xit|xdescribe|xtest|fit|fdescribe)\(/, (match) => match],
  [/\bDeno\.test\.(?:ignore|only)\b/, (match) => match],
  [/\b[tb]\.(?:Skip|SkipNow|Skipf)\(/, (match) => match],
  [/\bt\.(?:skip|todo)\(/, (match) => match],
  [/@(?:Disabled|Ignore)\b/, (match) => match],
];

/**
 * For each file of a unified diff, the test markers its change adds or
 * removes ("adds #[ignore]", "removes it.only"). A marker line that only
 * moves (removed and added unchanged) does not count.
 *
 * @param patch `git diff` output with `a/` and `b/` prefixes.
 * @returns Path (after the change) -> reasons, for the files that have any.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { inlineTestMarkers } from "./protected_files.ts";
 *
 * const patch = [
 *   "diff --git a/src/lib.rs b/src/lib.rs",
 *   "--- a/src/lib.rs",
 *   "+++ b/src/lib.rs",
 *   "@@ -10,0 +11 @@",
 *   "+    #[ignore]",
 *   "diff --git a/src/iter.rs b/src/iter.rs",
 *   "--- a/src/iter.rs",
 *   "+++ b/src/iter.rs",
 *   "@@ -3 +3 @@",
 *   "-    rows.iter().skip(1)",
 *   "+    rows.iter().skip(2)",
 * ].join("\n");
 * assert.deepEqual(inlineTestMarkers(patch), new Map([["src/lib.rs", ["adds #[ignore]"]]]));
 * ```
 */
export function inlineTestMarkers(patch: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  let file: { path: string; added: string[]; removed: string[]; inHunk: boolean } | undefined;
  const finish = () => {
    if (!file) return;
    const reasons = markerReasons(file.added, file.removed);
    if (reasons.length > 0) found.set(file.path, reasons);
  };
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) {
      finish();
      file = { path: pathOfHeader(line), added: [], removed: [], inHunk: false };
      continue;
    }
    if (!file) continue;
    if (!file.inHunk) {
      if (line.startsWith("+++ ") && line !== "+++ /dev/null") {
        file.path = unquote(line.slice(4)).replace(/^b\//, "");
      } else if (line.startsWith("@@")) file.inHunk = true;
      continue;
    }
    if (line.startsWith("+")) file.added.push(line.slice(1).trim());
    else if (line.startsWith("-")) file.removed.push(line.slice(1).trim());
  }
  finish();
  return found;
}

/** The markers of lines added and removed, less the lines that only moved. */
function markerReasons(added: string[], removed: string[]): string[] {
  const marked = (lines: string[]) =>
    lines.filter((line) => MARKERS.some(([pattern]) => pattern.test(line)));
  const plus = marked(added);
  const minus = marked(removed);
  for (let index = plus.length - 1; index >= 0; index--) {
    const twin = minus.indexOf(plus[index]);
    if (twin < 0) continue;
    minus.splice(twin, 1);
    plus.splice(index, 1);
  }
  const reasons = new Set<string>();
  for (const [lines, verb] of [[plus, "adds"], [minus, "removes"]] as const) {
    for (const line of lines) {
      for (const [pattern, label] of MARKERS) {
        const match = pattern.exec(line);
        if (match) reasons.add(`${verb} ${label(match[0])}`);
      }
    }
  }
  return [...reasons];
}

/** The new path of a `diff --git a/x b/y` header, for a block with no `+++` line. */
function pathOfHeader(line: string): string {
  const rest = line.slice("diff --git ".length);
  if (rest.startsWith('"')) {
    const second = rest.lastIndexOf(' "');
    return unquote(rest.slice(second + 1)).replace(/^b\//, "");
  }
  const at = rest.lastIndexOf(" b/");
  return at < 0 ? rest : rest.slice(at + 3);
}

/** A path as git quotes it when it holds special characters: `"a/t\303\251st.py"`. */
function unquote(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"')) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  const escapes: Record<string, number> = {
    n: 10,
    t: 9,
    '"': 34,
    "\\": 92,
    a: 7,
    b: 8,
    f: 12,
    r: 13,
    v: 11,
  };
  for (let index = 0; index < body.length; index++) {
    const char = body[index];
    if (char !== "\\") {
      bytes.push(...new TextEncoder().encode(char));
      continue;
    }
    const next = body[index + 1];
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(index + 1, index + 4), 8));
      index += 3;
    } else {
      bytes.push(escapes[next] ?? next.charCodeAt(0));
      index += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** `git diff --name-status -z -M` as changes. */
function parseNameStatus(output: string): Array<Omit<ProtectedChange, "why">> {
  const fields = output.split("\0").filter((field) => field !== "");
  const entries: Array<Omit<ProtectedChange, "why">> = [];
  for (let index = 0; index < fields.length;) {
    const status = fields[index];
    if (status.startsWith("R") || status.startsWith("C")) {
      const [from, to] = [fields[index + 1], fields[index + 2]];
      index += 3;
      if (to === undefined) break;
      entries.push(
        status.startsWith("R")
          ? { path: to, change: "renamed", from }
          : { path: to, change: "added" },
      );
      continue;
    }
    const file = fields[index + 1];
    index += 2;
    if (file === undefined) break;
    const change = status === "A" ? "added" : status === "D" ? "deleted" : "modified";
    entries.push({ path: file, change });
  }
  return entries;
}

/** The names make reads as a makefile. */
const MAKEFILE_NAMES: ReadonlySet<string> = new Set(["GNUmakefile", "makefile", "Makefile"]);
/** How many makefiles of one tree are read for their includes. */
const MAKEFILE_LIMIT = 50;

/**
 * Globs (relative to the root) of the files the makefiles of the given
 * trees include (`include`, `-include`, `sinclude`): make loads them as its
 * own configuration. Names built from variables are left out.
 */
async function makefileIncludes(
  repo: GitRepo | GitReader,
  revisions: string[],
): Promise<string[]> {
  const globs = new Set<string>();
  for (const revision of revisions) {
    const listed = await repo.exec(["ls-tree", "-r", "-z", "--name-only", revision]);
    if (listed.code !== 0) continue;
    const makefiles = listed.stdout.split("\0")
      .filter((file) => MAKEFILE_NAMES.has(path.posix.basename(file)))
      .slice(0, MAKEFILE_LIMIT);
    for (const makefile of makefiles) {
      const text = await repo.exec(["cat-file", "blob", `${revision}:${makefile}`]);
      if (text.code !== 0) continue;
      for (const glob of includesOf(text.stdout, path.posix.dirname(makefile))) globs.add(glob);
    }
  }
  return [...globs];
}

/**
 * The files a makefile includes, relative to the repository root.
 *
 * @param text The makefile.
 * @param dir Its folder, relative to the root ("." at the root).
 * @returns Globs of the included files.
 */
function includesOf(text: string, dir: string): string[] {
  const globs: string[] = [];
  for (const line of text.replace(/\\\n/g, " ").split("\n")) {
    const match = /^\s*(?:-include|sinclude|include)\s+(.+?)\s*(?:#.*)?$/.exec(line);
    if (!match) continue;
    for (const word of match[1].split(/\s+/)) {
      if (word === "" || word.includes("$") || path.posix.isAbsolute(word)) continue;
      const joined = path.posix.normalize(path.posix.join(dir, word));
      if (!joined.startsWith("../../")) globs.push(joined);
    }
  }
  return globs;
}
