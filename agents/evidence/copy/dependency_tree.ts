/**
 * Every file of the dependency folders, as the run found them: a listing of
 * each entry (path, type, size, mode, link target, and the inode and times
 * that move whenever it is written) taken before the agent's first session,
 * with each file's content hash taken right after it. A later state is
 * compared whole in two passes: the listing again (cheap), then a hash of
 * only the files whose inode or times moved. An unprivileged process cannot
 * write a file without moving its change time, so a file that did not move
 * holds what it held at the start.
 *
 * Two kinds of entry are left out of the comparison: caches the tools write
 * as they run (`node_modules/.cache`, `.vite`, `__pycache__`, pnpm's task
 * state), which never reach a clean copy, and the package managers' own
 * records of an install (`.modules.yaml`, `.package-lock.json`, ...), which
 * reach a clean copy as they were at the start, from the bytes kept here.
 *
 * @module
 */

import { createHash } from "node:crypto";
import path from "node:path";

/** One entry of a dependency folder. */
export interface TreeEntry {
  /** Its type. */
  kind: "file" | "dir" | "link" | "other";
  /** Size in bytes. */
  size: number;
  /** Permission bits. */
  mode: number;
  /** A link's target. */
  target?: string;
  /** Inode, modification and change time (ms): what moves when it is written. */
  ino: number;
  mtime: number;
  ctime: number;
}

/** What a path under a dependency folder is to the comparison. */
export type EntryRole = "compared" | "cache" | "state";

/** Caches tools write directly under a `node_modules` folder while they run. */
const NODE_CACHES = [".cache", ".vite", ".vite-temp", ".vitest", ".eslintcache"];
/** Package managers' records of an install, directly under a `node_modules` folder. */
const NODE_STATE = [".modules.yaml", ".package-lock.json", ".yarn-state.yml", ".yarn-integrity"];

/**
 * What a path (relative to the repository root) under a dependency folder
 * is: a cache the tools write, a package manager's record of the install, or
 * part of what is installed (compared).
 *
 * @param rel The path.
 * @returns Its role.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { entryRole } from "./dependency_tree.ts";
 *
 * assert.equal(entryRole("node_modules/.vite/deps/a.js"), "cache");
 * assert.equal(entryRole("packages/a/node_modules/.modules.yaml"), "state");
 * assert.equal(entryRole("node_modules/left-pad/lib/pad.js"), "compared");
 * ```
 */
export function entryRole(rel: string): EntryRole {
  const parts = rel.split("/");
  if (parts.includes("__pycache__")) return "cache";
  if (rel === ".yarn/install-state.gz") return "state";
  for (let i = 0; i < parts.length - 1; i++) {
    if (parts[i] !== "node_modules") continue;
    const next = parts[i + 1];
    if (NODE_CACHES.includes(next) || next.startsWith(".pnpm-task-run-state")) return "cache";
    if (i + 2 === parts.length) {
      if (NODE_STATE.includes(next) || next.startsWith(".pnpm-workspace-state")) return "state";
    }
    if (next === ".pnpm" && parts[i + 2] === "lock.yaml" && i + 3 === parts.length) return "state";
  }
  return "compared";
}

/**
 * Lists every entry under `entries` (paths relative to `root`), the entries
 * themselves included; a missing entry lists nothing. Caches are not
 * descended into. Directories are read one at a time, so the event loop is
 * never held for a whole tree. An entry that is itself a link to a folder
 * (a `node_modules` kept elsewhere) is listed as the folder it leads to: that
 * is what a copy of it holds.
 *
 * @param root The folder the paths are relative to.
 * @param entries The dependency entries, e.g. `["node_modules", ".pnp.cjs"]`.
 * @returns Path -> entry.
 */
export async function listTree(
  root: string,
  entries: readonly string[],
): Promise<Map<string, TreeEntry>> {
  const listing = new Map<string, TreeEntry>();
  let pending = [...entries];
  let top = true;
  while (pending.length > 0) {
    const folders: string[] = [];
    for (const rel of pending) {
      const entry = statEntry(path.join(root, rel), top);
      if (!entry) continue;
      listing.set(rel, entry);
      if (entry.kind === "dir" && entryRole(rel) !== "cache") folders.push(rel);
    }
    // One level at a time, its folders read side by side.
    const next: string[][] = [];
    for (let i = 0; i < folders.length; i += READ_AT_ONCE) {
      next.push(
        ...await Promise.all(
          folders.slice(i, i + READ_AT_ONCE).map(async (rel) => {
            const children: string[] = [];
            try {
              for await (const child of Deno.readDir(path.join(root, rel))) {
                children.push(`${rel}/${child.name}`);
              }
            } catch {
              // A folder that went while it was listed: its entries are missing.
            }
            return children;
          }),
        ),
      );
    }
    pending = next.flat();
    top = false;
  }
  return listing;
}

