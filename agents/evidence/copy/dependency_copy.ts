/**
 * A clean copy's own dependency folders: copied from the checkout (`cp -a`,
 * copy-on-write where the filesystem can clone, a real copy where it
 * cannot; never hard links, which a check writing in place would write
 * through into the checkout), checked against the run's start
 * ({@linkcode DependencySnapshot}), and put back as they were before every
 * later run of checks. What the checks write there (pnpm relinking `.bin`,
 * rewriting `.modules.yaml`, caches) stays in the copy and is undone; it is
 * never compared as the agent's change, and never reaches the checkout.
 *
 * A Python virtual environment names its own folder in absolute paths: its
 * scripts' `#!` lines, and the `.pth` files and finders of editable installs,
 * which point at the project's source. In the copy they name the copy, so
 * that its checks run the copy's interpreter and import the clean copy's
 * source, never the checkout's working tree.
 *
 * @module
 */

import path from "node:path";
import { runTool } from "../../support/process.ts";
import {
  type DependencySnapshot,
  entryRole,
  listTree,
  pastSecond,
  sameShape,
  statEntry,
  type TreeEntry,
  unmoved,
} from "./dependency_tree.ts";

/** More files than this to copy again: the whole entry is copied again, in one `cp`. */
const RECOPY_ONE_BY_ONE = 50;

/** The copy options `cp` takes here: GNU's clone-if-it-can, macOS's clone, or a plain copy. */
let copyFlags: Promise<string[]> | undefined;

async function cloneFlags(): Promise<string[]> {
  const probe = await Deno.makeTempDir({ prefix: "finishline-cp-" });
  try {
    await Deno.writeTextFile(`${probe}/a`, "");
    for (const flags of [["-a", "--reflink=auto"], ["-a", "-c"]]) {
      const out = await runTool("cp", [...flags, `${probe}/a`, `${probe}/b`], {
        cwd: probe,
        timeoutMs: 30_000,
      });
      await Deno.remove(`${probe}/b`).catch(() => {});
      if (out.code === 0) return flags;
    }
    return ["-a"];
  } finally {
    await Deno.remove(probe, { recursive: true }).catch(() => {});
  }
}

/**
 * Copies `from` to `to` (which must not exist) with every entry's type, mode
 * and times; with `follow`, `from` itself is followed when it is a link (a
 * `node_modules` kept elsewhere is copied, not linked to again).
 */
async function copyTree(from: string, to: string, follow = false): Promise<string | undefined> {
  copyFlags ??= cloneFlags();
  await Deno.mkdir(path.dirname(to), { recursive: true });
  const flags = [...await copyFlags, ...follow ? ["-H"] : []];
  const out = await runTool("cp", [...flags, from, to], {
    cwd: path.dirname(to),
    timeoutMs: 600_000,
  });
  return out.code === 0 ? undefined : out.stderr.trim() || `cp exited with code ${out.code}`;
}

/**
 * The dependency folders of one clean copy, made from the checkout as the
 * run found it.
 */
export class DependencyCopy {
  readonly #start: DependencySnapshot;
  readonly #dir: string;
  /** Every entry placed, as placed: what a reset goes back to. */
  readonly #placed = new Map<string, Map<string, TreeEntry>>();

  /**
   * @param start The checkout's dependency folders at the run's start.
   * @param dir The clean copy's folder.
   */
  constructor(start: DependencySnapshot, dir: string) {
    this.#start = start;
    this.#dir = dir;
  }

  /** The checkout's dependency entries at the start. */
  get entries(): readonly string[] {
    return this.#start.entries;
  }

