/**
 * Git evidence through the `git` CLI (see `process.ts`): the baseline commit, new
 * commits since it, and the changed files, staged and unstaged kept apart.
 * Every call has a timeout; a failing call degrades to "unknown" (null), is
 * reported, and never counts as progress or completion. Every call goes
 * through {@linkcode runGit}, so no hook or program named in the repository's
 * config runs.
 *
 * @module
 */

import { sha256Hex } from "../support/errors.ts";
import { TIMEOUT_CODE, type ToolResult } from "../support/process.ts";
import { runGit } from "./run_git.ts";

/** A git call that failed. */
export interface GitFault {
  /** git arguments. */
  args: string[];
  /** Exit code (124 timeout, 127 git missing). */
  code: number;
  /** First line of stderr. */
  message: string;
}

/**
 * `git worktree` calls in flight per repository (its top folder): git writes a
 * new worktree's files under `.git/worktrees/` one by one, and another
 * `git worktree` call that reads them half-written fails, or (`prune`) removes
 * them. This process makes its calls one at a time per repository.
 */
const worktreeCalls = new Map<string, Promise<unknown>>();

/** A `git worktree` failure that another process's call in progress explains (a half-written worktree). */
const HALF_WRITTEN =
  /failed to read .*worktrees\/|worktrees\/[^\s]+\/(?:commondir|gitdir)|is not a valid/;

/** How long a push may take before it is given up (120 s). */
const PUSH_TIMEOUT_MS = 120_000;

/**
 * The line of a failed push's stderr that says why: git prints `To <remote>`
 * first, and the reason after it (`! [rejected]`, `error:`, `fatal:`, `remote:`).
 */
function pushFailure(stderr: string): string | undefined {
  const lines = stderr.split("\n").map((line) => line.trim()).filter(Boolean);
  return lines.find((line) => /^(!|error:|fatal:|remote:)/.test(line)) ??
    lines.find((line) => !line.startsWith("To "));
}

/** Options of {@linkcode GitRepo}. */
export interface GitOptions {
  /** Timeout of one git call in milliseconds. @default 10000 */
  timeoutMs?: number;
  /** Receives failed calls. */
  onFault?: (fault: GitFault) => void;
  /** Extra environment for git. */
  env?: Record<string, string>;
}

/** The working tree's changes. */
export interface TreeStatus {
  /** Paths with staged changes. */
  staged: string[];
  /** Paths with unstaged changes or untracked. */
  unstaged: string[];
}

/** The repository at one moment ({@linkcode GitRepo.observe}); null where git failed. */
export interface RepoState {
  /** The HEAD commit (null before the first commit). */
  head: string | null;
  /** Commits since the base (null when not asked for). */
  newCommits: number | null;
  /** Changed files. */
  status: TreeStatus | null;
  /** {@linkcode GitRepo.fingerprint} of the uncommitted state. */
  fingerprint: string | null;
}

