/**
 * Reading files that may live on disk or, when finishline runs from JSR, at
 * an https URL next to the module.
 *
 * @module
 */

/** The most a text resource may hold: definitions, registries and templates are a few kilobytes. */
export const MAX_RESOURCE_BYTES = 1024 * 1024;

/**
 * Read a text resource from a `file:` URL or, for other schemes, with fetch.
 * Only a regular file is read (a FIFO, a device such as `/dev/zero` or a
 * folder is refused before it is opened, and checked again once open), and
 * at most `maxBytes` of it: the limit is enforced while reading, whatever the
 * file says its size is.
 *
 * @param url Where the resource is.
 * @param options The size limit.
 * @returns The text, or `undefined` when it does not exist.
 * @throws {Error} When it is no regular file, or larger than the limit.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readTextResource } from "./resource.ts";
 *
 * assert.equal(await readTextResource(new URL("file:///nonexistent/finishline")), undefined);
 * assert.match(
 *   await readTextResource(new URL("../../prompts/system.md", import.meta.url)) ?? "",
 *   /\S/,
 * );
 * await assert.rejects(readTextResource(new URL("file:///dev/zero")), /expected a regular file/);
 * ```
 */
export async function readTextResource(
  url: URL,
  options: { maxBytes?: number } = {},
): Promise<string | undefined> {
  const maxBytes = options.maxBytes ?? MAX_RESOURCE_BYTES;
  if (url.protocol === "file:") {
    let file: Deno.FsFile;
    try {
      // Opening a FIFO waits for a writer, for ever: look before opening.
      regularFile(await Deno.stat(url));
      file = await Deno.open(url, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
        return undefined;
      }
      throw error;
    }
    try {
      regularFile(await file.stat());
      return new TextDecoder().decode(await readAtMost(file.readable, maxBytes));
    } finally {
      try {
        file.close();
      } catch {
        // closed by the stream already
      }
    }
  }
  const response = await fetch(url);
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status} ${response.statusText}`.trimEnd());
  }
  return new TextDecoder().decode(await readAtMost(response.body, maxBytes));
}

/** What a file is, in words, for an error about it not being a regular file. */
function regularFile(info: Deno.FileInfo): void {
  if (info.isFile) return;
  const what = info.isDirectory
    ? "a folder"
    : info.isFifo
    ? "a FIFO"
    : info.isCharDevice
    ? "a character device"
    : info.isBlockDevice
    ? "a block device"
    : info.isSocket
    ? "a socket"
    : "no regular file";
  throw new Error(`expected a regular file, found ${what}`);
}

/** The bytes of a stream, refused once they pass `maxBytes`. */
async function readAtMost(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array> {
  if (!stream) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > maxBytes) {
        throw new Error(`the file is more than ${maxBytes} bytes, the limit`);
      }
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/**
 * A short name for a resource in messages: a path relative to `cwd` for files
 * below it, the absolute path for other files, the URL otherwise.
 *
 * @param url The resource.
 * @param cwd The working directory.
 * @returns The name to show.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { displayPathOf } from "./resource.ts";
 *
 * assert.equal(
 *   displayPathOf(new URL("file:///repo/.agent/x/agent.json"), "/repo"),
 *   ".agent/x/agent.json",
 * );
 * ```
 */
export function displayPathOf(url: URL, cwd: string): string {
  if (url.protocol !== "file:") return url.href;
  const path = decodeURIComponent(url.pathname);
  const base = cwd.endsWith("/") ? cwd : `${cwd}/`;
  return path.startsWith(base) ? path.slice(base.length) : path;
}

/**
 * Whether something is at a path.
 *
 * @param path A file or folder.
 * @returns True when `Deno.stat` finds it.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pathExists } from "./resource.ts";
 *
 * assert.equal(await pathExists("."), true);
 * assert.equal(await pathExists("./no-such-file-here"), false);
 * ```
 */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
