/**
 * The folders of installed dependencies (`node_modules` at the root and in
 * each workspace package, `.venv`, `venv`, `vendor`, and yarn's plug'n'play
 * files) that a fresh worktree lacks and the checks need. finishline copies
 * the ones it found at the start into each clean copy
 * (`dependency_copy.ts`); they are not the agent's to change, so every file
 * of them is compared with the start (`dependency_tree.ts`). A dependency
 * change made on purpose goes through the manifest and lock files, in a
 * commit: then the clean copy installs from them where that can be done
 * offline.
 *
 * `target` (Cargo) and `build` folders are build output, not dependencies:
 * they are never copied, since a stale artifact there could stand in for the
 * code. The clean copy builds its own, starting from what the baseline built
 * of the starting commit, for Cargo (`build_seed.ts`).
 *
 * @module
 */

import path from "node:path";
import type { GitRepo } from "../../git/repo.ts";

/** A folder of installed dependencies, and the files that say what goes in it. */
export interface DependencyFolder {
  /** Its name: its path at the repository root, or the name of its kind (`.yarn`). */
  dir: string;
  /** The paths at the root it covers, when they are not `dir` alone. */
  paths?: string[];
  /** Pathspecs of the files whose change, in a commit, changes the dependencies on purpose. */
  manifests: string[];
  /** Whether finishline can install it in a clean copy (offline or from a cache). */
  installable: boolean;
}

/**
 * The dependency folders finishline copies into its clean copies, when the
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
  // PHP's composer and Ruby's bundler install here; Go's vendor folder is usually tracked, and then not copied.
  {
    dir: "vendor",
    manifests: ["composer.lock", "Gemfile.lock", "go.sum", "go.mod"],
    installable: false,
  },
  // Yarn's plug'n'play: the package zips, the unpacked ones, and the loader that maps them.
  {
    dir: ".yarn",
    paths: [
      ".pnp.cjs",
      ".pnp.loader.mjs",
      ".pnp.data.json",
      ".yarn/cache",
      ".yarn/unplugged",
      ".yarn/install-state.gz",
    ],
    manifests: ["yarn.lock", ".yarnrc.yml"],
    installable: false,
  },
];

/**
 * The dependency folder an entry belongs to: `packages/a/node_modules` is
 * a `node_modules`, `.pnp.cjs` is yarn's.
 *
 * @param entry A path found by {@linkcode dependencyEntries}.
 * @returns The folder, or undefined for none.
 */
export function folderOf(entry: string): DependencyFolder | undefined {
  const name = entry.split("/").at(-1);
  return DEPENDENCY_FOLDERS.find((folder) =>
    folder.paths ? folder.paths.includes(entry) : folder.dir === entry ||
      (folder.dir === "node_modules" && name === "node_modules")
  );
}

/**
 * The dependency entries of the checkout that `commit` does not track: the
 * root's folders and yarn's files, and each `node_modules` of a workspace
 * package (one git listing of the ignored and untracked folders).
 *
 * @param repo The repository.
 * @param commit The commit the clean copies hold.
 * @returns Paths relative to the root, root entries first.
 */
export async function dependencyEntries(repo: GitRepo, commit: string): Promise<string[]> {
  const candidates: string[] = [];
  for (const folder of DEPENDENCY_FOLDERS) {
    for (const entry of folder.paths ?? [folder.dir]) {
      if (await Deno.lstat(path.join(repo.root, entry)).then(() => true, () => false)) {
        candidates.push(entry);
      }
    }
  }
  const others = await repo.exec([
    "ls-files",
    "-z",
    "--others",
    "--ignored",
    "--exclude-standard",
    "--directory",
  ]);
  const nested = others.stdout.split("\0").map((line) => line.replace(/\/$/, "")).filter((
    entry,
  ) =>
    entry.endsWith("/node_modules") && !entry.slice(0, -"/node_modules".length).includes(
      "node_modules",
    )
  );
  candidates.push(...nested.sort());
  if (candidates.length === 0) return [];
  const tracked = await repo.exec([
    "ls-tree",
    "-r",
    "--name-only",
    "-z",
    commit,
    "--",
    ...candidates,
  ]);
  const held = tracked.stdout.split("\0").filter((line) => line !== "");
  return candidates.filter((entry) =>
    !held.some((file) => file === entry || file.startsWith(`${entry}/`))
  );
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
 * file and without the network where the package manager can: `npm ci
 * --prefer-offline` (npm's cache first), `pnpm install --frozen-lockfile
 * --offline` (pnpm's store only), yarn berry's `yarn install --immutable`
 * with its network off (its cache only), yarn 1's `--frozen-lockfile
 * --offline`, or `npm install` without a lock file.
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
 *   assert.equal(
 *     (await nodeInstallCommand(root)).command,
 *     "npm ci --prefer-offline --no-audit --no-fund",
 *   );
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export async function nodeInstallCommand(root: string): Promise<InstallCommand> {
  const has = async (file: string) => await isFile(path.join(root, file));
  if (await has("pnpm-lock.yaml")) {
    return { command: "pnpm install --frozen-lockfile --offline", executable: "pnpm" };
  }
  if (await has("yarn.lock")) {
    const lock = await Deno.readTextFile(path.join(root, "yarn.lock")).catch(() => "");
    return lock.includes("__metadata:")
      ? { command: "YARN_ENABLE_NETWORK=0 yarn install --immutable", executable: "yarn" }
      : { command: "yarn install --frozen-lockfile --offline", executable: "yarn" };
  }
  if (await has("package-lock.json") || await has("npm-shrinkwrap.json")) {
    return { command: "npm ci --prefer-offline --no-audit --no-fund", executable: "npm" };
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
