/**
 * Reading files that may live on disk or, when finishline runs from JSR, at
 * an https URL next to the module.
 *
 * @module
 */

/**
 * Read a text resource from a `file:` URL or, for other schemes, with fetch.
 *
 * @param url Where the resource is.
 * @returns The text, or `undefined` when it does not exist.
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
 * ```
 */
export async function readTextResource(url: URL): Promise<string | undefined> {
  if (url.protocol === "file:") {
    try {
      return await Deno.readTextFile(url);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
        return undefined;
      }
      throw error;
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
  return await response.text();
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