/**
 * Git evidence for one working directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GitRepo } from "./repo.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
 *   const repo = (await GitRepo.open(dir))!;
 *   await repo.exec(["config", "user.name", "Ada"]);
 *   await repo.exec(["config", "user.email", "ada@example.com"]);
 *   const baseline = await repo.head();
 *   await Deno.writeTextFile(`${dir}/notes.md`, "# Notes\n");
 *   assert.deepEqual(await repo.status(), { staged: [], unstaged: ["notes.md"] });
 *   await repo.commitPaths(["notes.md"], "Add notes");
 *   assert.equal(await repo.commitsSince(baseline), 1);
 *   assert.deepEqual(await repo.status(), { staged: [], unstaged: [] });
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class GitRepo {
  /** The repository's top folder. */
  readonly root: string;
  /** The working directory git runs in. */
  readonly cwd: string;
  #options: GitOptions;

  private constructor(root: string, cwd: string, options: GitOptions) {
    this.root = root;
    this.cwd = cwd;
    this.#options = options;
  }

  /**
   * Open the repository that holds `cwd`.
   *
   * @param cwd A folder.
   * @param options Timeout and fault sink.
   * @returns The repository, or undefined outside one (or without git).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   assert.equal(await GitRepo.open(dir), undefined);
   *   await new Deno.Command("git", { args: ["init", "-q", dir] }).output();
   *   await Deno.mkdir(`${dir}/src`);
   *   const repo = await GitRepo.open(`${dir}/src`);
   *   assert.equal(repo?.root, await Deno.realPath(dir));
   *   assert.equal(repo?.cwd, `${dir}/src`);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  static async open(cwd: string, options: GitOptions = {}): Promise<GitRepo | undefined> {
    const probe = new GitRepo(cwd, cwd, options);
    const top = await probe.#run(["rev-parse", "--show-toplevel"], { quiet: true });
    if (top === null) return undefined;
    return new GitRepo(top.trim(), cwd, options);
  }

  /**
   * The current commit.
   *
   * @returns Its hash, or null (no commit yet, or git failed).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   assert.equal(await repo.head(), null);
   *   await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
   *   const commit = await repo.commitPaths(["a.txt"], "Add a");
   *   assert.match(commit ?? "", /^[0-9a-f]{40}$/);
   *   assert.equal(await repo.head(), commit);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async head(): Promise<string | null> {
    const out = await this.#run(["rev-parse", "--verify", "-q", "HEAD"], { quiet: true });
    return out === null ? null : out.trim() || null;
  }

  /**
   * The current branch name.
   *
   * @returns The branch, or null when detached or unknown.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   assert.equal(await repo.branch(), "main");
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async branch(): Promise<string | null> {
    const out = await this.#run(["symbolic-ref", "--short", "-q", "HEAD"], { quiet: true });
    return out === null ? null : out.trim() || null;
  }

  /**
   * Commits on HEAD since `base`.
   *
   * @param base The baseline commit (null: count every commit).
   * @returns The count, or null when git could not tell.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   assert.equal(await repo.commitsSince(null), 0);
   *   await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
   *   const baseline = await repo.commitPaths(["a.txt"], "Add a");
   *   await Deno.writeTextFile(`${dir}/b.txt`, "b\n");
   *   await repo.commitPaths(["b.txt"], "Add b");
   *   assert.equal(await repo.commitsSince(null), 2);
   *   assert.equal(await repo.commitsSince(baseline), 1);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async commitsSince(base: string | null): Promise<number | null> {
    const range = base ? `${base}..HEAD` : "HEAD";
    const out = await this.#run(["rev-list", "--count", range], { quiet: base === null });
    if (out === null) return base === null ? 0 : null;
    const count = Number(out.trim());
    return Number.isFinite(count) ? count : null;
  }

  /**
   * Changed files, staged and unstaged apart (`git status --porcelain`).
   *
   * @param exclude Path prefixes to leave out (finishline's own logs).
   * @returns The status, or null when git failed.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await Deno.writeTextFile(`${dir}/staged.txt`, "ready\n");
   *   await repo.exec(["add", "staged.txt"]);
   *   await Deno.mkdir(`${dir}/logs`);
   *   await Deno.writeTextFile(`${dir}/logs/run.jsonl`, "{}\n");
   *   await Deno.writeTextFile(`${dir}/draft.txt`, "draft\n");
   *   assert.deepEqual(await repo.status(["logs"]), {
   *     staged: ["staged.txt"],
   *     unstaged: ["draft.txt"],
   *   });
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async status(exclude: string[] = []): Promise<TreeStatus | null> {
    const out = await this.#run(["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
    if (out === null) return null;
    const staged: string[] = [];
    const unstaged: string[] = [];
    const entries = out.split("\0");
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index];
      if (entry.length < 4) continue;
      const x = entry[0];
      const y = entry[1];
      const path = entry.slice(3);
      if (x === "R" || x === "C") index++; // the rename's source path follows
      if (
        exclude.some((prefix) =>
          path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`)
        )
      ) {
        continue;
      }
      if (x === "?" && y === "?") {
        unstaged.push(path);
        continue;
      }
      if (x !== " ") staged.push(path);
      if (y !== " ") unstaged.push(path);
    }
    return { staged, unstaged };
  }

  /**
   * A fingerprint of the working tree's uncommitted state (changed paths,
   * their diff, and the size and time of untracked files), to tell whether
   * files changed between two moments without committing or stashing.
   *
   * @param exclude Path prefixes to leave out.
   * @returns A hash, or null when git failed.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
   *   await repo.commitPaths(["a.txt"], "Add a");
   *   const before = await repo.fingerprint();
   *   assert.equal(await repo.fingerprint(), before);
   *   await Deno.writeTextFile(`${dir}/a.txt`, "changed\n");
   *   assert.notEqual(await repo.fingerprint(), before);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async fingerprint(exclude: string[] = []): Promise<string | null> {
    const [status, diff] = await Promise.all([this.status(exclude), this.#diff()]);
    return status === null ? null : await this.#fingerprintOf(status, diff);
  }

  /**
   * The repository at one moment, in four git calls run at once: HEAD, the
   * commits since a base, the changed files and their
   * {@linkcode GitRepo.fingerprint}.
   *
   * @param base The commit to count from (null counts all; undefined skips the count).
   * @param exclude Path prefixes to leave out of the status.
   * @returns The state; fields are null where git failed.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
   *   await repo.commitPaths(["a.txt"], "Add a");
   *   const base = await repo.head();
   *   await Deno.writeTextFile(`${dir}/b.txt`, "b\n");
   *   await repo.commitPaths(["b.txt"], "Add b");
   *   await Deno.writeTextFile(`${dir}/c.txt`, "c\n");
   *   const state = await repo.observe(base);
   *   assert.equal(state.newCommits, 1);
   *   assert.equal(state.head, await repo.head());
   *   assert.deepEqual(state.status, { staged: [], unstaged: ["c.txt"] });
   *   assert.equal(state.fingerprint, await repo.fingerprint());
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async observe(base: string | null | undefined, exclude: string[] = []): Promise<RepoState> {
    const [head, newCommits, status, diff] = await Promise.all([
      this.head(),
      base === undefined ? null : this.commitsSince(base),
      this.status(exclude),
      this.#diff(),
    ]);
    const fingerprint = status === null ? null : await this.#fingerprintOf(status, diff);
    return { head, newCommits, status, fingerprint };
  }

  /** The uncommitted diff against HEAD (the index, before the first commit). */
  async #diff(): Promise<string> {
    return await this.#run(["diff", "HEAD", "--no-ext-diff", "--binary", "--", "."], {
      quiet: true,
    }) ??
      await this.#run(["diff", "--cached", "--no-ext-diff", "--binary"], { quiet: true }) ?? "";
  }

  async #fingerprintOf(status: TreeStatus, diff: string): Promise<string> {
    const parts = [JSON.stringify(status), diff];
    for (const path of status.unstaged) {
      try {
        const info = await Deno.stat(`${this.root}/${path}`);
        parts.push(`${path}:${info.size}:${info.mtime?.getTime() ?? 0}`);
      } catch {
        parts.push(`${path}:gone`);
      }
    }
    return await sha256Hex(parts.join("\0"));
  }

  /**
   * The uncommitted files with a signature of their state (size and time,
   * or "deleted"), to tell the agent's changes from what was already
   * uncommitted when the run started.
   *
   * @param exclude Path prefixes to leave out.
   * @returns Path -> signature, or null when git failed.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
   *   await repo.commitPaths(["a.txt"], "Add a");
   *   await Deno.remove(`${dir}/a.txt`);
   *   await Deno.writeTextFile(`${dir}/b.txt`, "bb\n");
   *   const snapshot = await repo.snapshot();
   *   assert.equal(snapshot?.get("a.txt"), "deleted");
   *   assert.match(snapshot?.get("b.txt") ?? "", /^3:\d+$/);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async snapshot(exclude: string[] = []): Promise<Map<string, string> | null> {
    const status = await this.status(exclude);
    if (status === null) return null;
    const result = new Map<string, string>();
    for (const path of new Set([...status.staged, ...status.unstaged])) {
      try {
        const info = await Deno.stat(`${this.root}/${path}`);
        result.set(path, `${info.size}:${info.mtime?.getTime() ?? 0}`);
      } catch {
        result.set(path, "deleted");
      }
    }
    return result;
  }

  /**
   * Commit the given paths (added, changed or deleted) with a message, and
   * nothing else that may be staged. Never discards, stashes or pushes.
   *
   * @param paths Paths relative to the repository root.
   * @param message The commit message.
   * @returns The new commit, or null when git refused.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await Deno.writeTextFile(`${dir}/done.txt`, "done\n");
   *   await Deno.writeTextFile(`${dir}/scratch.txt`, "not mine\n");
   *   assert.notEqual(await repo.commitPaths(["done.txt"], "Add done.txt"), null);
   *   assert.deepEqual(await repo.status(), { staged: [], unstaged: ["scratch.txt"] });
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async commitPaths(paths: string[], message: string): Promise<string | null> {
    if (paths.length === 0) return null;
    const pathspecs = paths.map((path) => `:(top,literal)${path}`);
    if ((await this.exec(["add", "-A", "--", ...pathspecs])).code !== 0) return null;
    const commit = await this.exec(["commit", "-q", "-m", message, "--", ...pathspecs]);
    if (commit.code !== 0) return null;
    return await this.head();
  }

  /**
   * Push a branch to `origin` and track it. A push crosses a network, so it
   * gets its own timeout rather than the local calls' ten seconds, and one
   * more try when it failed for a reason other than a rejected update.
   *
   * @param branch The branch.
   * @param timeoutMs How long the push may take. @default 120000
   * @returns undefined once pushed, or one line saying why not.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   await new Deno.Command("git", { args: ["init", "-q", "--bare", `${dir}/.git/o`] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await repo.exec(["remote", "add", "origin", `${dir}/.git/o`]);
   *   await repo.exec(["commit", "-q", "--allow-empty", "-m", "one"]);
   *   assert.equal(await repo.push("main"), undefined);
   *   await repo.exec(["commit", "-q", "--amend", "--allow-empty", "-m", "two"]);
   *   assert.match((await repo.push("main")) ?? "", /^! \[rejected\]/);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async push(branch: string, timeoutMs = PUSH_TIMEOUT_MS): Promise<string | undefined> {
    const args = ["push", "-u", "origin", branch];
    let result = await this.#spawn(args, timeoutMs);
    if (result.code !== 0 && !/^\s*! \[rejected\]/m.test(result.stderr)) {
      result = await this.#spawn(args, timeoutMs);
    }
    if (result.code === 0) return undefined;
    const message = result.code === TIMEOUT_CODE
      ? `git push timed out after ${Math.round(timeoutMs / 1000)} s`
      : pushFailure(result.stderr) ?? `git push exited with code ${result.code}`;
    this.#options.onFault?.({ args, code: result.code, message });
    return message;
  }

  /**
   * Run a git command for its output.
   *
   * @param args git arguments.
   * @param options `quiet` does not report failures (for probes).
   * @returns stdout, or null when git failed.
   */
  async #run(args: string[], options: { quiet?: boolean } = {}): Promise<string | null> {
    const result = await this.#spawn(args);
    if (result.code === 0) return result.stdout;
    if (!options.quiet) this.#report(args, result);
    return null;
  }

  /** Run git with the timeout and environment; a spawn failure is exit code 1. */
  #spawn(args: string[], timeoutMs = this.#options.timeoutMs ?? 10_000): Promise<ToolResult> {
    return runGit(args, { cwd: this.cwd, env: this.#options.env, timeoutMs });
  }

  /** Tell `onFault` about a failed call. */
  #report(args: string[], result: { code: number; stderr: string }): void {
    const message = result.code === TIMEOUT_CODE
      ? `timed out after ${this.#options.timeoutMs ?? 10_000} ms`
      : result.stderr.split("\n").find((line) => line.trim())?.trim() ?? `exit code ${result.code}`;
    this.#options.onFault?.({ args, code: result.code, message });
  }

  /**
   * Run a git command that changes the repository (commit, worktree, ...).
   *
   * @param args git arguments.
   * @returns Exit code, stdout and stderr.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", "-b", "main", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
   *   await repo.commitPaths(["a.txt"], "Add a");
   *   const log = await repo.exec(["log", "--format=%s"]);
   *   assert.equal(log.code, 0);
   *   assert.equal(log.stdout, "Add a\n");
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async exec(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const result = await this.#spawn(args);
    if (result.code !== 0) this.#report(args, result);
    return result;
  }

  /**
   * Run `git worktree <args>`, one such call at a time in this repository
   * (see `worktreeCalls`), and again (up to three times, 100 ms apart) when
   * it failed on a worktree another process was writing.
   *
   * @param args The arguments after `worktree`.
   * @returns Exit code and output, as {@linkcode GitRepo.exec}.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitRepo } from "./repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   const listed = await repo.worktree(["list", "--porcelain"]);
   *   assert.equal(listed.code, 0);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  worktree(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const previous = worktreeCalls.get(this.root) ?? Promise.resolve();
    const call = previous.then(async () => {
      for (let attempt = 1;; attempt++) {
        const result = await this.#spawn(["worktree", ...args]);
        if (result.code === 0 || attempt >= 3 || !HALF_WRITTEN.test(result.stderr)) {
          if (result.code !== 0) this.#report(["worktree", ...args], result);
          return result;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    });
    const settled = call.catch(() => undefined);
    worktreeCalls.set(this.root, settled);
    settled.then(() => {
      if (worktreeCalls.get(this.root) === settled) worktreeCalls.delete(this.root);
    });
    return call;
  }
}
