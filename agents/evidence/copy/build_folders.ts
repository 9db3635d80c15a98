/**
 * The build folders a copy keeps for its checks (`run/build_folder.ts`):
 * `build/<system>-<hash of the check's name>` in the copy's own folder,
 * beside its work tree, out of the commit's reach. Emptied at each move of
 * the copy; the build seed's copies planted there after it
 * (`build_seed.ts`) are used only while the work tree's build definitions
 * are, byte for byte, those of the seed's commit.
 *
 * @module
 */

import path from "node:path";
import type { GitReader } from "../../git/hardened.ts";
import type { RepoCheck } from "../run/check_run.ts";
import { type BuildSystem, isBuildDefinition } from "../run/build_folder.ts";
import { sha256Hex } from "../../support/errors.ts";

/** A build folder emptied before a check because the tree's build definitions are not the seed's. */
export interface DroppedBuild {
  /** The check's name. */
  check: string;
  /** Its build system. */
  system: BuildSystem;
  /** The build definitions that differ from the seed's commit (changed, added or gone). */
  files: string[];
}

/**
 * Where a check's kept build folder lives below the copy's folder: named
 * after its build system and its name, so that two checks never share one.
 *
 * @param check A check that keeps a build folder.
 * @returns The path below the copy's folder (`build/meson-0123456789ab`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildEntry } from "./build_folders.ts";
 *
 * const entry = await buildEntry({ name: "meson test", command: "meson test", buildFolder: "meson" });
 * assert.match(entry, /^build\/meson-[0-9a-f]{12}$/);
 * ```
 */
export async function buildEntry(check: RepoCheck): Promise<string> {
  return `build/${check.buildFolder}-${(await sha256Hex(check.name)).slice(0, 12)}`;
}

/** The kept build folders of one copy, and which of them hold the seed's copy. */
export class BuildFolders {
  readonly #folder: string;
  readonly #tree: GitReader & { workTree: string };
  /** The entries (`build/<name>`) that hold a seed's copy since the last move, and its commit. */
  readonly #fromSeed = new Map<string, string>();

  /**
   * The build folders of a copy.
   *
   * @param folder The copy's own folder (the parent of `build/`).
   * @param tree The copy's repository, read hardened, and its work tree.
   */
  constructor(folder: string, tree: GitReader & { workTree: string }) {
    this.#folder = folder;
    this.#tree = tree;
  }

  /**
   * Empty the build folders, but the entries in `kept`; none holds the seed's copy after.
   *
   * @param kept Paths below the copy's folder to keep (`build/<name>`; others are ignored).
   * @returns Resolves once done; never throws.
   */
  async clean(kept: readonly string[] = []): Promise<void> {
    this.#fromSeed.clear();
    const builds = path.join(this.#folder, "build");
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(builds)) names.push(entry.name);
    } catch {
      return;
    }
    for (const name of names) {
      if (kept.includes(`build/${name}`)) continue;
      await Deno.remove(path.join(builds, name), { recursive: true }).catch(() => {});
    }
  }

  /**
   * The seed is in place: its build folders hold its copy.
   *
   * @param entries The seed's entries (those below `build/` count).
   * @param commit The commit the seed was built from.
   */
  seeded(entries: readonly string[], commit: string): void {
    this.#fromSeed.clear();
    for (const entry of entries) if (entry.startsWith("build/")) this.#fromSeed.set(entry, commit);
  }

  /**
   * The kept build folder of `check`, made if missing. One that holds a
   * seed's copy is emptied first when the work tree's build definitions are
   * not those of the seed's commit; then `fallback`'s folder is planted
   * instead when the work tree's are its commit's (the starting commit's,
   * put back), else the check builds from nothing.
   *
   * @param check The check.
   * @param fallback Another seed: its commit, and what plants its copy of an entry.
   * @returns The folder and the build definitions that made it empty, or
   * undefined for a check that keeps none.
   */
  async ready(
    check: RepoCheck,
    fallback?: { commit: string; plant: (entry: string) => Promise<boolean> },
  ): Promise<{ dir: string; dropped?: DroppedBuild } | undefined> {
    const system = check.buildFolder;
    if (!system) return undefined;
    const entry = await buildEntry(check);
    const dir = path.join(this.#folder, entry);
    let dropped: DroppedBuild | undefined;
    const since = this.#fromSeed.get(entry);
    if (since !== undefined) {
      const files = await this.#changes(system, since);
      if (files.length > 0) {
        this.#fromSeed.delete(entry);
        await Deno.remove(dir, { recursive: true }).catch(() => {});
        dropped = { check: check.name, system, files };
        if (
          fallback && fallback.commit !== since &&
          (await this.#changes(system, fallback.commit)).length === 0 &&
          await fallback.plant(entry)
        ) {
          this.#fromSeed.set(entry, fallback.commit);
          dropped = undefined;
        }
      }
    }
    await Deno.mkdir(dir, { recursive: true });
    return { dir, ...(dropped ? { dropped } : {}) };
  }

  /**
   * The build definitions of `system` in the work tree (tracked or not, the
   * bytes on disk) that are not those of `since`: changed, added or gone.
   * When git cannot tell, a placeholder: the folder is not trusted.
   */
  async #changes(system: BuildSystem, since: string): Promise<string[]> {
    const before = await this.#tree.exec(["ls-tree", "-r", "-z", "--full-tree", since]);
    const present = await this.#tree.exec(["ls-files", "-z", "--cached", "--others"]);
    if (before.code !== 0 || present.code !== 0) return ["(git could not list the files)"];
    const blobs = new Map<string, string>();
    for (const line of before.stdout.split("\0")) {
      // <mode> <type> <object>\t<path>
      const tab = line.indexOf("\t");
      const file = line.slice(tab + 1);
      if (tab > 0 && isBuildDefinition(system, file)) {
        blobs.set(file, line.slice(0, tab).split(" ")[2]);
      }
    }
    const onDisk: string[] = [];
    for (const file of new Set(present.stdout.split("\0"))) {
      if (!file || !isBuildDefinition(system, file)) continue;
      if (await Deno.lstat(path.join(this.#tree.workTree, file)).catch(() => undefined)) {
        onDisk.push(file);
      }
    }
    const changed = [...blobs.keys()].filter((file) => !onDisk.includes(file));
    // A name with a line break cannot be hashed by path on a line: counted as changed.
    const compared = onDisk.filter((file) => blobs.has(file) && !file.includes("\n"));
    changed.push(...onDisk.filter((file) => !compared.includes(file)));
    if (compared.length > 0) {
      const hashed = await this.#tree.exec(["hash-object", "--no-filters", "--", ...compared]);
      const hashes = hashed.stdout.split("\n");
      compared.forEach((file, index) => {
        if (hashed.code !== 0 || hashes[index] !== blobs.get(file)) changed.push(file);
      });
    }
    return changed.sort();
  }
}
