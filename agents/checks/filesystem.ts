/**
 * The filesystem port a checker gets (`context.filesystem`, the task
 * completion checkers design's `Filesystem`): read, exists, list and glob,
 * read-only and confined to the repository. A path that leaves the
 * repository, through `..` or through a symlink, is refused with an
 * {@linkcode OutsideRepositoryError}.
 *
 * The port is synchronous on purpose: the design's checkers call
 * `filesystem.exists(path)` inside a plain filter, and a promise there would
 * always be truthy, so the check would always pass.
 *
 * @module
 */

import {
  basename,
  dirname,
  isAbsolute,
  join,
  matchesGlob,
  posix,
  relative,
  resolve,
} from "node:path";

/** Read-only access to the repository's files; paths are relative to its root. */
export interface Filesystem {
  /** The root every path is relative to (absolute). */
  readonly root: string;
  /**
   * Read a text file.
   *
   * @param path The file, relative to the root.
   * @returns Its text (UTF-8).
   * @throws {OutsideRepositoryError} For a path that leaves the root.
   * @throws {Error} When there is no such file.
   */
  read(path: string): string;
  /**
   * Whether a file or folder exists.
   *
   * @param path The path, relative to the root.
   * @returns True when it exists.
   * @throws {OutsideRepositoryError} For a path that leaves the root.
   */
  exists(path: string): boolean;
  /**
   * The entries of a folder, sorted; folders end with `/`.
   *
   * @param path The folder, relative to the root. @default "."
   * @returns The entry names.
   * @throws {OutsideRepositoryError} For a path that leaves the root.
   */
  list(path?: string): string[];
  /**
   * The files matching a glob (`*`, `**`, `?`, `[...]`, `{a,b}`), sorted,
   * relative to the root; `.git` is never searched.
   *
   * @param pattern The glob, relative to the root.
   * @returns The matching files.
   * @throws {OutsideRepositoryError} For a pattern that leaves the root.
   */
  glob(pattern: string): string[];
}

/**
 * A path a checker asked for is outside the repository.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OutsideRepositoryError } from "@finishline/agents";
 * import { RepoFilesystem } from "./filesystem.ts";
 *
 * const fs = new RepoFilesystem(Deno.cwd());
 * assert.throws(() => fs.read("../elsewhere.txt"), OutsideRepositoryError);
 * ```
 */
export class OutsideRepositoryError extends Error {
  /** Always "OutsideRepositoryError". */
  override readonly name = "OutsideRepositoryError";
}

