/**
 * Running checks on another state of the repository: a copy of a commit
 * (the baseline, or the agent's commit, with original test files put back
 * where asked) in a private repository of finishline's, filled by fetch from
 * the user's and checked file by file against its blobs
 * ({@linkcode ObjectCopy}), with its own copy of the checkout's dependency folders.
 * The gate keeps one such copy for a whole run and moves it from commit to
 * commit; untracked and ignored files of the live checkout never reach it,
 * and nothing of it is registered in the user's repository.
 *
 * @module
 */

import path from "node:path";
import type { GitRepo } from "../../git/repo.ts";
import { MISSING_CODE, runShell, runTool } from "../../support/process.ts";
import { CHECK_TAG, type CheckRun, type RepoCheck, runRepoCheck } from "../run/check_run.ts";
import { stopTagged } from "../../support/process_tags.ts";
import { checkEnvironment } from "../run/check_env.ts";
import { DEPENDENCY_FOLDERS, dependencyEntries, folderOf } from "./dependency_folders.ts";
import { DependencySnapshot } from "./dependency_tree.ts";
import { DependencyCopy } from "./dependency_copy.ts";
import { BuildSeed, settleTimes } from "./build_seed.ts";
import { buildEntry, BuildFolders, type DroppedBuild } from "./build_folders.ts";
import { ObjectCopy } from "./object_copy.ts";
import { isConfigured } from "../run/build_folder.ts";
import { copyPrefix } from "./stale_copies.ts";

export { removeStaleWorktrees } from "./stale_copies.ts";
export { snapshotCommit, snapshotTree } from "./snapshot.ts";

/** How a dependency folder reaches a worktree. */
export type FolderSetup =
  | { kind: "copied" }
  | { kind: "installed"; key: string; command: string };

