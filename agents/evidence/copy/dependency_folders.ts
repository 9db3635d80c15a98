/**
 * The folders of installed dependencies (`node_modules`, `.venv`, `venv`,
 * `vendor`) that a fresh worktree lacks and the checks need. finishline links
 * the ones it found at the start into its clean copies; they are not the
 * agent's to change, so a cheap manifest of each (its executables, each
 * package's metadata and entry file, Python's start-up hooks) is taken at the
 * start and compared at every verification. A dependency change made on
 * purpose goes through the manifest and lock files, in a commit: then the
 * clean copy installs from them where that can be done offline.
 *
 * `target` (Cargo) and `build` folders are build output, not dependencies:
 * they are never linked, since a stale artifact there could stand in for the
 * code. The clean copy builds its own, starting from what the baseline built
 * of the starting commit, for Cargo (`build_seed.ts`).
 *
 * @module
 */

import { createHash } from "node:crypto";
import path from "node:path";
import type { GitRepo } from "../../git/repo.ts";

/** A folder of installed dependencies, and the files that say what goes in it. */
export interface DependencyFolder {
  /** Its path at the repository root. */
  dir: string;
  /** Pathspecs of the files whose change, in a commit, changes the dependencies on purpose. */
  manifests: string[];
  /** Whether finishline can install it in a clean copy (offline or from a cache). */
  installable: boolean;
}

/**
 * The dependency folders finishline links into its clean copies, when the
 * checkout has them and the commit does not track them.
 */
export const DEPENDENCY_FOLDERS: readonly DependencyFolder[] = [
  {
    dir: "node_modules",
    manifests: [
      "package.json",
      "package-lock.json",
      "npm-shrinkwrap.json",
      "pnpm-lock.yaml",
      "yarn.lock",
    ],
    installable: true,
  },
  ...[".venv", "venv"].map((dir) => ({
    dir,
    manifests: [
      ":(glob)requirements*.txt",
      "poetry.lock",
      "Pipfile.lock",
      "uv.lock",
    ],
    installable: false,
  })),
  // PHP's composer and Ruby's bundler install here; Go's vendor folder is usually tracked, and then not linked.
  {
    dir: "vendor",
    manifests: ["composer.lock", "Gemfile.lock", "go.sum", "go.mod"],
    installable: false,
  },
];

/** Entry -> signature, for every entry of every dependency folder that was manifested. */
export type DependencyManifest = Map<string, string>;

/**
 * The dependency folders of `root` that `commit` does not track, the ones
 * finishline links into a worktree.
 *
 * @param repo The repository.
 * @param commit The commit the worktree holds.
 * @returns The folders' names, in {@linkcode DEPENDENCY_FOLDERS} order.
 */
export async function linkableFolders(repo: GitRepo, commit: string): Promise<string[]> {
  const found: string[] = [];
  for (const folder of DEPENDENCY_FOLDERS) {
    if (!await isDirectory(path.join(repo.root, folder.dir))) continue;
    const tracked = await repo.exec(["ls-tree", "--name-only", commit, "--", folder.dir]);
    if (tracked.code === 0 && tracked.stdout.trim() !== "") continue;
    found.push(folder.dir);
  }
  return found;
}