/**
 * The repository on disk, through the {@linkcode Filesystem} port.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RepoFilesystem } from "./filesystem.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   await Deno.mkdir(`${dir}/src`);
 *   await Deno.writeTextFile(`${dir}/src/main.ts`, "console.log(1);\n");
 *   await Deno.writeTextFile(`${dir}/README.md`, "# demo\n");
 *   const fs = new RepoFilesystem(dir);
 *   assert.equal(fs.exists("src/main.ts"), true);
 *   assert.equal(fs.exists("CHANGELOG.md"), false);
 *   assert.equal(fs.read("README.md"), "# demo\n");
 *   assert.deepEqual(fs.list(), ["README.md", "src/"]);
 *   assert.deepEqual(fs.glob("**\/*.ts"), ["src/main.ts"]);
 *   assert.throws(() => fs.exists("../outside"), /outside the repository/);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class RepoFilesystem implements Filesystem {
  /** The repository root (absolute). */
  readonly root: string;
  #real: string | undefined;

  /**
   * Open the port on a folder.
   *
   * @param root The repository root.
   */
  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The root's real path, found at the first use (a root that does not exist fails then). */
  get #realRoot(): string {
    this.#real ??= Deno.realPathSync(this.root);
    return this.#real;
  }

  /**
   * Read a text file.
   *
   * @param path The file, relative to the root.
   * @returns Its text.
   */
  read(path: string): string {
    const file = this.#resolve(path);
    try {
      return Deno.readTextFileSync(file);
    } catch (error) {
      throw new Error(`Cannot read "${path}": ${reason(error)}`, { cause: error });
    }
  }

  /**
   * Whether a file or folder exists.
   *
   * @param path The path, relative to the root.
   * @returns True when it exists.
   */
  exists(path: string): boolean {
    const file = this.#resolve(path);
    try {
      Deno.statSync(file);
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return false;
      throw new Error(`Cannot look at "${path}": ${reason(error)}`, { cause: error });
    }
  }

  /**
   * The entries of a folder, sorted; folders end with `/`.
   *
   * @param path The folder, relative to the root.
   * @returns The entry names.
   */
  list(path = "."): string[] {
    const folder = this.#resolve(path);
    try {
      return [...Deno.readDirSync(folder)]
        .map((entry) => entry.isDirectory ? `${entry.name}/` : entry.name)
        .sort();
    } catch (error) {
      throw new Error(`Cannot list "${path}": ${reason(error)}`, { cause: error });
    }
  }

  /**
   * The files matching a glob, sorted, relative to the root.
   *
   * @param pattern The glob.
   * @returns The matching files.
   */
  glob(pattern: string): string[] {
    const { base, depth } = globBase(pattern);
    const start = this.#resolve(base);
    const found: string[] = [];
    const walk = (folder: string, prefix: string, level: number) => {
      let entries: Deno.DirEntry[];
      try {
        entries = [...Deno.readDirSync(folder)];
      } catch {
        return;
      }
      for (const entry of entries) {
        const path = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (entry.isDirectory) {
          if (entry.name !== ".git" && level < depth) {
            walk(join(folder, entry.name), path, level + 1);
          }
        } else if (matchesGlob(path, pattern) && this.#isFileInside(join(folder, entry.name))) {
          found.push(path);
        }
      }
    };
    walk(start, base === "." ? "" : base, 1);
    return found.sort();
  }

  /** Whether a file (a symlink, through its target) is a file inside the root. */
  #isFileInside(path: string): boolean {
    try {
      return inside(this.#realRoot, Deno.realPathSync(path)) && Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  }

  /** The absolute path of a root-relative one, refused when it leaves the root. */
  #resolve(path: string): string {
    if (typeof path !== "string" || path === "") {
      throw new TypeError(
        `Expected a path relative to the repository, got ${JSON.stringify(path) ?? String(path)}`,
      );
    }
    const absolute = resolve(this.root, path);
    if (!inside(this.root, absolute)) {
      throw new OutsideRepositoryError(
        `Refusing "${path}": it is outside the repository "${this.root}"`,
      );
    }
    const real = realPathOf(absolute);
    if (!inside(this.#realRoot, real)) {
      throw new OutsideRepositoryError(
        `Refusing "${path}": it resolves outside the repository (to "${real}")`,
      );
    }
    return absolute;
  }
}

/**
 * The folder a glob's walk starts from (its leading segments without glob
 * characters) and how deep it goes; a pattern that leaves the root is refused.
 *
 * @param pattern The glob.
 * @returns The start folder (`.` for the root) and the depth (Infinity with `**`).
 */
export function globBase(pattern: string): { base: string; depth: number } {
  if (typeof pattern !== "string" || pattern === "") {
    throw new TypeError(
      `Expected a glob relative to the repository, got ${JSON.stringify(pattern)}`,
    );
  }
  const segments = pattern.split("/");
  if (isAbsolute(pattern) || segments.includes("..")) {
    throw new OutsideRepositoryError(
      `Refusing glob "${pattern}": a pattern is relative to the repository and stays inside it`,
    );
  }
  const literal: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (/[*?[\]{}!]/.test(segment)) break;
    literal.push(segment);
  }
  const rest = segments.length - literal.length;
  return {
    base: literal.length > 0 ? posix.normalize(literal.join("/")) : ".",
    depth: segments.includes("**") ? Infinity : rest,
  };
}

/** Whether `path` is `root` or below it (both absolute and normalised). */
function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !isAbsolute(rel));
}

/** The real path of `path`, or of its deepest existing ancestor joined with the rest. */
function realPathOf(path: string): string {
  const rest: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(Deno.realPathSync(current), ...rest);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const parent = dirname(current);
      if (parent === current) return path;
      rest.unshift(basename(current));
      current = parent;
    }
  }
}

function reason(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file in the repository";
  if (error instanceof Deno.errors.IsADirectory) return "it is a folder";
  if (error instanceof Deno.errors.NotADirectory) return "it is not a folder";
  return error instanceof Error ? error.message.split("\n")[0] : String(error);
}
