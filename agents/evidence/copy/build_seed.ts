/**
 * The build output the clean copy starts from. A Cargo crate checked in a
 * fresh worktree builds everything again at every claim: for a small crate
 * that is most of the verification's time, for a large one minutes; a Meson,
 * CMake or autotools project configures and builds from nothing too. The
 * baseline already built the starting commit in its own copy; its `target`
 * (and `Cargo.lock`, when the commit does not track one) and the build
 * folders its Meson, CMake and autotools checks kept (`run/build_folder.ts`)
 * are moved aside as the run's seed and copied into the clean copy each time
 * the copy moves to a commit.
 *
 * Why a stale artifact cannot stand in for the agent's code:
 * - the seed is what finishline built from the starting commit, never the
 *   checkout's `target` or build folder, and never what a claim's checks
 *   wrote (each move starts from the seed again);
 * - Cargo, make and ninja decide freshness by modification time, and git
 *   gives checked-out files the time of the checkout; so every tracked file
 *   gets one fixed time when its content is the starting commit's, in the
 *   baseline's worktree and in the clean copy alike, and the time of the
 *   move when it differs: each tool rebuilds exactly what the commit changed;
 * - a build folder records the absolute folder it was configured in and
 *   keeps what its configure step decided (Meson's option values, CMake's
 *   cache, autotools' configured tree): such a seed is planted only in the
 *   folder it was built in (the baseline's copy, which becomes the clean
 *   copy, green or red), and the copy drops a planted build folder whose
 *   build definitions differ from those of the seed's commit
 *   (`copy/build_folders.ts`); a claim that changes them gets a seed of its
 *   own (`copy/claim_seed.ts`);
 * - the seed's files are listed (inode, size, modification and change
 *   times) when it is taken and compared before and after each copy; a seed
 *   changed since is dropped, and the checks build from nothing.
 *
 * The copy is made while the agent works: after a claim's checks, what they
 * wrote is removed and the seed copied in and listed; the next claim uses
 * that copy only if it is still as listed (inodes, sizes, modes, times), and
 * copies the seed again if not.
 *
 * A seed above 2 GiB or 50,000 files is not kept: copying it at every move
 * would cost more than it saves.
 *
 * What remains: the agent's session runs while the baseline builds, as the
 * same user, and could write into the baseline's folder then, as it could
 * into the baseline's results; and Deno gives change times to the second, so
 * a change in the second the seed is listed may pass unseen.
 *
 * @module
 */

import { tmpdir } from "node:os";
import path from "node:path";
import type { GitReader } from "../../git/hardened.ts";
import { runTool } from "../../support/process.ts";
import { sha256Hex } from "../../support/errors.ts";

/** The time tracked files get when their content is the seed's commit's: 2000-01-01 00:00 UTC. */
const SETTLED = "200001010000.00";

/** How many paths one `touch` is given. */
const BATCH = 500;

/**
 * The largest seed kept: a copy at every move must cost less than the build it
 * saves, and fit beside it in the temp folder. Above it the checks build from
 * nothing, as without a seed.
 */
const MAX_SEED = { bytes: 2 * 1024 ** 3, entries: 50_000 };

/**
 * The root entries of `commit` that are Cargo's build output to seed: with
 * a tracked `Cargo.toml` at the root, `target` unless tracked, and
 * `Cargo.lock` unless tracked.
 *
 * @param repo The repository.
 * @param commit The starting commit.
 * @returns The entries, none when the commit is not a Cargo project.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GitRepo } from "../../git/repo.ts";
 * import { seedEntries } from "./build_seed.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const git = (...args: string[]) => new Deno.Command("git", { args, cwd: dir }).output();
 *   await git("init", "-q", "-b", "main");
 *   await Deno.writeTextFile(`${dir}/Cargo.toml`, "[package]\nname = \"a\"\n");
 *   await git("add", "Cargo.toml");
 *   await git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "-m", "a");
 *   const repo = (await GitRepo.open(dir))!;
 *   assert.deepEqual(await seedEntries(repo, "HEAD"), ["target", "Cargo.lock"]);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function seedEntries(repo: GitReader, commit: string): Promise<string[]> {
  const listed = await repo.exec([
    "ls-tree",
    "--name-only",
    commit,
    "--",
    "Cargo.toml",
    "Cargo.lock",
    "target",
  ]);
  if (listed.code !== 0) return [];
  const tracked = new Set(listed.stdout.split("\n"));
  if (!tracked.has("Cargo.toml") || tracked.has("target")) return [];
  return tracked.has("Cargo.lock") ? ["target"] : ["target", "Cargo.lock"];
}

/**
 * Give every tracked file of the copy's work tree the fixed time, except
 * those whose content differs from `since`: they get the time of now. Run
 * after each checkout, before the checks.
 *
 * @param copy The copy's repository (read hardened) and its work tree.
 * @param since The seed's commit; without it every tracked file is settled.
 * @param head The commit the work tree holds, or null to compare with the
 * files as they are on disk (some put back from another commit). @default "HEAD"
 * @returns Undefined, or why it could not be done.
 */