/**
 * The entry at `file`, not following links unless `follow` is set and it
 * leads to a folder.
 *
 * @param file The path.
 * @param follow Whether a link to a folder is listed as that folder.
 * @returns The entry, or undefined when it is missing.
 */
export function statEntry(file: string, follow = false): TreeEntry | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(file);
    if (follow && info.isSymlink) {
      const target = Deno.statSync(file);
      if (target.isDirectory) info = target;
    }
  } catch {
    return undefined;
  }
  const kind = info.isFile ? "file" : info.isDirectory ? "dir" : info.isSymlink ? "link" : "other";
  let target: string | undefined;
  if (kind === "link") {
    try {
      target = Deno.readLinkSync(file);
    } catch {
      target = "?";
    }
  }
  return {
    kind,
    size: kind === "dir" ? 0 : info.size,
    mode: (info.mode ?? 0) & 0o7777,
    ...(target !== undefined ? { target } : {}),
    ino: info.ino ?? 0,
    mtime: info.mtime?.getTime() ?? 0,
    ctime: info.ctime?.getTime() ?? 0,
  };
}

/**
 * Waits, when an entry of `listing` changed in the current second, until
 * that second is over: change times are read to the second here, so a write
 * later in the same second could leave a file's listing as it was. After
 * the wait, any write moves its change time past every listed one.
 *
 * @param listing The entries just listed.
 * @returns Resolves once the second of the latest change is over.
 */
export async function pastSecond(listing: Iterable<TreeEntry>): Promise<void> {
  let latest = 0;
  for (const entry of listing) {
    if (entry.kind !== "dir" && entry.ctime > latest) latest = entry.ctime;
  }
  const wait = Math.floor(latest / 1000) * 1000 + 1000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 5));
}

/** Whether two entries hold the same thing without reading content: type, size, mode, target. */
export function sameShape(a: TreeEntry, b: TreeEntry): boolean {
  return a.kind === b.kind && a.size === b.size && a.mode === b.mode && a.target === b.target;
}

/** Whether an entry did not move: same shape, inode and times (a folder: same shape). */
export function unmoved(a: TreeEntry, b: TreeEntry): boolean {
  if (!sameShape(a, b)) return false;
  return a.kind === "dir" || (a.ino === b.ino && a.mtime === b.mtime && a.ctime === b.ctime);
}

/**
 * A file's content hash.
 *
 * @param file The file.
 * @returns Its SHA-256 in hex, or undefined when it cannot be read.
 */
export async function hashFile(file: string): Promise<string | undefined> {
  try {
    return createHash("sha256").update(await Deno.readFile(file)).digest("hex");
  } catch {
    return undefined;
  }
}

/** Folders read at once while listing. */
const READ_AT_ONCE = 16;

/** Files hashed at once. */
const BATCH = 32;

