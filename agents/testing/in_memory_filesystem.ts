/**
 * A {@linkcode Filesystem} held in memory, for testing checkers without a
 * repository on disk (the task completion checkers design's
 * `InMemoryFilesystem`).
 *
 * @module
 */

import { matchesGlob, posix } from "node:path";
import { type Filesystem, globBase, OutsideRepositoryError } from "../checks/filesystem.ts";

export type { Filesystem };

/**
 * Files in memory behind the checker's filesystem port; paths are relative
 * to the root `/memory`, and leaving it is refused as on disk.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { InMemoryFilesystem } from "@finishline/agents/testing";
 *
 * const fs = new InMemoryFilesystem({ "src/main.ts": "console.log(1);\n" });
 * fs.write("README.md", "# demo\n");
 * assert.equal(fs.exists("src/main.ts"), true);
 * assert.equal(fs.exists("src"), true);
 * assert.equal(fs.exists("output.txt"), false);
 * assert.deepEqual(fs.list(), ["README.md", "src/"]);
 * assert.deepEqual(fs.glob("**\/*.ts"), ["src/main.ts"]);
 * assert.throws(() => fs.read("../secret"), /outside the repository/);
 * ```
 */
export class InMemoryFilesystem implements Filesystem {
  /** Always "/memory". */
  readonly root = "/memory";
  readonly #files = new Map<string, string>();

  /**
   * Start with some files.
   *
   * @param files Text by path, relative to the root.
   */
  constructor(files: Record<string, string> = {}) {
    for (const [path, text] of Object.entries(files)) this.write(path, text);
  }

  /**
   * Add or replace a file (tests only: checkers get no write access).
   *
   * @param path The file, relative to the root.
   * @param text Its text.
   */
  write(path: string, text: string): void {
    this.#files.set(this.#normal(path), text);
  }

  /**
   * Read a file.
   *
   * @param path The file.
   * @returns Its text.
   */
  read(path: string): string {
    const text = this.#files.get(this.#normal(path));
    if (text === undefined) {
      throw new Error(`Cannot read "${path}": no such file in the repository`);
    }
    return text;
  }

  /**
   * Whether a file or folder exists.
   *
   * @param path The path.
   * @returns True when it does.
   */
  exists(path: string): boolean {
    const normal = this.#normal(path);
    if (normal === "." || this.#files.has(normal)) return true;
    return [...this.#files.keys()].some((file) => file.startsWith(`${normal}/`));
  }

  /**
   * The entries of a folder, sorted; folders end with `/`.
   *
   * @param path The folder. @default "."
   * @returns The entry names.
   */
  list(path = "."): string[] {
    const normal = this.#normal(path);
    const prefix = normal === "." ? "" : `${normal}/`;
    const entries = new Set<string>();
    for (const file of this.#files.keys()) {
      if (!file.startsWith(prefix)) continue;
      const [first, ...rest] = file.slice(prefix.length).split("/");
      entries.add(rest.length > 0 ? `${first}/` : first);
    }
    if (entries.size === 0 && !this.exists(path)) {
      throw new Error(`Cannot list "${path}": no such file in the repository`);
    }
    return [...entries].sort();
  }

  /**
   * The files matching a glob, sorted.
   *
   * @param pattern The glob.
   * @returns The matching files.
   */
  glob(pattern: string): string[] {
    globBase(pattern);
    return [...this.#files.keys()].filter((file) => matchesGlob(file, pattern)).sort();
  }

  #normal(path: string): string {
    if (typeof path !== "string" || path === "") {
      throw new TypeError(
        `Expected a path relative to the repository, got ${JSON.stringify(path)}`,
      );
    }
    const normal = posix.normalize(
      path.startsWith(`${this.root}/`) ? path.slice(this.root.length + 1) : path,
    )
      .replace(/\/$/, "");
    if (normal === ".." || normal.startsWith("../") || posix.isAbsolute(normal)) {
      throw new OutsideRepositoryError(
        `Refusing "${path}": it is outside the repository "${this.root}"`,
      );
    }
    return normal;
  }
}