export async function settleTimes(
  copy: GitReader & { workTree: string },
  since?: string,
  head: string | null = "HEAD",
): Promise<string | undefined> {
  const dir = copy.workTree;
  const listed = await copy.exec(["ls-files", "-z"]);
  if (listed.code !== 0) return `cannot list the tracked files: ${listed.stderr.trim()}`;
  const changed = new Set<string>();
  if (since) {
    const diff = await copy.exec([
      "diff",
      "--name-only",
      "--no-renames",
      "-z",
      since,
      ...(head === null ? [] : [head]),
    ]);
    if (diff.code !== 0) return `cannot compare with ${since.slice(0, 12)}: ${diff.stderr.trim()}`;
    for (const file of diff.stdout.split("\0")) if (file) changed.add(file);
  }
  const files = [...new Set(listed.stdout.split("\0").filter(Boolean))];
  const settled = files.filter((file) => !changed.has(file));
  return await touch(dir, settled, ["-t", SETTLED]) ??
    await touch(dir, files.filter((file) => changed.has(file)), []);
}

/** `touch -h -m` (the link itself, never what it points to) on `files`, in batches. */
async function touch(dir: string, files: string[], time: string[]): Promise<string | undefined> {
  for (let index = 0; index < files.length; index += BATCH) {
    const result = await runTool(
      "touch",
      ["-h", "-m", ...time, "--", ...files.slice(index, index + BATCH)],
      { cwd: dir, timeoutMs: 60_000, env: { TZ: "UTC" } },
    );
    // A tracked file the checkout could not write (a submodule's folder) is not fatal.
    if (result.code !== 0 && !/No such file/.test(result.stderr)) {
      return `cannot set the files' times: ${result.stderr.trim().split("\n")[0]}`;
    }
  }
  return undefined;
}

/**
 * The baseline's build output, kept aside for the run.
 *
 * @example Take a seed from a worktree and plant it in another
 * ```ts
 * import assert from "node:assert/strict";
 * import { BuildSeed } from "./build_seed.ts";
 *
 * const built = await Deno.makeTempDir();
 * const copy = await Deno.makeTempDir();
 * try {
 *   await Deno.mkdir(`${built}/target/debug`, { recursive: true });
 *   await Deno.writeTextFile(`${built}/target/debug/app`, "binary");
 *   const seed = (await BuildSeed.take(built, "0123abcd", ["target", "Cargo.lock"]))!;
 *   assert.equal(await seed.plant(copy), true);
 *   assert.equal(await Deno.readTextFile(`${copy}/target/debug/app`), "binary");
 *   await Deno.writeTextFile(`${seed.dir}/target/debug/app`, "forged");
 *   assert.equal(await seed.plant(copy), false, "a seed changed since it was taken is not used");
 *   await seed.remove();
 *   // Too large to copy at every move: not kept, and gone from where it was built.
 *   await Deno.mkdir(`${built}/target/debug`, { recursive: true });
 *   await Deno.writeTextFile(`${built}/target/debug/app`, "binary");
 *   const limits = { bytes: 3, entries: 10 };
 *   assert.equal(await BuildSeed.take(built, "0123abcd", ["target"], { limits }), undefined);
 *   assert.equal(await Deno.stat(`${built}/target`).catch(() => undefined), undefined);
 *   // A build folder records the folder it was configured in: planted there only.
 *   await Deno.mkdir(`${built}/build/meson`, { recursive: true });
 *   const bound = (await BuildSeed.take(built, "0123abcd", ["build/meson"], { bound: true }))!;
 *   assert.equal(await bound.plant(copy), false);
 *   assert.equal(await bound.plant(built), true);
 *   await bound.remove();
 * } finally {
 *   await Deno.remove(built, { recursive: true });
 *   await Deno.remove(copy, { recursive: true });
 * }
 * ```
 */
