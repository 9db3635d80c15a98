/**
 * The held-out test's files in finishline's keeping: copied, with their
 * SHA-256, into a folder only finishline makes (outside every session's
 * sandbox) the moment the verifier stops. What runs at each claim is read
 * back from there and checked against the hashes first.
 *
 * @module
 */

import { join } from "node:path";

/** A held-out file as kept: its path in the repository and its SHA-256. */
export interface KeptFile {
  path: string;
  sha256: string;
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The kept copy of the held-out test's files.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HeldOutStore } from "./held_out_store.ts";
 *
 * const store = await HeldOutStore.save([{ path: "test/a.test.js", content: "ok" }]);
 * const files = await store.load();
 * assert.deepEqual(files, [{ path: "test/a.test.js", content: "ok" }]);
 * await store.remove();
 * ```
 */
export class HeldOutStore {
  readonly #dir: string;
  /** The files and their hashes, as saved. */
  readonly kept: readonly KeptFile[];

  private constructor(dir: string, kept: KeptFile[]) {
    this.#dir = dir;
    this.kept = kept;
  }

  /**
   * Copy the files into a new folder of finishline's, each under its hash.
   *
   * @param files The verifier's test files.
   * @returns The store.
   */
  static async save(
    files: ReadonlyArray<{ path: string; content: string }>,
  ): Promise<HeldOutStore> {
    const dir = await Deno.makeTempDir({ prefix: "finishline-held-out-" });
    await Deno.chmod(dir, 0o700);
    const kept: KeptFile[] = [];
    for (const file of files) {
      const hash = await sha256(file.content);
      await Deno.writeTextFile(join(dir, hash), file.content, { mode: 0o600 });
      kept.push({ path: file.path, sha256: hash });
    }
    return new HeldOutStore(dir, kept);
  }

  /**
   * The files as saved, each checked against its hash.
   *
   * @returns The files, or why they cannot be trusted (one missing or changed).
   */
  async load(): Promise<Array<{ path: string; content: string }> | string> {
    const files: Array<{ path: string; content: string }> = [];
    for (const file of this.kept) {
      let content: string;
      try {
        content = await Deno.readTextFile(join(this.#dir, file.sha256));
      } catch {
        return `its kept copy of ${file.path} is gone`;
      }
      if (await sha256(content) !== file.sha256) {
        return `its kept copy of ${file.path} changed since the verifier stopped`;
      }
      files.push({ path: file.path, content });
    }
    return files;
  }

  /**
   * Remove the folder.
   *
   * @returns Resolves once it is gone.
   */
  async remove(): Promise<void> {
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }
}
