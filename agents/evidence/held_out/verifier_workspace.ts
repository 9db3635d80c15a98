/**
 * Where the verifier writes the held-out test: a repository of its own, not
 * a worktree of the worker's. The starting commit is fetched into a new
 * repository in a folder only finishline makes (git's transport re-hashes
 * every object), so `git worktree list` in the worker's checkout never names
 * it, and nothing the verifier adds reaches the worker's object store. The
 * checkout's dependency folders are linked in, as for the baseline.
 *
 * @module
 */

import { join } from "node:path";
import { GitRepo } from "../../git/repo.ts";
import { runGit } from "../../git/run_git.ts";
import { DEPENDENCY_FOLDERS, isDirectory } from "../copy/dependency_folders.ts";
import { verifierChanges } from "./reproduction.ts";

/** How long one git call of the set-up may take. */
const GIT_TIMEOUT_MS = 300_000;

/**
 * The verifier's private repository at the starting commit.
 *
 * @example
 * ```ts ignore
 * const workspace = await VerifierWorkspace.create(repo, commit);
 * if (typeof workspace !== "string") {
 *   // run the verifier session in workspace.dir, then:
 *   const written = await workspace.written((path) => path.startsWith("test/"));
 *   await workspace.remove();
 * }
 * ```
 */
export class VerifierWorkspace {
  /** The repository's folder. */
  readonly dir: string;
  readonly #linked: string[];

  private constructor(dir: string, linked: string[]) {
    this.dir = dir;
    this.#linked = linked;
  }

  /**
   * Make the repository: `git init`, a shallow fetch of `commit` from the
   * worker's repository, a detached checkout, the dependency folders linked.
   *
   * @param repo The worker's repository.
   * @param commit The starting commit.
   * @param options The dependency folders to link (default: those the checkout has).
   * @returns The workspace, or why it could not be made.
   */
  static async create(
    repo: GitRepo,
    commit: string,
    options: { link?: readonly string[] } = {},
  ): Promise<VerifierWorkspace | string> {
    const dir = await Deno.makeTempDir({ prefix: "finishline-verifier-" });
    const git = (args: string[]) => runGit(args, { cwd: dir, timeoutMs: GIT_TIMEOUT_MS });
    const steps = [
      ["init", "-q"],
      ["fetch", "-q", "--depth", "1", "--no-tags", `file://${repo.root}`, commit],
      ["checkout", "-q", "--detach", commit],
    ];
    for (const args of steps) {
      const done = await git(args);
      if (done.code !== 0) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
        return `cannot make the verifier's repository (git ${args[0]}): ${
          done.stderr.trim().split("\n")[0]
        }`;
      }
    }
    const linked: string[] = [];
    for (const folder of options.link ?? DEPENDENCY_FOLDERS.map((entry) => entry.dir)) {
      if (!await isDirectory(join(repo.root, folder))) continue;
      try {
        await Deno.symlink(join(repo.root, folder), join(dir, folder));
        linked.push(folder);
      } catch {
        // a folder the commit tracks itself stays as it is
      }
    }
    return new VerifierWorkspace(dir, linked);
  }

  /**
   * The files the verifier wrote: test files kept with their text, the rest
   * (code, deleted files) named to be dropped.
   *
   * @param isTest Whether a path is a test file.
   * @returns The test files and the other paths.
   */
  async written(
    isTest: (path: string) => boolean,
  ): Promise<{ files: Array<{ path: string; content: string }>; others: string[] }> {
    const local = await GitRepo.open(this.dir);
    if (!local) return { files: [], others: [] };
    const changed = await verifierChanges(local, isTest, this.#linked);
    const files: Array<{ path: string; content: string }> = [];
    for (const path of changed.tests) {
      files.push({ path, content: await Deno.readTextFile(join(this.dir, path)) });
    }
    return { files, others: changed.others };
  }

  /**
   * Remove the repository (the links, not what they point to).
   *
   * @returns Resolves once it is gone.
   */
  async remove(): Promise<void> {
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
