/**
 * The repository's git settings as a run found them, put back at its end.
 * The agent can write `.git/config`, `config.worktree`, `.git/hooks`,
 * `.git/info/exclude` and `.git/info/attributes` (and the folder
 * `core.hooksPath` names): a hook or a setting left there would run, or hide
 * files, the next time the user runs git. {@linkcode GitSettingsGuard}
 * keeps their bytes when the run starts and, at its end, says what changed
 * and restores them exactly, byte for byte.
 *
 * @module
 */

import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { GitRepo } from "./repo.ts";
import { runGit } from "./run_git.ts";

/** One file of the git settings that changed during the run. */
export interface GitSettingsChange {
  /** The file: `.git/config`, `.git/hooks/pre-commit`, or an absolute path outside `.git`. */
  file: string;
  /** What happened to it. */
  change: "added" | "modified" | "deleted";
  /** For a config file: the settings added, changed or removed. */
  settings?: string[];
  /** Whether it was put back (a file too large to keep is only reported). */
  restored: boolean;
}

/** Options of {@linkcode GitSettingsGuard.capture}. */
export interface GitSettingsOptions {
  /**
   * The run's own branch: the upstream that finishline's `push -u` sets
   * (`branch.<name>.remote` and `.merge`) is finishline's, not a change to undo.
   */
  ownBranch?: string;
}

/** A file as it was: its bytes (unless too large), its hash and mode, or the target of a link. */
interface Kept {
  bytes?: Uint8Array;
  hash: string;
  mode: number | null;
  link?: string;
}

/** Files larger than this are hashed, not kept. */
const FILE_LIMIT = 1024 * 1024;
/** All the kept bytes together stay under this. */
const TOTAL_LIMIT = 16 * 1024 * 1024;
/** Config files: their changes are told setting by setting. */
const CONFIG_FILES = /(?:^|\/)config(?:\.worktree)?$/;

