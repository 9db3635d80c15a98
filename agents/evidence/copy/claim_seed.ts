/**
 * The seed of a claim's changed build definitions. A kept build folder
 * serves only a tree whose build definitions are those it was configured
 * from (`run/build_folder.ts`), so a claim that adds a test to `meson.build`
 * would configure and build from nothing, and so would every later claim
 * that keeps that `meson.build`. finishline builds such a claim's folder
 * once, in its own copy, from a commit it makes itself: the starting
 * commit's tree with the claim's build definitions and the files the claim
 * added (the new test a new `meson.build` names) put in; configure and
 * build only, no test run. That folder is a seed as the baseline's is, for
 * every claim whose tree holds exactly those files.
 *
 * Why a claim cannot poison it:
 * - it is never the claim's own build folder: what the claim's tests, or
 *   any other code of the claim that runs with the checks, write there goes
 *   at the next move, as with the baseline's seed;
 * - the only files of the agent's that run while it is built are those put
 *   in (build definitions and added files), and it serves a claim only when
 *   the claim holds each of them byte for byte
 *   ({@linkcode servesClaim}): the claim's own build runs the same ones;
 *   every other file is the starting commit's, as in the baseline's seed;
 * - the build tools then rebuild what the claim changed, by file times, as
 *   over the baseline's seed; a seed that holds a file dated after it was
 *   built is not kept (a date in the future would hide a change from make
 *   and ninja).
 *
 * What remains: a build definition of the agent's that reads a file it does
 * not declare (a generator that reads a source behind the build tool's
 * back) sees the starting commit's file in the seed's build, and its output
 * is not made again when the claim changes that file. Build definitions are
 * protected files: such a rule is in the diff the reviewer reads.
 *
 * @module
 */

import type { GitReader } from "../../git/hardened.ts";
import { type BuildSystem, isBuildDefinition } from "../run/build_folder.ts";

/** A path is one of `systems`' build definitions. */
function defines(systems: ReadonlySet<BuildSystem>, file: string): boolean {
  return [...systems].some((system) => isBuildDefinition(system, file));
}

/** The paths that differ between two commits, with git's status letter. */
async function changed(
  repo: GitReader,
  from: string,
  to: string,
): Promise<Array<{ status: string; file: string }> | undefined> {
  const diff = await repo.exec(["diff", "--name-status", "--no-renames", "-z", from, to]);
  if (diff.code !== 0) return undefined;
  const fields = diff.stdout.split("\0");
  const found: Array<{ status: string; file: string }> = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    if (fields[index]) found.push({ status: fields[index][0], file: fields[index + 1] });
  }
  return found;
}

/**
 * What a claim's build seed puts into the starting commit's tree: the
 * build definitions of `systems` that `head` changed, added or removed,
 * and every file `head` added; none when no build definition changed (the
 * baseline's seed serves).
 *
 * @param repo The copy's repository (both commits fetched).
 * @param commits The starting commit (`base`), the claim's (`head`), and the build
 * systems whose folders the checks keep (`systems`).
 * @returns The paths, sorted, or undefined when git cannot tell.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GitRepo } from "../../git/repo.ts";
 * import { seedOverlay } from "./claim_seed.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const git = (...args: string[]) => new Deno.Command("git", { args, cwd: dir }).output();
 *   const commit = async (files: Record<string, string>) => {
 *     for (const [file, text] of Object.entries(files)) await Deno.writeTextFile(`${dir}/${file}`, text);
 *     await git("add", "-A");
 *     await git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "-m", "c");
 *     return (await (await GitRepo.open(dir))!.head())!;
 *   };
 *   await git("init", "-q", "-b", "main");
 *   const base = await commit({ "meson.build": "project('a', 'c')\n", "a.c": "int a;\n" });
 *   const repo = (await GitRepo.open(dir))!;
 *   const source = await commit({ "a.c": "int b;\n", "notes.md": "x\n" });
 *   assert.deepEqual(await seedOverlay(repo, { base, head: source, systems: new Set(["meson"]) }), []);
 *   const test = await commit({ "meson.build": "project('a', 'c')\n# t\n", "t.c": "int t;\n" });
 *   assert.deepEqual(await seedOverlay(repo, { base, head: test, systems: new Set(["meson"]) }), [
 *     "meson.build",
 *     "notes.md",
 *     "t.c",
 *   ]);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function seedOverlay(
  repo: GitReader,
  commits: { base: string; head: string; systems: ReadonlySet<BuildSystem> },
): Promise<string[] | undefined> {
  const systems = commits.systems;
  const found = await changed(repo, commits.base, commits.head);
  if (!found) return undefined;
  if (!found.some((entry) => defines(systems, entry.file))) return [];
  return found.filter((entry) => entry.status === "A" || defines(systems, entry.file))
    .map((entry) => entry.file).sort();
}

/**
 * Whether a seed built from `seedCommit` (the starting commit, or one
 * {@linkcode seedOverlay} made) serves `head`: `head` holds every file the
 * seed's commit put into the starting commit's tree, byte for byte, and the
 * same build definitions. The starting commit's seed serves a claim that
 * changed no build definition.
 *
 * @param repo The copy's repository (the three commits there).
 * @param seedCommit The seed's commit.
 * @param commits The starting commit (`base`), the claim's (`head`), and the build
 * systems whose folders the checks keep (`systems`).
 * @returns False when it does not, or git cannot tell.
 */
export async function servesClaim(
  repo: GitReader,
  seedCommit: string,
  commits: { base: string; head: string; systems: ReadonlySet<BuildSystem> },
): Promise<boolean> {
  const systems = commits.systems;
  const put = seedCommit === commits.base ? [] : await changed(repo, commits.base, seedCommit);
  const differ = await changed(repo, seedCommit, commits.head);
  if (!put || !differ) return false;
  const mine = new Set(put.map((entry) => entry.file));
  return !differ.some((entry) => mine.has(entry.file) || defines(systems, entry.file));
}