/**
 * A copy of a commit in finishline's private repository, for running the
 * repository's checks on it: created once, moved from commit to commit (a
 * fetch, a forced checkout, `git clean -ffdx` with the dependency folders
 * excepted, and every file checked against its blob), removed at the end.
 *
 * @example Check a commit, then move on to the next one
 * ```ts
 * import assert from "node:assert/strict";
 * import { GitRepo } from "../../git/repo.ts";
 * import { CheckWorktree } from "./worktree_run.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const git = (...args: string[]) => new Deno.Command("git", { args, cwd: dir }).output();
 *   await git("init", "-q", "-b", "main");
 *   await git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "start");
 *   const repo = (await GitRepo.open(dir))!;
 *   const worktree = await CheckWorktree.create(repo, (await repo.head())!);
 *   assert.ok(worktree instanceof CheckWorktree);
 *   // An untracked file of the checkout never reaches the worktree.
 *   await Deno.writeTextFile(`${dir}/GNUmakefile`, "test:\n\ttrue\n");
 *   const [run] = await worktree.run([{ name: "make", command: "test ! -e GNUmakefile" }], {
 *     timeoutMs: 10_000,
 *   });
 *   assert.equal(run.green, true);
 *   await worktree.remove();
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class CheckWorktree {
  /** The copy's folder (the private repository's work tree). */
  readonly dir: string;
  readonly #repo: GitRepo;
  readonly #objects: ObjectCopy;
  #commit: string;
  readonly #folders = new Map<string, FolderSetup>();
  #dependencies: DependencyCopy | undefined;
  /** The snapshot the worktree took itself, when it was given none: stopped at removal. */
  #ownSnapshot: DependencySnapshot | undefined;
  #seed: BuildSeed | undefined;
  /** The seed a build folder falls back to ({@linkcode CheckWorktree.fallBackTo}). */
  #fallback: BuildSeed | undefined;
  /** The commit whose files get the fixed time when there is no seed ({@linkcode CheckWorktree.keepTimes}). */
  #timesSince: string | undefined;
  /** The listing of the seed planted ahead by {@linkcode CheckWorktree.tidy}, until a move uses it. */
  #planted: string | undefined;
  /** The checks' kept build folders, beside the work tree. */
  readonly #builds: BuildFolders;
  /** Why the copy's files are not its commit's objects, after the last move that found it. */
  #finding: string | undefined;

  private constructor(repo: GitRepo, objects: ObjectCopy, commit: string) {
    this.#repo = repo;
    this.#objects = objects;
    this.dir = objects.workTree;
    this.#commit = commit;
    this.#builds = new BuildFolders(objects.folder, objects);
  }

  /**
   * Copy `commit` into a new private repository (a temporary folder, never
   * registered in `repo`) and copy in the checkout's dependency folders
   * (`node_modules`, `.venv`, `venv`, `vendor`, yarn's) that the commit does
   * not track, as they were at the run's start ({@linkcode DependencyCopy}).
   *
   * @param repo The repository.
   * @param commit The commit to check out.
   * @param options The checkout's dependency folders at the run's start
   * (default: as they are now), and the run that owns it: its folder is then
   * named with the repository and the run, so that the next run can remove it
   * once its run is dead ({@linkcode removeStaleWorktrees}).
   * @returns The copy, or why it could not be made (a file not its blob included).
   */
  static async create(
    repo: GitRepo,
    commit: string,
    options: { dependencies?: DependencySnapshot; owner?: string } = {},
  ): Promise<CheckWorktree | string> {
    // Named with the repository (and the run, when known): a dead run's copies can be found.
    const prefix = `${await copyPrefix(repo.root)}${options.owner ? `${options.owner}-` : ""}`;
    const objects = await ObjectCopy.create(repo, { prefix });
    if (typeof objects === "string") return objects;
    const failed = await objects.checkout(commit) ?? await objects.verify(commit);
    if (failed) {
      await objects.remove();
      return failed;
    }
    const worktree = new CheckWorktree(repo, objects, commit);
    const start = options.dependencies ??
      await DependencySnapshot.take(repo.root, await dependencyEntries(repo, commit));
    worktree.#dependencies = new DependencyCopy(start, worktree.dir);
    if (!options.dependencies) worktree.#ownSnapshot = start;
    for (const folder of DEPENDENCY_FOLDERS) {
      if (!start.entries.some((entry) => folderOf(entry) === folder)) continue;
      const failed = await worktree.copyIn(folder.dir);
      if (failed) {
        await worktree.remove();
        return `cannot copy the dependency folders into the worktree: ${failed}`;
      }
    }
    return worktree;
  }

  /**
   * The copy's private repository, read with every setting the agent could
   * have written off: the gate's diffs and scans read blobs through it.
   *
   * @returns The reader.
   */
  get objects(): ObjectCopy {
    return this.#objects;
  }

  /**
   * The copy's own folder, which holds its work tree (`tree/`), its private
   * repository, and the checks' kept build folders (`build/`).
   *
   * @returns The folder.
   */
  get folder(): string {
    return this.#objects.folder;
  }

  /**
   * finishline's bytecode folder for this copy (`PYTHONPYCACHEPREFIX`),
   * kept for the copy's life beside it, never inside it.
   *
   * @returns The folder.
   */
  get pycache(): string {
    return path.join(this.#objects.folder, "pycache");
  }

  /**
   * Why the copy's files were not its commit's objects at the last move
   * (a file through a filter, a changed link, ...).
   *
   * @returns The finding, or undefined when every file was its blob.
   */
  get finding(): string | undefined {
    return this.#finding;
  }

  /**
   * The commit the worktree holds.
   *
   * @returns Its hash.
   */
  get commit(): string {
    return this.#commit;
  }

  /**
   * How each dependency folder reaches the worktree.
   *
   * @returns Folder -> copied from the checkout, or installed in the worktree.
   */
  get folders(): ReadonlyMap<string, FolderSetup> {
    return this.#folders;
  }

  /**
   * Check out `commit` (forced) and remove every untracked and ignored file,
   * the dependency folders excepted: what the last checks wrote, and any
   * original test file put back, is gone; the dependency folders are put
   * back as they were copied ({@linkcode CheckWorktree.resetDependencies}).
   *
   * @param commit The commit.
   * @returns Undefined, or why git failed.
   */
  async moveTo(commit: string): Promise<string | undefined> {
    this.#finding = undefined;
    const checkout = await this.#objects.checkout(commit);
    if (checkout) return checkout;
    this.#commit = commit;
    const moved = await this.#settle(commit);
    if (moved) return moved;
    // Last, so that nothing written after it reaches the checks unseen.
    this.#finding = await this.#objects.verify(commit);
    return this.#finding;
  }

  /**
   * Between two checks of one claim: every tracked file that is not its
   * commit's put back, every untracked file in the tree removed (ignored ones
   * too: an ignore rule the last run wrote hides nothing), the dependency
   * folders put back as they were copied. So no check's run changes the code
   * or the configuration a later one tests. Kept for the next check: the
   * build seed's folders in the tree (Cargo's `target`) and the build
   * folders beside it, with what the last check built in them.
   *
   * @returns Undefined, or why the tree could not be put back.
   */
  async restoreTree(): Promise<string | undefined> {
    return await this.#objects.restore(this.#commit) ??
      await this.#cleanTree(this.#seed?.entries ?? []) ??
      await this.resetDependencies();
  }

  /** After a checkout: what the last checks wrote goes, the seed comes in. */
  async #settle(commit: string): Promise<string | undefined> {
    // A seed planted ahead is kept through the clean, and used if it is as it was listed.
    const planted = this.#planted;
    this.#planted = undefined;
    const seed = this.#seed;
    if (planted && seed) {
      const cleaned = await this.#clean(seed.entries);
      if (cleaned) return cleaned;
      if (await seed.intact(this.folder, planted)) {
        if (await settleTimes(this.#objects, seed.commit, commit) === undefined) {
          this.#builds.seeded(seed.entries, seed.commit);
          return await this.resetDependencies();
        }
        // Times that cannot be settled: no seed, and its copy goes.
        this.#seed = undefined;
        return await this.#clean();
      }
    }
    const cleaned = await this.#clean();
    if (cleaned) return cleaned;
    if (this.#seed) await this.#plant(this.#seed);
    else if (this.#timesSince) await settleTimes(this.#objects, this.#timesSince, commit);
    return await this.resetDependencies();
  }

  /**
   * Without a seed, give the tracked files the times a seed would (the fixed
   * time when unchanged since `since`, the move's when changed), now and at
   * every move: make then sees the files a release ships made from others
   * (GNU Hello's info manual from its Texinfo source) as up to date, as in a
   * release, and not older or newer by the order the checkout wrote them in
   * (it would run `makeinfo`, which is rarely installed).
   *
   * @param since The starting commit.
   * @returns Resolves once done; a failure leaves the checkout's times.
   */
  async keepTimes(since: string): Promise<void> {
    this.#timesSince = since;
    if (!this.#seed) await settleTimes(this.#objects, since, this.#commit);
  }

  /**
   * Put the copied dependency folders back as they were copied: what the
   * last checks wrote there is undone, never compared as anyone's change.
   *
   * @returns Undefined, or why a file could not be put back.
   */
  async resetDependencies(): Promise<string | undefined> {
    return await this.#dependencies?.reset();
  }

  /**
   * The paths the dependency folders take in the worktree.
   *
   * @returns Paths relative to its root.
   */
  get dependencyPaths(): string[] {
    const installed = [...this.#folders].flatMap(([dir, setup]) =>
      setup.kind === "installed" ? [dir, ...this.#startEntries(dir)] : []
    );
    return [...new Set([...this.#dependencies?.placed ?? [], ...installed])];
  }

  /**
   * Make the worktree ready for the next move while nothing waits for it:
   * what the last checks wrote is removed and the seed, if any, is copied in
   * now and listed ({@linkcode BuildSeed.plantAhead}); the next
   * {@linkcode CheckWorktree.moveTo} uses it if it is still as listed, and
   * copies the seed again if not.
   *
   * @returns Resolves once done; never throws.
   */
  async tidy(): Promise<void> {
    this.#planted = undefined;
    if (await this.#clean().catch(() => "failed")) return;
    const seed = this.#seed;
    if (!seed?.usable) return;
    this.#planted = await seed.plantAhead(this.folder).catch(() => undefined);
  }

  /**
   * `git clean -ffdx`: every untracked and ignored file goes but the
   * dependency folders and the work tree's entries in `kept`; the kept build
   * folders go too, but those in `kept`.
   *
   * @param kept Paths below the copy's folder (`tree/target`, `build/<name>`).
   */
  async #clean(kept: readonly string[] = []): Promise<string | undefined> {
    const cleaned = await this.#cleanTree(kept);
    await this.#builds.clean(kept);
    return cleaned;
  }

  /** Every untracked file of the tree removed, ignored ones too, but the dependency folders and `kept`'s entries in the tree. */
  async #cleanTree(kept: readonly string[]): Promise<string | undefined> {
    const inTree = kept.flatMap((entry) => entry.startsWith("tree/") ? [entry.slice(5)] : []);
    const except = [...this.dependencyPaths, ...inTree].flatMap((entry) => ["-e", `/${entry}`]);
    const cleaned = await this.#git(["clean", "-ffdxq", ...except]);
    return cleaned.code === 0 ? undefined : `cannot clean the worktree: ${cleaned.stderr.trim()}`;
  }

  /**
   * Start from `seed` (the baseline's build output) at this commit and at
   * every move after it: the tracked files' times settled against the
   * seed's commit, the seed copied in ({@linkcode BuildSeed.plant}).
   *
   * @param seed The seed.
   * @returns Whether it is in place; a seed found changed is dropped for good.
   */
  async seedWith(seed: BuildSeed): Promise<boolean> {
    this.#seed = seed;
    return await this.#plant(seed);
  }

  /**
   * The build seed the worktree starts from at each move, if any.
   *
   * @returns The seed, or undefined.
   */
  get seed(): BuildSeed | undefined {
    return this.#seed;
  }

  /**
   * Start from no seed from the next move on (the seed itself is kept).
   */
  unseed(): void {
    this.#seed = undefined;
    this.#planted = undefined;
  }

  /**
   * The seed a build folder falls back to when the work tree's build
   * definitions are not the planted seed's but are this one's: the
   * baseline's, under a claim's seed, for the run with the starting
   * commit's files put back ({@linkcode CheckWorktree.restore}).
   *
   * @param seed The seed, or undefined for none.
   */
  fallBackTo(seed: BuildSeed | undefined): void {
    this.#fallback = seed;
  }

  /** The fallback seed, as {@linkcode BuildFolders.ready} takes it, when it can be planted here. */
  #fallbackSeed(): { commit: string; plant: (entry: string) => Promise<boolean> } | undefined {
    const seed = this.#fallback;
    if (!seed?.usable || seed === this.#seed || !seed.plantsIn(this.folder)) return undefined;
    return {
      commit: seed.commit,
      // The files on disk that differ from its commit are dated now: the tool rebuilds them.
      plant: async (entry) =>
        await settleTimes(this.#objects, seed.commit, null) === undefined &&
        await seed.plant(this.folder, [entry]),
    };
  }

  /**
   * Whether the worktree starts from a build seed.
   *
   * @returns False without one, or once it was dropped.
   */
  get seeded(): boolean {
    return this.#seed?.usable ?? false;
  }

  async #plant(seed: BuildSeed): Promise<boolean> {
    const planted = seed.usable &&
      await settleTimes(this.#objects, seed.commit, this.#commit) === undefined &&
      await seed.plant(this.folder);
    if (!planted) this.#seed = undefined;
    else this.#builds.seeded(seed.entries, seed.commit);
    return planted;
  }

  /**
   * Move what the checks built in this copy aside as the run's build seed
   * ({@linkcode BuildSeed.take}): Cargo's entries of the work tree, and the
   * build folders `checks` kept here. Those record this copy's folder: that
   * seed is planted here only.
   *
   * @param commit The commit the checks ran on.
   * @param options The work tree's Cargo entries (`seedEntries`), the checks whose build
   * folders are taken ({@linkcode CheckWorktree.builtFolders}), the run that owns the seed,
   * and the time no file of it may be dated after ({@linkcode BuildSeed.take}).
   * @returns The seed, or undefined when there is nothing to take or too much.
   */
  async takeSeed(
    commit: string,
    options: {
      cargo: string[];
      checks: RepoCheck[];
      owner?: { repo: string; run: string };
      notAfter?: number;
    },
  ): Promise<BuildSeed | undefined> {
    const builds = await Promise.all(
      options.checks.flatMap((check) => check.buildFolder ? [buildEntry(check)] : []),
    );
    const entries = [...options.cargo.map((entry) => `tree/${entry}`), ...builds];
    if (entries.length === 0) return undefined;
    return await BuildSeed.take(this.folder, commit, entries, {
      ...(options.owner ? { owner: options.owner } : {}),
      ...(options.notAfter !== undefined ? { notAfter: options.notAfter } : {}),
      bound: builds.length > 0,
    });
  }

  /**
   * The checks of `runs` whose kept build folders are worth a seed: a
   * green run's, and a red one's whose configure step completed (its tests
   * failed, or its build did: what was built is the commit's build all the
   * same, and the build tool makes what is missing). A run that timed out or
   * was stopped may have left a file half written: not taken.
   *
   * @param checks The checks.
   * @param runs Their runs in this copy.
   * @returns The checks whose folders can be taken ({@linkcode CheckWorktree.takeSeed}).
   */
  async builtFolders(checks: RepoCheck[], runs: CheckRun[]): Promise<RepoCheck[]> {
    const built: RepoCheck[] = [];
    for (const check of checks) {
      const run = runs.find((run) => run.name === check.name);
      if (!check.buildFolder || !run || run.timedOut) continue;
      const dir = path.join(this.folder, await buildEntry(check));
      if (run.green || await isConfigured(check.buildFolder, dir)) built.push(check);
    }
    return built;
  }

  /**
   * The kept build folder of `check` (beside the work tree, out of the
   * commit's reach), made if missing: what `FINISHLINE_BUILD_DIR` names for
   * it. A folder that holds the seed's copy is emptied first when the work
   * tree's build definitions are not the seed's commit's (the commit changed
   * them, or a file put back or added did): its configure step's choices
   * would not be a fresh configure's, so the check builds from nothing.
   *
   * @param check The check.
   * @returns The folder, or undefined for a check that keeps none.
   */
  async buildFolder(check: RepoCheck): Promise<string | undefined> {
    return (await this.#builds.ready(check, this.#fallbackSeed()))?.dir;
  }

  /**
   * Ready the kept build folders of `checks` ({@linkcode CheckWorktree.buildFolder})
   * and tell which held the seed's copy and were emptied, with the build
   * definitions that differ from the seed's commit.
   *
   * @param checks The checks.
   * @returns The emptied ones: each check's name, its build system and the files.
   */
  async readyBuildFolders(checks: RepoCheck[]): Promise<DroppedBuild[]> {
    const dropped: DroppedBuild[] = [];
    for (const check of checks) {
      const ready = await this.#builds.ready(check, this.#fallbackSeed());
      if (ready?.dropped) dropped.push(ready.dropped);
    }
    return dropped;
  }

  /**
   * Copy the checkout's dependency folder `dir` (each of its entries: a
   * `node_modules` at the root and in each workspace package) into the
   * worktree as it was at the run's start, in place of one installed there.
   *
   * @param dir The folder's name, e.g. `node_modules`.
   * @returns Undefined once copied, or why it could not be.
   */
  async copyIn(dir: string): Promise<string | undefined> {
    const copy = this.#dependencies;
    if (this.#folders.get(dir)?.kind === "installed") await this.drop(dir);
    const entries = copy?.placed.filter((entry) => folderOf(entry)?.dir === dir) ?? [];
    const wanted = this.#startEntries(dir);
    if (!copy || wanted.length === 0) return undefined;
    if (entries.length === wanted.length) return await copy.reset();
    for (const entry of wanted) {
      const failed = await copy.place(entry);
      if (failed) return failed;
    }
    this.#folders.set(dir, { kind: "copied" });
    return undefined;
  }

  #startEntries(dir: string): string[] {
    return this.#dependencies?.entries.filter((entry) => folderOf(entry)?.dir === dir) ?? [];
  }

  /**
   * Remove a dependency folder from the worktree (the link, or what was
   * installed there).
   *
   * @param dir The folder's name.
   * @returns Resolves once it is gone.
   */
  async drop(dir: string): Promise<void> {
    if (!this.#folders.delete(dir)) return;
    for (const entry of this.#dependencies?.placed ?? []) {
      if (folderOf(entry)?.dir === dir) await this.#dependencies?.remove(entry);
    }
    await Deno.remove(path.join(this.dir, dir), { recursive: true }).catch(() => {});
  }

  /**
   * Install a dependency folder in the worktree with `command` (run at its
   * root), in place of the link; `key` names what was installed, so that the
   * same manifest is not installed twice.
   *
   * @param dir The folder's name.
   * @param command The install command and its executable.
   * @param options What is installed, and the timeout.
   * @returns Undefined once installed; else whether the executable is missing, and the output's tail.
   */
  async install(
    dir: string,
    command: { command: string; executable: string },
    options: { key: string; timeoutMs: number },
  ): Promise<{ missing: boolean; detail: string } | undefined> {
    const current = this.#folders.get(dir);
    if (current?.kind === "installed" && current.key === options.key) return undefined;
    const target = path.join(this.dir, dir);
    this.#folders.set(dir, { kind: "copied" });
    await this.drop(dir);
    const which = await runTool("sh", ["-c", `command -v ${command.executable}`], {
      cwd: this.dir,
      timeoutMs: 10_000,
    });
    if (which.code !== 0) {
      return { missing: true, detail: `"${command.executable}" is not installed or not on PATH` };
    }
    const environment = await checkEnvironment({ pycache: this.pycache, cwd: this.dir });
    // An install runs the claim's scripts (postinstall): what they leave running is stopped, as
    // after a check, so that nothing writes into the copy while the checks run.
    const tag = crypto.randomUUID();
    const result = await runShell(command.command, {
      cwd: this.dir,
      timeoutMs: options.timeoutMs,
      env: { ...environment.env, NO_COLOR: "1", [CHECK_TAG]: tag },
    }).finally(async () => {
      await stopTagged(CHECK_TAG, tag, { graceMs: 500 });
      await environment.dispose();
    });
    if (result.code !== 0 || result.timedOut) {
      await Deno.remove(target, { recursive: true }).catch(() => {});
      const tail = result.combined.trimEnd().split("\n").slice(-12).join("\n");
      return {
        missing: result.code === MISSING_CODE,
        detail: `\`${command.command}\` ${
          result.timedOut ? "timed out" : `exited with code ${result.code}`
        }${tail ? `; last lines of its output:\n${tail}` : ""}`,
      };
    }
    this.#folders.set(dir, { kind: "installed", key: options.key, command: command.command });
    return undefined;
  }

  /**
   * Put back the versions of `paths` that `from` holds (the original tests).
   *
   * @param from The commit.
   * @param paths Paths relative to the root.
   * @returns Undefined, or why git failed.
   */
  async restore(from: string, paths: string[]): Promise<string | undefined> {
    if (paths.length === 0) return undefined;
    const fetched = await this.#objects.fetch([from]);
    if (fetched) return fetched;
    // --no-overlay: a file the agent added under a restored path is removed too.
    const restored = await this.#git([
      "checkout",
      "--no-overlay",
      from,
      "--",
      ...paths.map((file) => `:(literal)${file}`),
    ]);
    if (restored.code !== 0) return `cannot restore the original files: ${restored.stderr.trim()}`;
    // What was put back is the starting commit's, as git's objects hold it.
    const present: string[] = [];
    for (const file of paths) {
      if (await Deno.lstat(path.join(this.dir, file)).catch(() => undefined)) present.push(file);
    }
    this.#finding = present.length > 0 ? await this.#objects.verify(from, present) : undefined;
    return this.#finding;
  }

  /**
   * Run checks in the worktree, in order.
   *
   * @param checks The checks.
   * @param options Timeout of each, a signal that stops them, whether they
   * run at low priority, and who is told when each starts and ends.
   * @returns Each check's run; fewer when the signal stopped them.
   */
  async run(
    checks: RepoCheck[],
    options: {
      timeoutMs: number;
      signal?: AbortSignal;
      nice?: boolean;
      onCheck?: (name: string, running: boolean) => void;
    },
  ): Promise<CheckRun[]> {
    const runs: CheckRun[] = [];
    for (const check of checks) {
      if (options.signal?.aborted) break;
      options.onCheck?.(check.name, true);
      try {
        runs.push(
          await runRepoCheck(options.nice ? lowPriority(check) : check, {
            cwd: this.dir,
            timeoutMs: options.timeoutMs,
            signal: options.signal,
            pycache: this.pycache,
            buildDir: await this.buildFolder(check),
          }),
        );
      } finally {
        options.onCheck?.(check.name, false);
      }
    }
    return runs;
  }

  /**
   * Remove the worktree and its folder; never throws.
   *
   * @returns Resolves once it is gone from `git worktree list`.
   */
  async remove(): Promise<void> {
    await this.#ownSnapshot?.stop();
    await this.#objects.remove();
  }

  async #git(args: string[]) {
    return await this.#objects.exec(args);
  }
}

/** The check at `nice -n 10`: it yields the machine to the agent's session. */
function lowPriority(check: RepoCheck): RepoCheck {
  const quoted = `'${check.command.replaceAll("'", "'\\''")}'`;
  return { ...check, command: `exec nice -n 10 sh -c ${quoted}` };
}