/**
 * The dependency folders of a checkout as the run found them: every
 * entry's listing, each file's content hash (taken in the background right
 * after the listing; a file that moved before it was read gets none, and
 * then counts as changed), and the bytes of the package managers' records.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DependencySnapshot } from "./dependency_tree.ts";
 *
 * const root = await Deno.makeTempDir();
 * try {
 *   await Deno.mkdir(`${root}/node_modules/pkg/lib`, { recursive: true });
 *   await Deno.writeTextFile(`${root}/node_modules/pkg/lib/x.js`, "module.exports = 1;\n");
 *   const start = await DependencySnapshot.take(root, ["node_modules"]);
 *   await Deno.writeTextFile(`${root}/node_modules/pkg/lib/x.js`, "module.exports = 2;\n");
 *   assert.deepEqual(await start.changes(root), ["node_modules/pkg/lib/x.js (changed)"]);
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export class DependencySnapshot {
  /** The checkout. */
  readonly root: string;
  /** The dependency entries (paths relative to the root). */
  readonly entries: readonly string[];
  /** Every entry under them. */
  readonly listing: ReadonlyMap<string, TreeEntry>;
  /** How long the listing took, in milliseconds. */
  readonly listMs: number;
  readonly #state: Map<string, Uint8Array>;
  readonly #hashes = new Map<string, string>();
  readonly #hashed: Promise<number>;
  #stopped = false;

  private constructor(
    root: string,
    entries: readonly string[],
    listing: Map<string, TreeEntry>,
    state: Map<string, Uint8Array>,
    listMs: number,
  ) {
    this.root = root;
    this.entries = entries;
    this.listing = listing;
    this.#state = state;
    this.listMs = listMs;
    this.#hashed = this.#hashAll();
  }

  /**
   * List the dependency entries of `root` now; their files are hashed in
   * the background ({@linkcode DependencySnapshot.hashed}).
   *
   * @param root The checkout.
   * @param entries The dependency entries, relative to it.
   * @returns The snapshot.
   */
  static async take(root: string, entries: readonly string[]): Promise<DependencySnapshot> {
    const started = performance.now();
    const listing = await listTree(root, entries);
    await pastSecond(listing.values());
    const state = new Map<string, Uint8Array>();
    for (const [rel, entry] of listing) {
      if (entry.kind !== "file" || entryRole(rel) !== "state") continue;
      const bytes = await Deno.readFile(path.join(root, rel)).catch(() => undefined);
      if (bytes) state.set(rel, bytes);
    }
    return new DependencySnapshot(
      root,
      entries,
      listing,
      state,
      Math.round(performance.now() - started),
    );
  }

  /**
   * Resolves once every file is hashed.
   *
   * @returns How long hashing took, in milliseconds.
   */
  hashed(): Promise<number> {
    return this.#hashed;
  }

  /**
   * Stop hashing (at the end of a run): files not hashed yet have no hash,
   * and count as changed from then on.
   *
   * @returns Resolves once no file is being read.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#hashed;
  }

  /**
   * A file's hash at the start.
   *
   * @param rel Its path.
   * @returns The hash, or undefined when it was not a file then or moved before it was read.
   */
  async hashAt(rel: string): Promise<string | undefined> {
    await this.#hashed;
    return this.#hashes.get(rel);
  }

  /**
   * The bytes of a package manager's record at the start.
   *
   * @param rel Its path.
   * @returns The bytes, or undefined when there was none.
   */
  stateAt(rel: string): Uint8Array | undefined {
    return this.#state.get(rel);
  }

  /** Every record of an install the snapshot holds. */
  get stateFiles(): string[] {
    return [...this.#state.keys()];
  }

  /**
   * Whether `file` (under some root) holds what `rel` held at the start:
   * its shape, and for a file its content hash.
   *
   * @param rel The path at the start.
   * @param file The file to look at.
   * @returns True when it does.
   */
  async holdsStart(rel: string, file: string): Promise<boolean> {
    const before = this.listing.get(rel);
    const now = statEntry(file);
    if (!before || !now || !sameShape(before, now)) return false;
    if (before.kind !== "file") return true;
    const start = await this.hashAt(rel);
    return start !== undefined && start === await hashFile(file);
  }

  /**
   * What differs under the entries of `root` from the start, caches and
   * install records left out: the listing first, then the hash of each file
   * whose inode or times moved.
   *
   * @param root The folder to compare (the checkout, or a copy of it).
   * @param within Only paths under these entries. @default every entry
   * @returns Lines such as `node_modules/pkg/lib/x.js (changed)`, sorted.
   */
  async changes(root: string, within: readonly string[] = this.entries): Promise<string[]> {
    const now = await listTree(root, within);
    const inside = (rel: string) =>
      within.some((entry) => rel === entry || rel.startsWith(`${entry}/`));
    const changes: string[] = [];
    for (const [rel, entry] of now) {
      if (entryRole(rel) !== "compared") continue;
      const before = this.listing.get(rel);
      if (!before) changes.push(`${rel} (added)`);
      else if (!unmoved(before, entry) && !await this.holdsStart(rel, path.join(root, rel))) {
        changes.push(`${rel} (changed)`);
      }
    }
    for (const rel of this.listing.keys()) {
      if (entryRole(rel) === "compared" && inside(rel) && !now.has(rel)) {
        changes.push(`${rel} (removed)`);
      }
    }
    return changes.sort();
  }

  async #hashAll(): Promise<number> {
    const started = performance.now();
    const files = [...this.listing].filter(([rel, entry]) =>
      entry.kind === "file" && entryRole(rel) === "compared"
    );
    for (let i = 0; i < files.length && !this.#stopped; i += BATCH) {
      await Promise.all(
        files.slice(i, i + BATCH).map(async ([rel, entry]) => {
          const file = path.join(this.root, rel);
          const hash = await hashFile(file);
          // Read as it was listed: it has not moved since the start.
          const after = statEntry(file);
          if (hash !== undefined && after && unmoved(entry, after)) this.#hashes.set(rel, hash);
        }),
      );
    }
    return Math.round(performance.now() - started);
  }
}