/**
 * The repository's git settings kept when the run starts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GitRepo } from "./repo.ts";
 * import { GitSettingsGuard } from "./settings.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   await new Deno.Command("git", { args: ["init", "-q", dir] }).output();
 *   const repo = (await GitRepo.open(dir))!;
 *   const before = await Deno.readFile(`${dir}/.git/config`);
 *   const guard = (await GitSettingsGuard.capture(repo))!;
 *   await repo.exec(["config", "core.hooksPath", "lib/hooks"]);
 *   const changes = await guard.restore();
 *   assert.deepEqual(changes, [{
 *     file: ".git/config",
 *     change: "modified",
 *     settings: ["added core.hookspath = lib/hooks"],
 *     restored: true,
 *   }]);
 *   assert.deepEqual(await Deno.readFile(`${dir}/.git/config`), before);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class GitSettingsGuard {
  readonly #repo: GitRepo;
  readonly #commonDir: string;
  readonly #hooksPath: string | undefined;
  readonly #kept: Map<string, Kept>;
  readonly #options: GitSettingsOptions;

  private constructor(
    repo: GitRepo,
    where: { commonDir: string; hooksPath: string | undefined },
    kept: Map<string, Kept>,
    options: GitSettingsOptions,
  ) {
    this.#repo = repo;
    this.#commonDir = where.commonDir;
    this.#hooksPath = where.hooksPath;
    this.#kept = kept;
    this.#options = options;
  }

  /**
   * Keep the repository's git settings as they are now.
   *
   * @param repo The repository the run works in.
   * @param options The run's own branch.
   * @returns The guard, or undefined when git cannot say where the settings are.
   */
  static async capture(
    repo: GitRepo,
    options: GitSettingsOptions = {},
  ): Promise<GitSettingsGuard | undefined> {
    const dirs = await repo.exec(["rev-parse", "--git-common-dir"]);
    if (dirs.code !== 0) return undefined;
    const commonDir = await Deno.realPath(resolve(repo.cwd, dirs.stdout.trim()));
    const hooksPath = await outsideHooksPath(repo);
    const files = await watchedFiles(commonDir, hooksPath);
    const kept = new Map<string, Kept>();
    let total = 0;
    for (const file of files) {
      const entry = await keep(file, TOTAL_LIMIT - total);
      if (!entry) continue;
      total += entry.bytes?.length ?? 0;
      kept.set(file, entry);
    }
    return new GitSettingsGuard(repo, { commonDir, hooksPath }, kept, options);
  }

  /**
   * What changed since {@linkcode GitSettingsGuard.capture}, without
   * touching anything.
   *
   * @returns The changed files, in path order.
   */
  async changes(): Promise<GitSettingsChange[]> {
    return (await this.#compare()).map(({ change }) => change);
  }

  /**
   * Put every changed file back as it was (an added one removed), and say
   * what changed.
   *
   * @returns The changed files, in path order.
   */
  async restore(): Promise<GitSettingsChange[]> {
    const found = await this.#compare();
    for (const { path, change, own } of found) {
      const kept = this.#kept.get(path);
      if (change.change === "added") {
        await Deno.remove(path).catch(() => {});
        continue;
      }
      if (!kept || (!kept.bytes && kept.link === undefined)) {
        change.restored = false;
        continue;
      }
      await Deno.mkdir(dirname(path), { recursive: true });
      await Deno.remove(path).catch(() => {});
      if (kept.link !== undefined) {
        await Deno.symlink(kept.link, path);
      } else {
        await Deno.writeFile(path, kept.bytes!);
        if (kept.mode !== null) await Deno.chmod(path, kept.mode);
      }
      // finishline's own upstream setting stays.
      for (const [key, value] of own) {
        await runGit(["config", "--file", path, "--add", key, value], {
          cwd: this.#repo.cwd,
          timeoutMs: 10_000,
        });
      }
    }
    return found.map(({ change }) => change);
  }

  async #compare(): Promise<
    Array<{ path: string; change: GitSettingsChange; own: Array<[string, string]> }>
  > {
    const now = await watchedFiles(this.#commonDir, this.#hooksPath);
    const paths = [...new Set([...this.#kept.keys(), ...now])].sort();
    const found: Array<{ path: string; change: GitSettingsChange; own: Array<[string, string]> }> =
      [];
    for (const path of paths) {
      const before = this.#kept.get(path);
      const after = now.includes(path) ? await keep(path, 0) : undefined;
      if (before && after && sameFile(before, after)) continue;
      if (!before && !after) continue;
      const change: GitSettingsChange = {
        file: this.#label(path),
        change: !before ? "added" : !after ? "deleted" : "modified",
        restored: true,
      };
      let own: Array<[string, string]> = [];
      if (CONFIG_FILES.test(path) && before?.bytes) {
        const diff = await this.#settingsDiff(before.bytes, after ? path : undefined);
        own = diff.own;
        // Only finishline's own upstream changed: nothing to undo.
        if (diff.settings.length === 0 && change.change === "modified" && own.length > 0) {
          continue;
        }
        if (diff.settings.length > 0) change.settings = diff.settings;
      } else if (CONFIG_FILES.test(path) && !before && after) {
        const diff = await this.#settingsDiff(new Uint8Array(), path);
        if (diff.settings.length > 0) change.settings = diff.settings;
      }
      found.push({ path, change, own });
    }
    return found;
  }

  /** The settings of a config file before and now, compared: what was added, changed, removed. */
  async #settingsDiff(
    before: Uint8Array,
    afterPath: string | undefined,
  ): Promise<{ settings: string[]; own: Array<[string, string]> }> {
    const dir = await Deno.makeTempDir({ prefix: "finishline-config-" });
    try {
      const earlier = join(dir, "config");
      await Deno.writeFile(earlier, before);
      const [old, now] = await Promise.all([
        this.#listFile(earlier),
        afterPath ? this.#listFile(afterPath) : Promise.resolve([]),
      ]);
      const ownPrefix = this.#options.ownBranch ? `branch.${this.#options.ownBranch}.` : undefined;
      const isOwn = ([key]: [string, string]) =>
        ownPrefix !== undefined && key.startsWith(ownPrefix) &&
        /\.(?:remote|merge)$/.test(key);
      const own = now.filter((pair) => isOwn(pair) && !has(old, pair));
      const others = now.filter((pair) => !own.includes(pair));
      const settings: string[] = [];
      const keys = [...new Set([...old, ...others].map(([key]) => key))];
      for (const key of keys) {
        const was = old.filter(([name]) => name === key).map(([, value]) => value);
        const is = others.filter(([name]) => name === key).map(([, value]) => value);
        if (JSON.stringify(was) === JSON.stringify(is)) continue;
        if (was.length === 0) settings.push(`added ${key} = ${shown(is.join(", "))}`);
        else if (is.length === 0) settings.push(`removed ${key}`);
        else settings.push(`changed ${key} to ${shown(is.join(", "))}`);
      }
      return { settings, own };
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }

  async #listFile(file: string): Promise<Array<[string, string]>> {
    const listed = await runGit(["config", "--file", file, "--list", "-z"], {
      cwd: this.#repo.cwd,
      timeoutMs: 10_000,
    });
    if (listed.code !== 0) return [];
    return listed.stdout.split("\0").filter((entry) => entry !== "").map((entry) => {
      const newline = entry.indexOf("\n");
      return newline < 0 ? [entry, "true"] : [entry.slice(0, newline), entry.slice(newline + 1)];
    });
  }

  /** `.git/config` for a file of a `.git` folder; the path itself elsewhere. */
  #label(path: string): string {
    const inside = relative(this.#commonDir, path);
    if (inside.startsWith("..") || isAbsolute(inside)) return path;
    return this.#commonDir.endsWith("/.git") ? `.git/${inside}` : join(this.#commonDir, inside);
  }
}

/**
 * A list of changes in words, for the report and the terminal:
 * `.git/config modified (added core.hookspath = lib/hooks)`.
 *
 * @param changes The changes.
 * @returns One line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeGitSettings } from "./settings.ts";
 *
 * assert.equal(
 *   describeGitSettings([
 *     { file: ".git/config", change: "modified", settings: ["added core.hookspath = lib/hooks"], restored: true },
 *     { file: ".git/hooks/pre-commit", change: "added", restored: true },
 *   ]),
 *   ".git/config modified (added core.hookspath = lib/hooks); .git/hooks/pre-commit added",
 * );
 * ```
 */
export function describeGitSettings(changes: GitSettingsChange[]): string {
  return changes.map((change) =>
    `${change.file} ${change.change}${
      change.settings?.length ? ` (${change.settings.join(", ")})` : ""
    }${change.restored ? "" : " (too large to keep: not restored)"}`
  ).join("; ");
}

function has(pairs: Array<[string, string]>, [key, value]: [string, string]): boolean {
  return pairs.some(([name, other]) => name === key && other === value);
}

/** A value cut to a length a report line takes. */
function shown(value: string): string {
  return value.length <= 80 ? value : `${value.slice(0, 79)}…`;
}

function hex(digest: ArrayBuffer): string {
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function sameFile(a: Kept, b: Kept): boolean {
  return a.hash === b.hash && a.mode === b.mode && a.link === b.link;
}

/**
 * The folder `core.hooksPath` names, when it lies outside the working tree:
 * inside it, its hooks are files of the agent's diff like any other.
 */
async function outsideHooksPath(repo: GitRepo): Promise<string | undefined> {
  // finishline's own calls carry core.hooksPath=/dev/null on the command line: the user's is the last other one.
  const configured = await repo.exec(["config", "--show-scope", "--get-all", "core.hooksPath"]);
  const last = configured.stdout.split("\n")
    .filter((line) => line !== "" && !line.startsWith("command\t")).at(-1);
  const value = last === undefined ? "" : last.slice(last.indexOf("\t") + 1);
  if (value === "") return undefined;
  const expanded = value.startsWith("~/")
    ? join(Deno.env.get("HOME") ?? "", value.slice(2))
    : value;
  const target = resolve(repo.root, expanded);
  const inside = relative(repo.root, target);
  if (!inside.startsWith("..") && !isAbsolute(inside)) return undefined;
  try {
    return (await Deno.stat(target)).isDirectory ? await Deno.realPath(target) : undefined;
  } catch {
    return undefined;
  }
}

/** The files the guard watches, as they are now. */
async function watchedFiles(commonDir: string, hooksPath: string | undefined): Promise<string[]> {
  const files = ["config", "config.worktree", "info/exclude", "info/attributes"]
    .map((name) => join(commonDir, name));
  try {
    for await (const entry of Deno.readDir(join(commonDir, "worktrees"))) {
      if (entry.isDirectory) {
        files.push(join(commonDir, "worktrees", entry.name, "config.worktree"));
      }
    }
  } catch {
    // no linked worktree
  }
  files.push(...await filesUnder(join(commonDir, "hooks")));
  if (hooksPath) files.push(...await filesUnder(hooksPath));
  const present: string[] = [];
  for (const file of files) {
    if (await Deno.lstat(file).then(() => true, () => false)) present.push(file);
  }
  return present;
}

/** Every file and link below a folder. */
async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) found.push(...await filesUnder(path));
      else found.push(path);
    }
  } catch {
    // no such folder
  }
  return found;
}

/** A file's state; its bytes are kept when they fit in `room`. */
async function keep(file: string, room: number): Promise<Kept | undefined> {
  try {
    const info = await Deno.lstat(file);
    if (info.isSymlink) {
      const link = await Deno.readLink(file);
      return { hash: `link:${link}`, mode: null, link };
    }
    const bytes = await Deno.readFile(file);
    const hash = hex(await crypto.subtle.digest("SHA-256", bytes));
    const mode = info.mode === null ? null : info.mode & 0o7777;
    return bytes.length <= FILE_LIMIT && bytes.length <= room
      ? { bytes, hash, mode }
      : { hash, mode };
  } catch {
    return undefined;
  }
}