export class BuildSeed {
  /** The commit it was built from. */
  readonly commit: string;
  /** The folder that holds it. */
  readonly dir: string;
  readonly #entries: string[];
  /** The folder it was taken from, when it may be planted there only. */
  readonly #bound: string | undefined;
  /** Every file of the seed's folder: what a change to the seed is found by. */
  #listing: string | undefined;
  /** Its entries alone, as a copy of them is listed. */
  readonly #entriesListing: string;

  private constructor(
    commit: string,
    dir: string,
    entries: string[],
    listings: { all: string; entries: string },
    bound: string | undefined,
  ) {
    this.commit = commit;
    this.dir = dir;
    this.#entries = entries;
    this.#listing = listings.all;
    this.#entriesListing = listings.entries;
    this.#bound = bound;
  }

  /**
   * Move `entries` out of the folder where they were built.
   *
   * @param worktree The folder (a copy's work tree, or the copy's folder that holds it).
   * @param commit The commit it holds.
   * @param entries Paths below it ({@linkcode seedEntries}, `build/<folder>`); those missing
   * are skipped. A seed holds at least one folder.
   * @param options `limits`: the largest seed kept (2 GiB, 50,000 files), a larger one is
   * removed; `owner`: the repository and the run, named in the seed's folder so that the
   * next run removes it when this one was killed ({@linkcode removeStaleSeeds}); `bound`:
   * planted in `worktree` only, never elsewhere (a build folder that records where it was
   * configured); `notAfter`: a seed with a file dated after this time (milliseconds since
   * the epoch) is not kept (make and ninja would take that file as newer than any change).
   * @returns The seed, or undefined when none of them is there, too large, or dated too late.
   */
  static async take(
    worktree: string,
    commit: string,
    entries: string[],
    options: {
      limits?: { bytes: number; entries: number };
      owner?: { repo: string; run: string };
      bound?: boolean;
      notAfter?: number;
    } = {},
  ): Promise<BuildSeed | undefined> {
    const limits = options.limits ?? MAX_SEED;
    const dir = await Deno.makeTempDir({
      prefix: options.owner
        ? `${await seedPrefix(options.owner.repo)}${options.owner.run}-`
        : "finishline-build-",
    });
    const taken: string[] = [];
    let folders = 0;
    for (const entry of entries) {
      const from = path.join(worktree, entry);
      const info = await Deno.lstat(from).catch(() => undefined);
      if (!info || info.isSymlink) continue;
      const to = path.join(dir, entry);
      await Deno.mkdir(path.dirname(to), { recursive: true });
      try {
        await Deno.rename(from, to);
      } catch {
        // Another file system: a copy, then the original goes.
        if (!await copyInto(from, path.dirname(to))) continue;
        await Deno.remove(from, { recursive: true }).catch(() => {});
      }
      taken.push(entry);
      if (info.isDirectory) folders++;
    }
    const listed = folders > 0 ? await listing(dir) : undefined;
    if (
      !listed || tooLarge(listed, limits) ||
      (options.notAfter !== undefined && datedAfter(listed, options.notAfter))
    ) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      return undefined;
    }
    return new BuildSeed(
      commit,
      dir,
      taken,
      { all: listed, entries: await listing(dir, taken) },
      options.bound ? path.resolve(worktree) : undefined,
    );
  }

  /**
   * Copy the seed into a worktree, in place of what is there; a seed changed
   * since it was taken is removed instead, and so is what was copied. A
   * bound seed is planted only in the folder it was taken from.
   *
   * @param worktree The worktree's folder.
   * @param only The entries to plant (default: all); the others are left as they are.
   * @returns Whether the seed is in place.
   */
  async plant(worktree: string, only?: readonly string[]): Promise<boolean> {
    const entries = only ? this.#entries.filter((entry) => only.includes(entry)) : this.#entries;
    await this.#unplant(worktree, entries);
    if (this.#listing === undefined || await listing(this.dir) !== this.#listing) {
      await this.remove();
      return false;
    }
    if (!this.plantsIn(worktree) || entries.length === 0) return false;
    for (const entry of entries) {
      const into = path.dirname(path.join(worktree, entry));
      await Deno.mkdir(into, { recursive: true });
      if (!await copyInto(path.join(this.dir, entry), into)) {
        await this.#unplant(worktree, entries);
        return false;
      }
    }
    // Changed while it was copied: what was copied cannot be trusted either.
    if (await listing(this.dir) !== this.#listing) {
      await this.#unplant(worktree, entries);
      await this.remove();
      return false;
    }
    return true;
  }

  /**
   * Whether the seed can still be planted.
   *
   * @returns False once it was found changed, or removed.
   */
  get usable(): boolean {
    return this.#listing !== undefined;
  }

  /**
   * Whether the seed may be planted in `worktree`: anywhere, unless it is
   * bound to the folder it was taken from.
   *
   * @param worktree A folder.
   * @returns False for a bound seed and another folder.
   */
  plantsIn(worktree: string): boolean {
    return this.#bound === undefined || this.#bound === path.resolve(worktree);
  }

  /**
   * The paths it holds, below the folder it was taken from: in a clean copy's
   * folder, `tree/target` (and `tree/Cargo.lock` when the commit does not
   * track one) and the kept build folders, `build/<name>`.
   *
   * @returns The entries.
   */
  get entries(): readonly string[] {
    return this.#entries;
  }

  /**
   * Plant the seed now, and list what was planted: {@linkcode BuildSeed.intact}
   * later tells whether it is still what was copied, so that the copy can
   * be made while the agent works, not when its claim is waiting.
   *
   * @param worktree The worktree's folder.
   * @returns The listing of the planted copy, or undefined when the seed is not in place.
   * @example A copy written into after it was planted is not used
   * ```ts
   * import assert from "node:assert/strict";
   * import { BuildSeed } from "./build_seed.ts";
   *
   * const built = await Deno.makeTempDir();
   * const copy = await Deno.makeTempDir();
   * try {
   *   await Deno.mkdir(`${built}/target/debug`, { recursive: true });
   *   await Deno.writeTextFile(`${built}/target/debug/app`, "binary");
   *   const seed = (await BuildSeed.take(built, "0123abcd", ["target"]))!;
   *   const planted = (await seed.plantAhead(copy))!;
   *   assert.equal(await seed.intact(copy, planted), true);
   *   await Deno.writeTextFile(`${copy}/target/debug/app`, "forged");
   *   assert.equal(await seed.intact(copy, planted), false);
   *   await seed.remove();
   * } finally {
   *   await Deno.remove(built, { recursive: true });
   *   await Deno.remove(copy, { recursive: true });
   * }
   * ```
   */
  async plantAhead(worktree: string): Promise<string | undefined> {
    if (!await this.plant(worktree)) return undefined;
    const planted = await listing(worktree, this.#entries);
    // Every file as in the seed (kind, size, mode, modification time, link): nothing
    // changed it between the copy and its listing.
    if (sameFiles(planted, this.#entriesListing)) return planted;
    await this.#unplant(worktree);
    return undefined;
  }

  /**
   * Whether a copy planted ahead is as it was listed (paths, inodes, sizes,
   * modes, modification and change times): a file written, replaced, added
   * or removed since makes it not. A seed changed since it was taken is
   * dropped, as {@linkcode BuildSeed.plant} drops it.
   *
   * @param worktree The worktree's folder.
   * @param planted What {@linkcode BuildSeed.plantAhead} listed.
   * @returns True when it can be used as planted.
   */
  async intact(worktree: string, planted: string): Promise<boolean> {
    if (!this.usable) return false;
    // The seed itself changed since it was taken: dropped, as at a plant.
    if (await listing(this.dir).catch(() => undefined) !== this.#listing) {
      await this.remove();
      return false;
    }
    return await listing(worktree, this.#entries).catch(() => undefined) === planted;
  }

  /**
   * Remove the seed's folder; never throws.
   *
   * @returns Resolves once it is gone.
   */
  async remove(): Promise<void> {
    this.#listing = undefined;
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }

  async #unplant(worktree: string, entries: readonly string[] = this.#entries): Promise<void> {
    for (const entry of entries) {
      await Deno.remove(path.join(worktree, entry), { recursive: true }).catch(() => {});
    }
  }
}

/** The start of the name of a repository's seed folders: its root's hash, then the run. */
async function seedPrefix(repoRoot: string): Promise<string> {
  return `finishline-build-${(await sha256Hex(repoRoot)).slice(0, 12)}-`;
}

/**
 * Remove the build seeds of `repoRoot`'s runs that are dead (killed before
 * they could remove them): the seed folders in the temp folder named with
 * the repository and a run that `isDead` says is over. Seeds of other
 * repositories, and of runs still alive, stay.
 *
 * @param repoRoot The repository's root.
 * @param isDead Whether a run (by id) is over.
 * @returns The folders removed.
 */
export async function removeStaleSeeds(
  repoRoot: string,
  isDead: (runId: string) => Promise<boolean>,
): Promise<string[]> {
  // The folder Deno.makeTempDir uses: TMPDIR, else /tmp.
  const tmp = tmpdir();
  const prefix = await seedPrefix(repoRoot);
  const removed: string[] = [];
  for await (const entry of Deno.readDir(tmp)) {
    if (!entry.isDirectory || !entry.name.startsWith(prefix)) continue;
    // <prefix><run>-<random>: the run is what lies between.
    const rest = entry.name.slice(prefix.length);
    const run = rest.slice(0, rest.lastIndexOf("-"));
    if (!/^[\w.-]+$/.test(run) || !await isDead(run)) continue;
    const dir = path.join(tmp, entry.name);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    removed.push(dir);
  }
  return removed;
}

/** Whether a listing is above the limits. */
function tooLarge(listed: string, limits: { bytes: number; entries: number }): boolean {
  const lines = listed.split("\n");
  if (lines.length > limits.entries) return true;
  let bytes = 0;
  for (const line of lines) bytes += Number(line.split("\t")[3]) || 0;
  return bytes > limits.bytes;
}

/** Whether a listing holds a file modified after `time`. */
function datedAfter(listed: string, time: number): boolean {
  return listed.split("\n").some((line) => Number(line.split("\t")[5]) > time);
}

/** `cp -pR` (times and modes kept) of `from` into the folder `into`. */
async function copyInto(from: string, into: string): Promise<boolean> {
  const result = await runTool("cp", ["-pR", from, into], { cwd: into, timeoutMs: 600_000 });
  return result.code === 0;
}

/**
 * The fields of a listing line a copy keeps (`cp -p`): path, kind, size, mode,
 * modification time and link target; not the inode and change time.
 */
function copied(listed: string): string {
  return listed.split("\n").map((line) => {
    const [name, kind, _ino, size, mode, mtime, _ctime, link] = line.split("\t");
    // A folder's size is its entry table's, which grows with its history and is not copied.
    return [name, kind, kind === "d" ? "" : size, mode, mtime, link].join("\t");
  }).join("\n");
}

/** Whether two listings hold the same files as a copy keeps them. */
function sameFiles(a: string, b: string): boolean {
  return copied(a) === copied(b);
}

/**
 * Every entry below `root` (or below its `only` entries): its path, kind,
 * inode, size, modification and change times.
 */
async function listing(root: string, only?: readonly string[]): Promise<string> {
  const lines: string[] = [];
  const add = async (file: string, name: string) => {
    const info = await Deno.lstat(file);
    const kind = info.isDirectory ? "d" : info.isSymlink ? "l" : "f";
    lines.push(
      [
        name,
        kind,
        info.ino,
        info.size,
        info.mode,
        info.mtime?.getTime(),
        info.ctime?.getTime(),
        kind === "l" ? await Deno.readLink(file) : "",
      ].join("\t"),
    );
    if (info.isDirectory) await walk(file, `${name}/`);
  };
  const walk = async (dir: string, prefix: string) => {
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    names.sort();
    for (const name of names) await add(path.join(dir, name), prefix + name);
  };
  if (!only) {
    await walk(root, "");
    return lines.join("\n");
  }
  for (const entry of [...only].sort()) {
    const file = path.join(root, entry);
    if (await Deno.lstat(file).catch(() => undefined)) await add(file, entry);
  }
  return lines.join("\n");
}
