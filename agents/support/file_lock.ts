/**
 * A lock the operating system releases: an exclusive advisory lock
 * (`flock`) on a file, held for as long as a run goes on. When the holder
 * dies in any way — it ends, is SIGKILLed, OOM-killed, or lingers as a
 * zombie that nobody reaps — the kernel closes its files and the lock is
 * free, so a dead run never blocks, and no process id is ever guessed at.
 *
 * @module
 */

import { join } from "node:path";

/** What the holder of a lock wrote in its file, for messages only. */
export interface LockHolder {
  /** The holder's process id (for display; never used to decide). */
  pid: number;
  /** When it took the lock (ISO). */
  since: string;
  /** Whatever the holder chose to say (e.g. its run id). */
  note?: string;
}

/**
 * An exclusive lock on `<dir>/<key>.lock`: one holder at a time across
 * processes (and across `RunLock`s in one process).
 *
 * @example One holder at a time; released, the key is free again
 * ```ts
 * import assert from "node:assert/strict";
 * import { RunLock } from "./file_lock.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const lock = await RunLock.acquire(dir, "issue-7", { note: "run 1a2b3c4d" });
 * assert.equal(await RunLock.tryAcquire(dir, "issue-7"), undefined);
 * assert.equal((await RunLock.holder(dir, "issue-7"))?.note, "run 1a2b3c4d");
 * await lock.release();
 * const again = await RunLock.tryAcquire(dir, "issue-7");
 * assert.ok(again);
 * await again.release();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class RunLock {
  /** The lock file. */
  readonly path: string;
  #file: Deno.FsFile | undefined;

  /**
   * Wrap a file this process holds the exclusive lock on; use
   * {@linkcode RunLock.acquire} or {@linkcode RunLock.tryAcquire} to get one.
   *
   * @param path The lock file.
   * @param file The open, locked file.
   */
  constructor(path: string, file: Deno.FsFile) {
    this.path = path;
    this.#file = file;
  }

  /**
   * Take the lock, waiting while another process holds it.
   *
   * @param dir The folder of lock files (created if missing).
   * @param key The lock's name: letters, digits, `.`, `_` and `-`.
   * @param options `note`: a word for whoever finds the lock held.
   * @returns The held lock.
   * @throws {RangeError} When `key` is not a plain file name.
   */
  static async acquire(
    dir: string,
    key: string,
    options: { note?: string } = {},
  ): Promise<RunLock> {
    return (await RunLock.#take(dir, key, { ...options, wait: true }))!;
  }

  /**
   * Take the lock if nobody holds it, without waiting.
   *
   * @param dir The folder of lock files (created if missing).
   * @param key The lock's name: letters, digits, `.`, `_` and `-`.
   * @param options `note`: a word for whoever finds the lock held.
   * @returns The held lock, or undefined when a live process holds it.
   * @throws {RangeError} When `key` is not a plain file name.
   */
  static async tryAcquire(
    dir: string,
    key: string,
    options: { note?: string } = {},
  ): Promise<RunLock | undefined> {
    return await RunLock.#take(dir, key, { ...options, wait: false });
  }

  /**
   * What the holder of a lock wrote, if the file is there and readable.
   * Only for messages: the holder may have ended since.
   *
   * @param dir The folder of lock files.
   * @param key The lock's name.
   * @returns The holder's pid, time and note, or undefined.
   */
  static async holder(dir: string, key: string): Promise<LockHolder | undefined> {
    try {
      const data = JSON.parse(await Deno.readTextFile(lockPath(dir, key)));
      return typeof data?.pid === "number" ? data as LockHolder : undefined;
    } catch {
      return undefined;
    }
  }

  static async #take(
    dir: string,
    key: string,
    options: { note?: string; wait: boolean },
  ): Promise<RunLock | undefined> {
    const path = lockPath(dir, key);
    await Deno.mkdir(dir, { recursive: true });
    // A releaser removes the file while still holding it; a lock taken on a
    // removed file is worthless, so take it again on the file now at `path`.
    for (;;) {
      const file = await Deno.open(path, { read: true, write: true, create: true });
      let locked = false;
      try {
        if (options.wait) {
          await file.lock(true);
          locked = true;
        } else {
          locked = await file.tryLock(true);
        }
        if (locked && await sameFile(file, path)) {
          const holder: LockHolder = { pid: Deno.pid, since: new Date().toISOString() };
          if (options.note !== undefined) holder.note = options.note;
          await file.truncate(0);
          await file.write(new TextEncoder().encode(`${JSON.stringify(holder)}\n`));
          return new RunLock(path, file);
        }
      } catch (error) {
        // Held or not, a lock whose holder could not be written (a full disk) is no lock.
        if (locked) await Deno.remove(path).catch(() => {});
        file.close();
        throw error;
      }
      file.close();
      if (!locked) return undefined;
    }
  }

  /**
   * Whether this object still holds the lock.
   *
   * @returns False after {@linkcode RunLock.release}.
   */
  get held(): boolean {
    return this.#file !== undefined;
  }

  /**
   * Give the lock up and remove its file; a second call does nothing.
   *
   * @returns Resolves once the lock is free.
   */
  async release(): Promise<void> {
    const file = this.#file;
    if (file === undefined) return;
    this.#file = undefined;
    // Removed while held, so a process that opened the old file sees it is stale.
    await Deno.remove(this.path).catch(() => {});
    try {
      await file.unlock();
    } finally {
      file.close();
    }
  }

  /** Release the lock (for `await using`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}

function lockPath(dir: string, key: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(key) || key.startsWith(".")) {
    throw new RangeError(
      `Cannot use "${key}" as a lock name: use letters, digits, ".", "_" and "-"`,
    );
  }
  return join(dir, `${key}.lock`);
}

/** Whether the open file is still the one at `path` (not removed or replaced). */
async function sameFile(file: Deno.FsFile, path: string): Promise<boolean> {
  const [open, named] = await Promise.all([file.stat(), Deno.stat(path).catch(() => undefined)]);
  if (named === undefined) return false;
  // Without inode numbers (Windows) there is no way to tell: trust the open file.
  return open.ino === null || (open.ino === named.ino && open.dev === named.dev);
}