/**
 * A cheap manifest of dependency folders: each executable (`.bin`, `bin`)
 * with its link target and content hash; per package its metadata and entry
 * file; Python's `site-packages` listing with its start-up hooks (`.pth`,
 * `sitecustomize.py`) hashed. Caches the checks write (`.cache`,
 * `__pycache__`) are left out. No full tree hash: a large `node_modules`
 * takes tens of milliseconds.
 *
 * @param root The folder that holds them (the checkout's root).
 * @param dirs The folders, e.g. `["node_modules"]`.
 * @returns Entry path (relative to `root`) -> signature.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dependencyChanges, dependencyManifest } from "./dependency_folders.ts";
 *
 * const root = await Deno.makeTempDir();
 * try {
 *   await Deno.mkdir(`${root}/node_modules/.bin`, { recursive: true });
 *   const before = await dependencyManifest(root, ["node_modules"]);
 *   await Deno.writeTextFile(`${root}/node_modules/.bin/node`, "#!/bin/sh\necho ok\n");
 *   const after = await dependencyManifest(root, ["node_modules"]);
 *   assert.deepEqual(dependencyChanges(before, after), ["node_modules/.bin/node (added)"]);
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export async function dependencyManifest(
  root: string,
  dirs: readonly string[],
): Promise<DependencyManifest> {
  const manifest: DependencyManifest = new Map();
  for (const dir of dirs) {
    const folder = path.join(root, dir);
    if (dir === "node_modules") await nodeModules(root, folder, manifest);
    else if (dir === ".venv" || dir === "venv") await virtualEnv(root, folder, manifest);
    else await topLevel(root, folder, manifest);
  }
  return manifest;
}

/**
 * What changed between two manifests, one line per entry.
 *
 * @param before The manifest at the start.
 * @param after The manifest now.
 * @returns Lines such as `node_modules/.bin/node (added)`, sorted.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { dependencyChanges } from "./dependency_folders.ts";
 *
 * const before = new Map([["node_modules/a", "1"], ["node_modules/b", "2"]]);
 * const after = new Map([["node_modules/a", "9"], ["node_modules/c", "3"]]);
 * assert.deepEqual(dependencyChanges(before, after), [
 *   "node_modules/a (changed)",
 *   "node_modules/b (removed)",
 *   "node_modules/c (added)",
 * ]);
 * ```
 */
export function dependencyChanges(
  before: DependencyManifest,
  after: DependencyManifest,
): string[] {
  const changes: string[] = [];
  for (const [entry, signature] of after) {
    const earlier = before.get(entry);
    if (earlier === undefined) changes.push(`${entry} (added)`);
    else if (earlier !== signature) changes.push(`${entry} (changed)`);
  }
  for (const entry of before.keys()) {
    if (!after.has(entry)) changes.push(`${entry} (removed)`);
  }
  return changes.sort();
}

/**
 * The dependency folders whose manifest or lock files changed between two
 * commits: the agent changed its dependencies on purpose. For `package.json`
 * only its dependency fields count.
 *
 * @param repo The repository.
 * @param base The starting commit.
 * @param head The commit to verify.
 * @returns Folder -> the changed files.
 */
export async function changedOnPurpose(
  repo: GitRepo,
  base: string,
  head: string,
): Promise<Map<string, string[]>> {
  const changed = new Map<string, string[]>();
  if (base === head) return changed;
  const pathspecs = [...new Set(DEPENDENCY_FOLDERS.flatMap((folder) => folder.manifests))];
  const diff = await repo.exec([
    "diff",
    "--name-only",
    "--no-renames",
    base,
    head,
    "--",
    ...pathspecs,
  ]);
  if (diff.code !== 0) return changed;
  let files = diff.stdout.split("\n").filter((line) => line !== "");
  if (files.includes("package.json") && !await dependenciesDiffer(repo, base, head)) {
    files = files.filter((file) => file !== "package.json");
  }
  for (const folder of DEPENDENCY_FOLDERS) {
    const own = files.filter((file) =>
      folder.manifests.some((spec) =>
        spec.startsWith(":(glob)") ? path.matchesGlob(file, spec.slice(7)) : file === spec
      )
    );
    if (own.length > 0) changed.set(folder.dir, own);
  }
  return changed;
}

/** How to install a Node project's dependencies from what its commit holds. */
export interface InstallCommand {
  /** The shell command. */
  command: string;
  /** Its executable, to tell a missing package manager from a failed install. */
  executable: string;
}

