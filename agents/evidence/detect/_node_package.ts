/**
 * package.json read, once per detection, and the packages of npm, yarn, bun
 * and pnpm workspaces found from their globs: what the package.json rules
 * and CI's package manager commands both read.
 *
 * @module
 */

import { basename, join } from "node:path";
import {
  isObject,
  oncePerScan,
  parseObject,
  read,
  readPath,
  type Scan,
  skip,
  within,
} from "./_detect_scan.ts";

/** One package.json. */
export interface PackageJson {
  /** Its folder, repository-relative ("." for the root). */
  dir: string;
  /** The file, repository-relative. */
  path: string;
  /** Its `name`, when it has one. */
  name?: string;
  /** Its `scripts`, when that is an object. */
  scripts: Record<string, unknown>;
  /** Names of its dependencies of every kind (for `npx tool`). */
  dependencies: Set<string>;
  /** Its `packageManager` field. */
  packageManager?: unknown;
  /** Its `workspaces` field. */
  workspaces?: unknown;
}

/** The workspaces of the repository. */
export interface Workspaces {
  /** Where they are declared, e.g. `package.json workspaces` or `pnpm-workspace.yaml packages`. */
  source: string;
  /** The file that declares them. */
  file: string;
  /** The globs, as written. */
  patterns: string[];
  /** The packages found, sorted by folder. */
  packages: PackageJson[];
}

async function loadPackageUncached(scan: Scan, dir: string): Promise<PackageJson | undefined> {
  const path = within(dir, "package.json");
  const text = dir === "." ? await read(scan, path) : await readPath(scan, path);
  if (text === undefined) return undefined;
  const parsed = parseObject(text, false);
  if ("error" in parsed) {
    skip(scan, path, parsed.error);
    return undefined;
  }
  const value = parsed.value;
  if (value.scripts !== undefined && !isObject(value.scripts)) {
    skip(scan, path, '"scripts" is not an object');
    return undefined;
  }
  const dependencies = new Set<string>();
  for (
    const field of ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"]
  ) {
    const entries = value[field];
    if (isObject(entries)) { for (const name of Object.keys(entries)) dependencies.add(name); }
  }
  return {
    dir,
    path,
    ...(typeof value.name === "string" ? { name: value.name } : {}),
    scripts: isObject(value.scripts) ? value.scripts : {},
    dependencies,
    packageManager: value.packageManager,
    workspaces: value.workspaces,
  };
}

/**
 * The package.json of a folder, read once per detection; undefined when it
 * is absent or malformed (the latter recorded in skipped).
 */
export const loadPackage: (scan: Scan, dir: string) => Promise<PackageJson | undefined> =
  oncePerScan(loadPackageUncached);

function segmentPattern(segment: string): RegExp {
  const body = segment.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(
    /\?/g,
    "[^/]",
  );
  return new RegExp(`^${body}$`);
}

async function subfolders(scan: Scan, dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(scan.root, dir))) {
      if (entry.isDirectory && !entry.name.startsWith(".") && entry.name !== "node_modules") {
        names.push(within(dir, entry.name));
      }
    }
  } catch {
    // A folder that cannot be listed holds no packages.
  }
  return names.sort();
}

/** Folders matching a workspace glob (`packages/*`, `apps/**`, `docs`). */
async function matchFolders(scan: Scan, segments: string[], dir: string): Promise<string[]> {
  if (segments.length === 0) return [dir];
  const [head, ...rest] = segments;
  if (head === "**") {
    // Zero or more folders; deep trees are not workspaces, so the depth is bounded.
    const found = await matchFolders(scan, rest, dir);
    if (dir.split("/").length < 6) {
      for (const child of await subfolders(scan, dir)) {
        found.push(...await matchFolders(scan, segments, child));
      }
    }
    return found;
  }
  if (head === "." || head === "") return await matchFolders(scan, rest, dir);
  if (!/[*?]/.test(head)) return await matchFolders(scan, rest, within(dir, head));
  const pattern = segmentPattern(head);
  const found: string[] = [];
  for (const child of await subfolders(scan, dir)) {
    if (pattern.test(basename(child))) found.push(...await matchFolders(scan, rest, child));
  }
  return found;
}

async function expandWorkspaces(scan: Scan, patterns: string[]): Promise<string[]> {
  const included = new Set<string>();
  const excluded: RegExp[] = [];
  for (const raw of patterns) {
    const pattern = raw.replace(/^!/, "").replace(/^\.\//, "").replace(/\/+$/, "");
    if (pattern.includes("..") || pattern.startsWith("/")) continue;
    if (raw.startsWith("!")) {
      excluded.push(
        new RegExp(
          `^${
            pattern.split("/").map((segment) =>
              segment === "**" ? ".*" : segmentPattern(segment).source.slice(1, -1)
            ).join("/")
          }$`,
        ),
      );
      continue;
    }
    for (const dir of await matchFolders(scan, pattern.split("/"), ".")) included.add(dir);
  }
  return [...included].filter((dir) => dir !== "." && !excluded.some((re) => re.test(dir)))
    .sort();
}

const workspaceCache = new WeakMap<Scan, Promise<Workspaces | undefined>>();

async function findWorkspaces(scan: Scan, root: PackageJson): Promise<Workspaces | undefined> {
  let declared: { source: string; file: string; patterns: unknown } | undefined;
  if (scan.files.has("pnpm-workspace.yaml")) {
    const text = await read(scan, "pnpm-workspace.yaml");
    if (text !== undefined) {
      try {
        const { parse: parseYaml } = await import("yaml");
        const data: unknown = parseYaml(text);
        declared = {
          source: "pnpm-workspace.yaml packages",
          file: "pnpm-workspace.yaml",
          patterns: isObject(data) ? data.packages : undefined,
        };
      } catch (error) {
        skip(scan, "pnpm-workspace.yaml", `invalid YAML: ${String(error).split("\n")[0]}`);
      }
    }
  }
  if (declared === undefined && root.workspaces !== undefined) {
    // yarn 1 also accepts `{ "packages": [...], "nohoist": [...] }`.
    const patterns = isObject(root.workspaces) ? root.workspaces.packages : root.workspaces;
    declared = { source: "package.json workspaces", file: "package.json", patterns };
  }
  if (declared === undefined) return undefined;
  if (
    !Array.isArray(declared.patterns) ||
    !declared.patterns.every((pattern) => typeof pattern === "string")
  ) {
    skip(scan, declared.source, "not a list of globs");
    return undefined;
  }
  const patterns = declared.patterns as string[];
  const packages: PackageJson[] = [];
  for (const dir of await expandWorkspaces(scan, patterns)) {
    const pkg = await loadPackage(scan, dir);
    if (pkg !== undefined) packages.push(pkg);
  }
  return { source: declared.source, file: declared.file, patterns, packages };
}

/** The repository's workspaces, found once per detection; undefined when there are none. */
export async function workspacesOf(scan: Scan): Promise<Workspaces | undefined> {
  let found = workspaceCache.get(scan);
  if (found === undefined) {
    found = loadPackage(scan, ".").then((root) =>
      root === undefined ? undefined : findWorkspaces(scan, root)
    );
    workspaceCache.set(scan, found);
  }
  return await found;
}

/** The workspace package a selector names: its name, or its folder (`./packages/a`, `packages/*` not). */
export async function workspacePackage(
  scan: Scan,
  selector: string,
): Promise<PackageJson | undefined> {
  const packages = (await workspacesOf(scan))?.packages ?? [];
  const folder = selector.replace(/^\.\//, "").replace(/\/+$/, "");
  return packages.find((pkg) => pkg.name === selector || pkg.dir === folder);
}