  /** The entries placed in the copy. */
  get placed(): string[] {
    return [...this.#placed.keys()];
  }

  /**
   * Copy a dependency entry of the checkout into the clean copy, caches
   * left out and install records as they were at the start, and check it:
   * every file the checkout wrote since the start must still hold its start
   * content in the copy.
   *
   * @param entry The entry, e.g. `packages/a/node_modules`.
   * @returns Undefined once placed, or why it could not be.
   */
  async place(entry: string): Promise<string | undefined> {
    const target = path.join(this.#dir, entry);
    await Deno.remove(target, { recursive: true }).catch(() => {});
    this.#placed.delete(entry);
    if (!this.#start.listing.has(entry)) return undefined;
    const failed = await copyTree(path.join(this.#start.root, entry), target, true);
    if (failed) {
      await Deno.remove(target, { recursive: true }).catch(() => {});
      return `cannot copy ${entry}: ${failed}`;
    }
    const problem = await this.#settle([entry]);
    if (problem) {
      await Deno.remove(target, { recursive: true }).catch(() => {});
      return problem;
    }
    await this.#repoint([...(await listTree(this.#dir, [entry])).keys()]);
    const placed = await listTree(this.#dir, [entry]);
    await pastSecond(placed.values());
    this.#placed.set(entry, placed);
    return undefined;
  }

  /**
   * Remove a placed entry from the copy.
   *
   * @param entry The entry.
   * @returns Resolves once it is gone.
   */
  async remove(entry: string): Promise<void> {
    this.#placed.delete(entry);
    await Deno.remove(path.join(this.#dir, entry), { recursive: true }).catch(() => {});
  }

  /**
   * Put the placed entries back as they were placed: what checks wrote
   * there goes (caches, records, relinked `.bin` entries), and each file
   * they changed or removed is copied again from the checkout and checked
   * against the start. Costs one listing of the copy when nothing moved.
   *
   * @returns Undefined once reset, or why a file could not be put back.
   */
  async reset(): Promise<string | undefined> {
    for (const [entry, placed] of this.#placed) {
      const now = await listTree(this.#dir, [entry]);
      const moved: string[] = [];
      for (const [rel, was] of placed) {
        const is = now.get(rel);
        if (!is || !unmoved(was, is)) moved.push(rel);
      }
      const added = [...now.keys()].filter((rel) => !placed.has(rel));
      if (moved.length === 0 && added.length === 0) continue;
      // A folder gone or turned into something else: the whole entry again.
      if (moved.some((rel) => placed.get(rel)!.kind === "dir")) {
        const failed = await this.place(entry);
        if (failed) return failed;
        continue;
      }
      for (const rel of added) {
        await Deno.remove(path.join(this.#dir, rel), { recursive: true }).catch(() => {});
      }
      // Relinked with the same bytes (pnpm --force links every file anew): kept as it is.
      const same = new Set<string>();
      for (let i = 0; i < moved.length; i += 32) {
        await Promise.all(
          moved.slice(i, i + 32).map(async (rel) => {
            const was = placed.get(rel)!;
            const is = now.get(rel);
            if (!is || !sameShape(was, is) || namesItsFolder(rel) || this.#start.stateAt(rel)) {
              return;
            }
            if (
              is.kind === "link" || await this.#start.holdsStart(rel, path.join(this.#dir, rel))
            ) {
              same.add(rel);
            }
          }),
        );
      }
      const again: string[] = [];
      for (const rel of moved) {
        if (same.has(rel)) continue;
        const file = path.join(this.#dir, rel);
        await Deno.remove(file, { recursive: true }).catch(() => {});
        const state = this.#start.stateAt(rel);
        if (state) await writeLike(file, state, placed.get(rel)!);
        else again.push(rel);
      }
      if (again.length > RECOPY_ONE_BY_ONE) {
        const failed = await this.place(entry);
        if (failed) return failed;
        continue;
      }
      for (const rel of again) {
        const failed = await copyTree(path.join(this.#start.root, rel), path.join(this.#dir, rel));
        if (failed) return `cannot copy ${rel} again: ${failed}`;
      }
      const problem = await this.#settle(again);
      if (problem) return problem;
      await this.#repoint(again);
      const renewed: TreeEntry[] = [];
      for (const rel of moved) {
        const is = statEntry(path.join(this.#dir, rel));
        if (is) placed.set(rel, is);
        if (is) renewed.push(is);
      }
      await pastSecond(renewed);
    }
    return undefined;
  }

  /** Rewrites the checkout's root to the copy's in a virtual environment's paths ({@linkcode namesItsFolder}). */
  async #repoint(paths: readonly string[]): Promise<void> {
    const from = `${this.#start.root}/`;
    const to = `${this.#dir}/`;
    for (const rel of paths) {
      if (!namesItsFolder(rel)) continue;
      const file = path.join(this.#dir, rel);
      const entry = statEntry(file);
      if (entry?.kind !== "file" || entry.size > 1_000_000) continue;
      const text = await Deno.readTextFile(file).catch(() => undefined);
      if (text === undefined || !text.includes(from)) continue;
      await writeLike(file, new TextEncoder().encode(text.replaceAll(from, to)), entry);
    }
  }

  /**
   * Make what was just copied under `paths` hold the start: caches go,
   * install records are written from the start's bytes, and each file the
   * checkout moved since the start must hash as it did then.
   */
  async #settle(paths: readonly string[]): Promise<string | undefined> {
    if (paths.length === 0) return undefined;
    const copied = await listTree(this.#dir, paths);
    const checkout = await listTree(this.#start.root, paths);
    const wrong: string[] = [];
    for (const [rel, entry] of copied) {
      const file = path.join(this.#dir, rel);
      const role = entryRole(rel);
      if (role === "cache") {
        await Deno.remove(file, { recursive: true }).catch(() => {});
        continue;
      }
      const before = this.#start.listing.get(rel);
      if (role === "state") {
        await Deno.remove(file, { recursive: true }).catch(() => {});
        const bytes = this.#start.stateAt(rel);
        if (bytes && before) await writeLike(file, bytes, before);
        continue;
      }
      if (!before) {
        // Not there at the start: the checkout's since.
        await Deno.remove(file, { recursive: true }).catch(() => {});
        continue;
      }
      const live = checkout.get(rel);
      const untouched = live !== undefined && unmoved(before, live) && entry.kind === before.kind;
      if (!untouched && !await this.#start.holdsStart(rel, file)) wrong.push(rel);
    }
    for (const rel of this.#start.listing.keys()) {
      const under = paths.some((entry) => rel === entry || rel.startsWith(`${entry}/`));
      if (under && entryRole(rel) === "compared" && !copied.has(rel)) wrong.push(rel);
    }
    if (wrong.length === 0) return undefined;
    return `${wrong.slice(0, 5).join(", ")}${
      wrong.length > 5 ? ` and ${wrong.length - 5} more` : ""
    } changed in the checkout since the run started, and cannot be copied as they were`;
  }
}

/**
 * Whether a virtual environment's file names the environment's folder in
 * absolute paths: a script in its `bin` (the `#!` line, `activate`), a
 * `.pth` file or an editable install's finder in its `site-packages`.
 */
function namesItsFolder(rel: string): boolean {
  const parts = rel.split("/");
  const venv = parts.findIndex((part) => part === ".venv" || part === "venv");
  if (venv !== 0) return false;
  const rest = parts.slice(1);
  if (rest.length === 2 && (rest[0] === "bin" || rest[0] === "Scripts")) return true;
  const name = rest.at(-1) ?? "";
  return rest.length === 4 && rest[2] === "site-packages" &&
    (name.endsWith(".pth") || name.startsWith("__editable__"));
}

/** Writes `bytes` at `file` with the mode and modification time of `like`. */
async function writeLike(file: string, bytes: Uint8Array, like: TreeEntry): Promise<void> {
  await Deno.mkdir(path.dirname(file), { recursive: true }).catch(() => {});
  await Deno.writeFile(file, bytes, { mode: like.mode });
  await Deno.chmod(file, like.mode).catch(() => {});
  await Deno.utime(file, new Date(like.mtime), new Date(like.mtime)).catch(() => {});
}