/**
 * The install command for the `node_modules` of a checkout, from its lock
 * file: `npm ci`, `pnpm install --frozen-lockfile`, `yarn install
 * --frozen-lockfile`, or `npm install` without a lock file.
 *
 * @param root The checkout.
 * @returns The command.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodeInstallCommand } from "./dependency_folders.ts";
 *
 * const root = await Deno.makeTempDir();
 * try {
 *   await Deno.writeTextFile(`${root}/package-lock.json`, "{}");
 *   assert.equal((await nodeInstallCommand(root)).command, "npm ci --no-audit --no-fund");
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export async function nodeInstallCommand(root: string): Promise<InstallCommand> {
  const has = async (file: string) => await isFile(path.join(root, file));
  if (await has("pnpm-lock.yaml")) {
    return { command: "pnpm install --frozen-lockfile", executable: "pnpm" };
  }
  if (await has("yarn.lock")) {
    return { command: "yarn install --frozen-lockfile", executable: "yarn" };
  }
  if (await has("package-lock.json") || await has("npm-shrinkwrap.json")) {
    return { command: "npm ci --no-audit --no-fund", executable: "npm" };
  }
  return { command: "npm install --no-package-lock --no-audit --no-fund", executable: "npm" };
}

const DEPENDENCY_FIELDS = [
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
  "bundleDependencies",
  "overrides",
  "resolutions",
];

/** Whether the dependency fields of package.json differ between two commits (unreadable counts as different). */
async function dependenciesDiffer(repo: GitRepo, base: string, head: string): Promise<boolean> {
  const read = async (commit: string) => {
    const shown = await repo.exec(["show", `${commit}:package.json`]);
    if (shown.code !== 0) return undefined;
    try {
      const json = JSON.parse(shown.stdout) as Record<string, unknown>;
      return JSON.stringify(DEPENDENCY_FIELDS.map((field) => json[field] ?? null));
    } catch {
      return undefined;
    }
  };
  const [before, after] = await Promise.all([read(base), read(head)]);
  return before === undefined || after === undefined || before !== after;
}

/** Top-level packages (and scoped ones) by metadata and entry file, `.bin` by target and content. */
async function nodeModules(root: string, folder: string, manifest: DependencyManifest) {
  const jobs: Promise<void>[] = [];
  for (const entry of await list(folder)) {
    const full = path.join(folder, entry.name);
    if (entry.name === ".bin") {
      jobs.push(executables(root, full, manifest));
    } else if (entry.name === ".package-lock.json") {
      jobs.push(fileEntry(root, full, manifest));
    } else if (entry.name.startsWith(".")) {
      // Caches the tools write while the checks run (.cache, .vite): not dependencies.
      continue;
    } else if (entry.name.startsWith("@") && entry.isDirectory) {
      for (const scoped of await list(full)) {
        jobs.push(nodePackage(root, folder, path.join(full, scoped.name), manifest));
      }
    } else {
      jobs.push(nodePackage(root, folder, full, manifest));
    }
  }
  await Promise.all(jobs);
}

async function nodePackage(
  root: string,
  folder: string,
  dir: string,
  manifest: DependencyManifest,
) {
  const key = path.relative(root, dir);
  const info = await Deno.lstat(dir).catch(() => undefined);
  if (!info) return;
  let link = "";
  if (info.isSymlink) {
    const target = await Deno.readLink(dir).catch(() => "");
    const resolved = path.resolve(path.dirname(dir), target);
    // A workspace package links to the repository's own (committed) source: not a dependency.
    // pnpm's links into node_modules/.pnpm are, and are followed.
    if (inside(resolved, root) && !inside(resolved, folder)) return;
    link = `link:${target} `;
  }
  if (!await isDirectory(dir)) {
    manifest.set(key, `${link}${await isFile(dir) ? await hashFile(dir) : "-"}`);
    return;
  }
  const metadata = await Deno.readTextFile(path.join(dir, "package.json")).catch(() => undefined);
  let main = "index.js";
  try {
    const field = metadata === undefined ? undefined : JSON.parse(metadata).main;
    if (typeof field === "string" && field !== "") main = field;
  } catch {
    // Unreadable metadata still has its hash below.
  }
  const entry = await entryFile(path.resolve(dir, main));
  manifest.set(
    key,
    `${link}${metadata === undefined ? "-" : hash(metadata)} ${
      entry ? await hashFile(entry) : "-"
    }`,
  );
}

