/**
 * Whether a Deno project's `jsr:` imports can be had here: from Deno's
 * cache, or from JSR. With neither, its tests and type checks cannot run,
 * and a red run would read as a failure the agent must fix; detection
 * lists them as "could not run: dependencies unreachable" instead.
 *
 * @module
 */

import { join } from "node:path";
import { isObject, parseObject, probeOnce, type Scan } from "./_detect_scan.ts";

/** Folders never searched for imports. */
const NOT_SOURCE = new Set([".git", "node_modules", "vendor", "dist", "build", "coverage"]);

/** A `jsr:` specifier in an import: `"jsr:@std/assert@^1"`, `'jsr:@std/path/join'`. */
const JSR = /["'](jsr:@[\w.-]+\/[\w.-]+(?:@[^"'/\s]*)?)/;

/** The first jsr: specifier the project imports: deno.json's import map, then its source files. */
export async function firstJsrImport(
  scan: Scan,
  config: string | undefined,
): Promise<string | undefined> {
  if (config !== undefined) {
    const parsed = parseObject(config, true);
    if ("value" in parsed && isObject(parsed.value.imports)) {
      for (const value of Object.values(parsed.value.imports)) {
        if (typeof value === "string" && value.startsWith("jsr:")) return value;
      }
    }
  }
  let left = 200;
  const walk = async (dir: string, depth: number): Promise<string | undefined> => {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const entry of Deno.readDir(join(scan.root, dir))) entries.push(entry);
    } catch {
      return undefined;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (left <= 0) return undefined;
      const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
      if (entry.isFile && /\.(?:[mc]?[jt]sx?)$/.test(entry.name)) {
        left--;
        const text = await Deno.readTextFile(join(scan.root, path)).catch(() => "");
        const found = JSR.exec(text)?.[1];
        if (found !== undefined) return found;
      } else if (entry.isDirectory && depth < 3 && !NOT_SOURCE.has(entry.name)) {
        const found = await walk(path, depth + 1);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  return await walk(".", 0);
}

/** Deno's words for a module it could not fetch. */
const UNREACHABLE =
  /failed to load|Import '[^']*' failed|error sending request|dns error|Connection refused|client error/i;

/**
 * Why the project's jsr: imports cannot be had here, or undefined when they
 * can (or it imports none). Asks `deno info <specifier>`, which reads Deno's
 * cache first and JSR only when the cache lacks it.
 *
 * @param scan The detection.
 * @param config The text of deno.json, when there is one.
 * @returns "could not run: dependencies unreachable (...)", or undefined.
 */
export async function jsrUnreachable(
  scan: Scan,
  config: string | undefined,
): Promise<string | undefined> {
  const specifier = await firstJsrImport(scan, config);
  if (specifier === undefined) return undefined;
  const answer = await probeOnce(scan, "deno", ["info", specifier]);
  const output = `${answer.stdout}\n${answer.stderr}`;
  if (answer.code === 0 || !UNREACHABLE.test(output)) return undefined;
  return `could not run: dependencies unreachable (it imports ${specifier}, which is neither in Deno's cache nor reachable from here)`;
}
