/**
 * Go modules below the root that no go.work lists: a major version kept in
 * its own folder (`v4/go.mod`), a command or an example with a module of its
 * own. `go test ./...` at the root never reaches them, so a bug there would
 * pass every check. Each is tested where its requirements can be had here:
 * it needs none from outside the repository (or `replace`s them with folders
 * of it), or every one is in Go's module cache. A module that needs the
 * network is listed with why, not run as a red check the agent cannot fix.
 *
 * @module
 */

import { join } from "node:path";
import { readPath, type Scan } from "./_detect_scan.ts";

/** Folders `./...` skips (Go ignores names starting with `.` or `_`, and testdata), and dependency folders. */
function ignored(name: string): boolean {
  return /^[._]/.test(name) || ["testdata", "vendor", "node_modules"].includes(name);
}

/**
 * The folders below the root that hold a go.mod, repository-relative and
 * sorted, at most four levels down.
 *
 * @param scan The detection.
 * @returns The folders.
 */
export async function nestedModules(scan: Scan): Promise<string[]> {
  const found: string[] = [];
  let left = 2000;
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const entry of Deno.readDir(join(scan.root, dir))) entries.push(entry);
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory || ignored(entry.name) || --left < 0) continue;
      const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
      const info = await Deno.stat(join(scan.root, path, "go.mod")).catch(() => undefined);
      if (info?.isFile) found.push(path);
      if (depth < 4) await walk(path, depth + 1);
    }
  };
  await walk(".", 1);
  return found;
}

/** A requirement of a go.mod: the module path and its version. */
interface Requirement {
  path: string;
  version: string;
}

/** The `require` lines of a go.mod, one-line and block forms. */
export function requirements(text: string): Requirement[] {
  const body = text.replace(/\/\/.*$/gm, "");
  const found: Requirement[] = [];
  for (const match of body.matchAll(/^\s*require\s*(?:\(([^)]*)\)|(\S+\s+\S+))/gm)) {
    const lines = match[1] !== undefined ? match[1].split("\n") : [match[2]];
    for (const line of lines) {
      const [path, version] = line.trim().split(/\s+/);
      if (path && version) found.push({ path, version });
    }
  }
  return found;
}

/** The module paths a go.mod replaces with a folder (`replace x => ../`), not with another module. */
export function localReplacements(text: string): Set<string> {
  const body = text.replace(/\/\/.*$/gm, "");
  const local = new Set<string>();
  for (const match of body.matchAll(/^\s*replace\s*(?:\(([^)]*)\)|(.+))/gm)) {
    const lines = match[1] !== undefined ? match[1].split("\n") : [match[2]];
    for (const line of lines) {
      const [from, to] = line.split("=>").map((part) => part.trim());
      if (!from || !to) continue;
      if (/^\.{1,2}(?:\/|$)|^\//.test(to.split(/\s+/)[0])) local.add(from.split(/\s+/)[0]);
    }
  }
  return local;
}

/** A module path as Go's module cache spells it: each capital letter as `!` and the letter. */
function escaped(path: string): string {
  return path.replace(/[A-Z]/g, (letter) => `!${letter.toLowerCase()}`);
}

/** Go's module cache: `GOMODCACHE`, else the first `GOPATH` entry's `pkg/mod`, else `~/go/pkg/mod`. */
function moduleCache(): string | undefined {
  const set = Deno.env.get("GOMODCACHE");
  if (set) return set;
  const gopath = Deno.env.get("GOPATH")?.split(":")[0];
  if (gopath) return join(gopath, "pkg", "mod");
  const home = Deno.env.get("HOME");
  return home ? join(home, "go", "pkg", "mod") : undefined;
}

/**
 * Why a nested module cannot be tested here, or undefined when it can: its
 * requirements from outside the repository that Go's module cache lacks.
 *
 * @param scan The detection.
 * @param dir The module's folder.
 * @returns The reason, naming up to three of the missing modules.
 */
export async function unreachableRequirements(
  scan: Scan,
  dir: string,
): Promise<string | undefined> {
  const text = await readPath(scan, `${dir}/go.mod`);
  if (text === undefined) return `${dir}/go.mod cannot be read`;
  const local = localReplacements(text);
  const outside = requirements(text).filter((entry) => !local.has(entry.path));
  const cache = moduleCache();
  const missing: string[] = [];
  for (const entry of outside) {
    const zip = cache === undefined
      ? undefined
      : join(cache, "cache", "download", escaped(entry.path), "@v", `${entry.version}.zip`);
    const cached = zip !== undefined &&
      await Deno.stat(zip).then((info) => info.isFile, () => false);
    if (!cached) missing.push(`${entry.path} ${entry.version}`);
  }
  if (missing.length === 0) return undefined;
  const shown = missing.slice(0, 3).join(", ");
  const more = missing.length > 3 ? ` and ${missing.length - 3} more` : "";
  return `could not run: it requires modules that are not in Go's module cache (${shown}${more}), and ./... at the root does not reach it`;
}