function inside(file: string, folder: string): boolean {
  return file === folder || file.startsWith(`${folder}${path.sep}`);
}

/** The file Node loads for a package's `main`: as named, with `.js`, or its folder's index.js. */
async function entryFile(main: string): Promise<string | undefined> {
  for (const candidate of [main, `${main}.js`, path.join(main, "index.js")]) {
    if (await isFile(candidate)) return candidate;
  }
  return undefined;
}

/** `pyvenv.cfg`, `bin/`, and `site-packages`: what is installed, and the hooks Python runs at start-up. */
async function virtualEnv(root: string, folder: string, manifest: DependencyManifest) {
  await fileEntry(root, path.join(folder, "pyvenv.cfg"), manifest);
  await executables(root, path.join(folder, "bin"), manifest);
  for (const lib of ["lib", "lib64"]) {
    for (const python of await list(path.join(folder, lib))) {
      const site = path.join(folder, lib, python.name, "site-packages");
      for (const entry of await list(site)) {
        if (entry.name === "__pycache__") continue;
        const full = path.join(site, entry.name);
        const key = path.relative(root, full);
        if (entry.isDirectory) {
          // A package by its __init__.py; a dist-info by its RECORD (pip rewrites it on every install).
          const marker = entry.name.endsWith(".dist-info") ? "RECORD" : "__init__.py";
          const file = path.join(full, marker);
          manifest.set(key, await isFile(file) ? await hashFile(file) : "dir");
        } else {
          // .pth files and sitecustomize.py run at every start of Python: hashed.
          manifest.set(key, await hashFile(full));
        }
      }
    }
  }
}

/** Any other folder: its top-level entries, files hashed, and its `bin/` executables. */
async function topLevel(root: string, folder: string, manifest: DependencyManifest) {
  for (const entry of await list(folder)) {
    const full = path.join(folder, entry.name);
    if (entry.name === "bin" && entry.isDirectory) await executables(root, full, manifest);
    else if (entry.isFile) await fileEntry(root, full, manifest);
    else manifest.set(path.relative(root, full), entry.isSymlink ? "link" : "dir");
  }
}

/** Each entry of a `bin` folder: its link target, and the content it resolves to. */
async function executables(root: string, folder: string, manifest: DependencyManifest) {
  await Promise.all((await list(folder)).map(async (entry) => {
    if (entry.name === "__pycache__") return;
    const full = path.join(folder, entry.name);
    const target = entry.isSymlink ? await Deno.readLink(full).catch(() => "?") : undefined;
    const content = await isFile(full) ? await hashFile(full) : "-";
    manifest.set(path.relative(root, full), target ? `link:${target} ${content}` : content);
  }));
}

async function fileEntry(root: string, file: string, manifest: DependencyManifest) {
  if (await isFile(file)) manifest.set(path.relative(root, file), await hashFile(file));
}

async function list(folder: string): Promise<Deno.DirEntry[]> {
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) entries.push(entry);
  } catch {
    return [];
  }
  return entries;
}

function hash(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 16);
}

async function hashFile(file: string): Promise<string> {
  try {
    return hash(await Deno.readFile(file));
  } catch {
    return "unreadable";
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await Deno.stat(file)).isFile;
  } catch {
    return false;
  }
}

/**
 * Whether a path is a folder (following links).
 *
 * @param file The path.
 * @returns True for a folder.
 */
export async function isDirectory(file: string): Promise<boolean> {
  try {
    return (await Deno.stat(file)).isDirectory;
  } catch {
    return false;
  }
}
