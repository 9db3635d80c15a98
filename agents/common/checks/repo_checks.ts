/**
 * The repository's own checks as the gate of "done": run once on the
 * starting commit (the baseline, in a detached worktree beside the first
 * session), then on the final state. A check green at the baseline must stay
 * green; a red one must turn green unless the agent declares it out of scope;
 * changed test files must still pass in their original versions, or be
 * declared.
 *
 * @module
 */

import path from "node:path";
import type { CheckEvidence, ChecksEvidence, CompleteTaskCall } from "../completion/types.ts";
import type { GitRepo } from "../git.ts";
import { runShell, runTool } from "../process.ts";
import { parseTestReport, type TestRunner, testsRun } from "./test_report.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./types.ts";

/** One check of the repository: a shell command that passes when it exits 0. */
export interface RepoCheck {
  /** Its name (usually the command). */
  name: string;
  /** The shell command, run at the repository root. */
  command: string;
  /** The test runner whose output names failing tests, when known. */
  runner?: TestRunner;
}

/** One run of a check. */
export interface CheckRun {
  /** The check's name. */
  name: string;
  /** Whether it exited 0 within its timeout. */
  green: boolean;
  /** Exit code. */
  code: number;
  /** Whether it was stopped at its timeout. */
  timedOut: boolean;
  /** Failing tests named by the output. */
  failing: string[];
  /** Tests that ran, when the output says. */
  testsRun?: number;
  /** Wall time in milliseconds. */
  durationMs: number;
  /** The last lines of its output. */
  tail: string;
}

/** The checks on the starting commit. */
export interface BaselineResult {
  /** The commit they ran on. */
  commit: string;
  /** Each check's run, in order. */
  runs: CheckRun[];
  /** Wall time of the whole baseline in milliseconds, worktree included. */
  durationMs: number;
  /** Why the baseline could not run, when it could not. */
  error?: string;
}

/** Folders of installed dependencies that a fresh worktree lacks: linked from the checkout. */
const DEPENDENCY_DIRS = ["node_modules", ".venv", "venv"];

/** Lines of output kept in a run's tail. */
const TAIL_LINES = 25;

/**
 * Run one check and read its output for failing tests.
 *
 * @param check The check.
 * @param options Folder and timeout.
 * @returns The run.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runRepoCheck } from "@finishline/agents";
 *
 * const run = await runRepoCheck(
 *   { name: "tests", command: "echo 'not ok 1 - adds'; exit 1" },
 *   { cwd: ".", timeoutMs: 10_000 },
 * );
 * assert.equal(run.green, false);
 * assert.equal(run.code, 1);
 * assert.match(run.tail, /not ok 1 - adds/);
 * ```
 */
export async function runRepoCheck(
  check: RepoCheck,
  options: { cwd: string; timeoutMs: number; signal?: AbortSignal },
): Promise<CheckRun> {
  const started = performance.now();
  const result = await runShell(check.command, {
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    // Runners colour and animate less without a terminal; CI=true makes jest/vitest print plainly.
    env: { CI: "true", NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  const report = parseTestReport(result.combined, check.runner);
  const green = result.code === 0 && !result.timedOut;
  return {
    name: check.name,
    green,
    code: result.code,
    timedOut: result.timedOut,
    failing: green ? [] : report.failed,
    testsRun: testsRun(report),
    durationMs: Math.round(performance.now() - started),
    tail: result.combined.trimEnd().split("\n").slice(-TAIL_LINES).join("\n"),
  };
}

/**
 * Run checks in a detached worktree of `commit`, with the checkout's
 * dependency folders (`node_modules`, `.venv`) linked in, then remove it.
 * Never throws: a failure to make the worktree is the result's `error`.
 *
 * @param repo The repository.
 * @param commit The commit to check out.
 * @param options The checks, the timeout of each, and files to restore from `restoreFrom`.
 * @returns Each check's run.
 */
export async function runInWorktree(
  repo: GitRepo,
  commit: string,
  options: {
    checks: RepoCheck[];
    timeoutMs: number;
    restore?: { from: string; paths: string[] };
    signal?: AbortSignal;
  },
): Promise<BaselineResult> {
  const started = performance.now();
  const dir = await Deno.makeTempDir({ prefix: "finishline-checks-" });
  const finished = (runs: CheckRun[], error?: string): BaselineResult => ({
    commit,
    runs,
    durationMs: Math.round(performance.now() - started),
    ...(error ? { error } : {}),
  });
  const added = await repo.exec(["worktree", "add", "--detach", "--quiet", dir, commit]);
  try {
    if (added.code !== 0) {
      return finished(
        [],
        `cannot make a worktree of ${commit.slice(0, 12)}: ${added.stderr.trim()}`,
      );
    }
    for (const name of DEPENDENCY_DIRS) {
      const source = path.join(repo.root, name);
      const target = path.join(dir, name);
      if (await isDirectory(source) && !(await exists(target))) {
        await Deno.symlink(source, target).catch(() => {});
      }
    }
    if (options.restore && options.restore.paths.length > 0) {
      const restored = await runTool(
        "git",
        ["checkout", options.restore.from, "--", ...options.restore.paths],
        { cwd: dir, timeoutMs: 30_000 },
      );
      if (restored.code !== 0) {
        return finished([], `cannot restore the original files: ${restored.stderr.trim()}`);
      }
    }
    const runs: CheckRun[] = [];
    for (const check of options.checks) {
      if (options.signal?.aborted) return finished(runs, "stopped before it finished");
      runs.push(
        await runRepoCheck(check, {
          cwd: dir,
          timeoutMs: options.timeoutMs,
          signal: options.signal,
        }),
      );
    }
    if (options.signal?.aborted) return finished(runs, "stopped before it finished");
    return finished(runs);
  } finally {
    await repo.exec(["worktree", "remove", "--force", dir]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await repo.exec(["worktree", "prune"]);
  }
}

/**
 * The tree of the working tree as it is, uncommitted and untracked (not
 * ignored) files included, written through a temporary index so that neither
 * the files nor the real index change. Equal trees mean equal contents.
 *
 * @param repo The repository.
 * @returns The tree and the HEAD it sits on, or undefined when git failed.
 */
export async function snapshotTree(
  repo: GitRepo,
): Promise<{ tree: string; head: string | undefined } | undefined> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-index-" });
  try {
    const env = { GIT_INDEX_FILE: path.join(dir, "index") };
    const git = (args: string[]) =>
      runTool("git", args, { cwd: repo.root, env, timeoutMs: 60_000 });
    const head = (await git(["rev-parse", "--verify", "-q", "HEAD"])).stdout.trim() || undefined;
    if (head) await git(["read-tree", head]);
    if ((await git(["add", "-A"])).code !== 0) return undefined;
    const tree = await git(["write-tree"]);
    return tree.code === 0 ? { tree: tree.stdout.trim(), head } : undefined;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * A commit of the working tree as it is (see {@linkcode snapshotTree}),
 * parented on HEAD; no branch points at it.
 *
 * @param repo The repository.
 * @returns The commit, or undefined when git failed.
 */
export async function snapshotCommit(repo: GitRepo): Promise<string | undefined> {
  const snapshot = await snapshotTree(repo);
  if (!snapshot) return undefined;
  const commit = await runTool("git", [
    "-c",
    "user.name=finishline",
    "-c",
    "user.email=finishline@localhost",
    "commit-tree",
    snapshot.tree,
    ...(snapshot.head ? ["-p", snapshot.head] : []),
    "-m",
    "finishline: snapshot of the working tree",
  ], { cwd: repo.root, timeoutMs: 60_000 });
  return commit.code === 0 ? commit.stdout.trim() : undefined;
}

/**
 * Protected files (tests, check configuration) that differ between `base`
 * and the working tree: modified or deleted, never merely added.
 *
 * @param repo The repository.
 * @param base The starting commit.
 * @param options Globs of protected files and exact paths of configuration files.
 * @returns The changed paths, relative to the repository root.
 */
export async function changedProtectedFiles(
  repo: GitRepo,
  base: string,
  options: { protect: string[]; configFiles: string[] },
): Promise<Array<{ path: string; change: "modified" | "deleted" }>> {
  const diff = await repo.exec(["diff", "--name-status", "--no-renames", "-z", base, "--"]);
  if (diff.code !== 0) return [];
  const fields = diff.stdout.split("\0").filter((field) => field !== "");
  const changed: Array<{ path: string; change: "modified" | "deleted" }> = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const status = fields[index];
    const file = fields[index + 1];
    if (status !== "M" && status !== "D" && status !== "T") continue;
    if (!isProtected(file, options)) continue;
    changed.push({ path: file, change: status === "D" ? "deleted" : "modified" });
  }
  return changed;
}

/**
 * Whether a repository path is one that defines done.
 *
 * @param file Path relative to the repository root.
 * @param options Globs and exact configuration paths.
 * @returns True when protected.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_PROTECTED_GLOBS, isProtected } from "@finishline/agents";
 *
 * const options = { protect: [...DEFAULT_PROTECTED_GLOBS], configFiles: ["package.json"] };
 * assert.equal(isProtected("test/math.test.js", options), true);
 * assert.equal(isProtected("src/math_test.go", options), true);
 * assert.equal(isProtected("package.json", options), true);
 * assert.equal(isProtected("src/math.js", options), false);
 * ```
 */
export function isProtected(
  file: string,
  options: { protect: string[]; configFiles: string[] },
): boolean {
  if (file.startsWith(".agent/")) return false;
  return options.configFiles.includes(file) ||
    options.protect.some((glob) => path.matchesGlob(file, glob));
}

/** Options of {@linkcode RepoChecksChecker}. */
export interface RepoChecksOptions {
  /** The checks. */
  checks: RepoCheck[];
  /** Timeout of one check in milliseconds. @default 600000 */
  timeoutMs?: number;
  /** Globs of the files that define done. @default [] */
  protect?: string[];
  /** Files that define the checks (package.json, ...), protected too. @default [] */
  configFiles?: string[];
}

/**
 * The gate: the repository's checks on the final state, compared with the
 * baseline. Its {@linkcode RepoChecksChecker.evidence} after a check is what
 * the report shows.
 *
 * @example A check that passes with no baseline
 * ```ts
 * import assert from "node:assert/strict";
 * import { RepoChecksChecker } from "@finishline/agents";
 *
 * const gate = new RepoChecksChecker({ checks: [{ name: "true", command: "true" }] });
 * // Outside a repository the checker needs only the working directory.
 * const result = await gate.check({ cwd: Deno.cwd() } as never);
 * assert.equal(result.complete, true);
 * assert.equal(gate.evidence?.checks[0].now, "green");
 * assert.equal(gate.evidence?.checks[0].baseline, "unknown");
 * ```
 */
export class RepoChecksChecker implements TaskCompletionChecker {
  /** The checker's name in feedback. */
  readonly name: string = "checks";
  readonly #checks: RepoCheck[];
  readonly #timeoutMs: number;
  readonly #protect: string[];
  readonly #configFiles: string[];
  #baseline: Promise<BaselineResult> | undefined;
  #stopBaseline = new AbortController();
  #evidence: ChecksEvidence | undefined;
  #last: { key: string; result: TaskCompletionResult; evidence: ChecksEvidence } | undefined;

  /**
   * Create the gate.
   *
   * @param options The checks, their timeout and the protected files.
   */
  constructor(options: RepoChecksOptions) {
    this.#checks = options.checks;
    this.#timeoutMs = options.timeoutMs ?? 600_000;
    this.#protect = options.protect ?? [];
    this.#configFiles = options.configFiles ?? [];
  }

  /**
   * The checks, in order.
   *
   * @returns A copy of the list.
   */
  get checks(): RepoCheck[] {
    return [...this.#checks];
  }

  /**
   * The evidence of the latest check, for the summary and the report.
   *
   * @returns The evidence, or undefined before the first check.
   */
  get evidence(): ChecksEvidence | undefined {
    return this.#evidence;
  }

  /**
   * Start the baseline on `commit` in a detached worktree; it runs while the
   * first session works, and the first verification waits for it.
   *
   * @param repo The repository.
   * @param commit The starting commit.
   * @returns The baseline's promise.
   */
  startBaseline(repo: GitRepo, commit: string): Promise<BaselineResult> {
    this.#baseline = runInWorktree(repo, commit, {
      checks: this.#checks,
      timeoutMs: this.#timeoutMs,
      signal: this.#stopBaseline.signal,
    });
    return this.#baseline;
  }

  /**
   * Stop a baseline still running (the run ended before it was needed) and
   * wait for its worktree to be removed.
   *
   * @returns Resolves once it has stopped.
   */
  async stopBaseline(): Promise<void> {
    this.#stopBaseline.abort();
    await this.#baseline;
  }

  /**
   * The baseline, once it has run.
   *
   * @returns Its result, or undefined when none was started.
   */
  async baseline(): Promise<BaselineResult | undefined> {
    return await this.#baseline;
  }

  /**
   * Run every check on the working tree and compare with the baseline.
   *
   * @param context The working directory, git evidence and complete_task call.
   * @returns Complete when the gate passes, else the feedback for the agent.
   */
  async check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    // The same files and the same declarations give the same verdict: the
    // handler's verdict right after a complete_task check does not run the suite again.
    const snapshot = context.git ? await snapshotTree(context.git.repo) : undefined;
    const key = snapshot
      ? JSON.stringify([
        snapshot.tree,
        context.completeTask?.out_of_scope ?? [],
        context.completeTask?.tests_changed ?? [],
        context.git?.baseline ?? null,
      ])
      : undefined;
    if (key !== undefined && this.#last?.key === key) {
      this.#evidence = structuredClone(this.#last.evidence);
      return this.#last.result;
    }
    const result = await this.#check(context);
    if (key !== undefined && this.#evidence) {
      this.#last = { key, result, evidence: structuredClone(this.#evidence) };
    }
    return result;
  }

  async #check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const declared = declaredOutOfScope(context.completeTask);
    // The checks were detected at the repository's root, and run there.
    const cwd = context.git?.repo.root ?? context.cwd;
    // The final state is checked while a baseline still running finishes; the comparison waits for both.
    const runs: CheckRun[] = [];
    for (const check of this.#checks) {
      runs.push(await runRepoCheck(check, { cwd, timeoutMs: this.#timeoutMs }));
    }
    const started = await this.#baseline;
    // A baseline that could not run compares as none.
    const baseline = started?.error ? undefined : started;
    const evidence: ChecksEvidence = {
      passed: false,
      checks: [],
      outOfScope: [],
      testsChanged: [],
    };
    const problems: string[] = [];
    const git = context.git;
    const base = baseline?.commit ?? git?.baseline ?? undefined;
    const changed = git && base
      ? await changedProtectedFiles(git.repo, base, {
        protect: this.#protect,
        configFiles: this.#configFiles,
      })
      : [];
    const reasons = new Map(
      (context.completeTask?.tests_changed ?? []).map((entry) => [entry.path, entry.reason]),
    );
    evidence.testsChanged = changed.map((entry) => ({
      ...entry,
      ...(reasons.get(entry.path)?.trim() ? { reason: reasons.get(entry.path)!.trim() } : {}),
    }));
    const undeclared = evidence.testsChanged.filter((entry) => !entry.reason);
    for (const [index, check] of this.#checks.entries()) {
      const before = baseline?.runs.find((run) => run.name === check.name);
      let run = runs[index];
      let flaky = false;
      if (!run.green && before?.green && !run.timedOut) {
        // A check that passed before the run and fails once may be flaky: ask it again.
        const again = await runRepoCheck(check, { cwd, timeoutMs: this.#timeoutMs });
        if (again.green) flaky = true;
        run = again;
      }
      const record: CheckEvidence = {
        name: check.name,
        baseline: before ? (before.green ? "green" : "red") : "unknown",
        now: run.green ? "green" : "red",
        failing: run.failing,
        ...(before && !before.green ? { baselineFailing: before.failing } : {}),
        ...(run.testsRun !== undefined ? { testsRun: run.testsRun } : {}),
        ...(before?.testsRun !== undefined ? { baselineTestsRun: before.testsRun } : {}),
        durationMs: run.durationMs,
        ...(flaky ? { flaky } : {}),
      };
      evidence.checks.push(record);
      if (!run.green) {
        const reason = declared.get(check.name);
        if (before?.green) {
          problems.push(
            `"${check.name}" passed before your changes and fails now${describeRun(run)}`,
          );
        } else if (reason && newFailures(run, before).length > 0) {
          // The declaration covers the failures that were there before, not new ones.
          const fresh = newFailures(run, before);
          problems.push(
            `"${check.name}" was declared out of scope, but it now also fails in ${
              fresh.slice(0, 10).map((name) => `"${name}"`).join(", ")
            }, which ${fresh.length === 1 ? "was" : "were"} not failing before your changes: fix ${
              fresh.length === 1 ? "it" : "them"
            }${describeRun(run)}`,
          );
        } else if (reason) {
          evidence.outOfScope.push({ check: check.name, reason });
        } else {
          problems.push(
            `"${check.name}" fails${
              before
                ? " (it failed before your changes too: fix it, or, if it is outside this task, declare it in complete_task out_of_scope with a reason)"
                : ""
            }${describeRun(run)}`,
          );
        }
      }
      if (
        before?.testsRun !== undefined && run.testsRun !== undefined &&
        run.testsRun < before.testsRun
      ) {
        if (undeclared.length > 0 || changed.length === 0) {
          problems.push(
            `"${check.name}" ran ${run.testsRun} tests, fewer than the ${before.testsRun} before your changes${
              undeclared.length > 0
                ? `; you changed ${
                  undeclared.map((entry) => `"${entry.path}" (${entry.change})`).join(", ")
                }: restore ${
                  undeclared.length === 1 ? "it" : "them"
                }, or declare each change in complete_task tests_changed with a reason`
                : ": tests that ran before are skipped or no longer found; make every one of them run again"
            }`,
          );
        }
      }
    }
    if (problems.length === 0 && git && base && changed.length > 0) {
      const originals = await this.#originals(git.repo, base, changed, declared);
      evidence.originalsPass = originals.passed;
      if (!originals.passed && undeclared.length > 0) {
        problems.push(
          `You changed ${
            undeclared.map((entry) => `"${entry.path}" (${entry.change})`).join(", ")
          }, which define when the task is done, and the original versions fail against your code${originals.detail}. Restore them and fix the code, or declare each change in complete_task tests_changed with a reason`,
        );
      }
    }
    evidence.passed = problems.length === 0;
    this.#evidence = evidence;
    if (problems.length > 0) return incomplete(problems.join("\n\n"));
    const passed = evidence.checks.filter((check) => check.now === "green").map((check) =>
      `"${check.name}"${check.flaky ? " (after a retry: it failed once)" : ""}`
    );
    const parts = passed.length > 0 ? [`${passed.join(", ")} passed`] : [];
    for (const entry of evidence.outOfScope) {
      parts.push(`"${entry.check}" still fails, declared out of scope: ${entry.reason}`);
    }
    return ok(parts.join("; ") || "no checks ran");
  }

  /** Run the checks on the working tree with the original test files put back. */
  async #originals(
    repo: GitRepo,
    base: string,
    changed: Array<{ path: string }>,
    outOfScope: Map<string, string>,
  ): Promise<{ passed: boolean; detail: string }> {
    const snapshot = await snapshotCommit(repo);
    if (!snapshot) return { passed: false, detail: " (finishline could not snapshot the tree)" };
    const result = await runInWorktree(repo, snapshot, {
      checks: this.#checks.filter((check) => !outOfScope.has(check.name)),
      timeoutMs: this.#timeoutMs,
      restore: { from: base, paths: changed.map((entry) => entry.path) },
    });
    if (result.error) return { passed: false, detail: ` (${result.error})` };
    const failed = result.runs.find((run) => !run.green);
    return failed
      ? { passed: false, detail: `: "${failed.name}"${describeRun(failed)}` }
      : { passed: true, detail: "" };
  }
}

function declaredOutOfScope(call: CompleteTaskCall | undefined): Map<string, string> {
  const declared = new Map<string, string>();
  for (const entry of call?.out_of_scope ?? []) {
    if (entry?.check && entry.reason?.trim()) declared.set(entry.check, entry.reason.trim());
  }
  return declared;
}

/**
 * The exit, the failing tests and the output's last lines of a run, as a
 * clause for feedback.
 *
 * @param run The run.
 * @returns Text starting with "; ".
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeRun } from "@finishline/agents";
 *
 * const text = describeRun({
 *   name: "npm test", green: false, code: 1, timedOut: false,
 *   failing: ["adds"], durationMs: 5, tail: "not ok 1 - adds",
 * });
 * assert.equal(text, '; it exited with code 1; failing tests: "adds". Last lines of its output:\nnot ok 1 - adds');
 * ```
 */
export function describeRun(run: CheckRun): string {
  const parts: string[] = [];
  if (run.timedOut) parts.push(`; it timed out`);
  else parts.push(`; it exited with code ${run.code}`);
  if (run.failing.length > 0) {
    const shown = run.failing.slice(0, 10).map((name) => `"${name}"`).join(", ");
    parts.push(
      `; failing tests: ${shown}${
        run.failing.length > 10 ? ` and ${run.failing.length - 10} more` : ""
      }`,
    );
  }
  const tail = run.tail.split("\n").slice(-12).join("\n");
  parts.push(tail ? `. Last lines of its output:\n${tail}` : ". It printed nothing");
  return parts.join("");
}

async function exists(file: string): Promise<boolean> {
  try {
    await Deno.lstat(file);
    return true;
  } catch {
    return false;
  }
}

async function isDirectory(file: string): Promise<boolean> {
  try {
    return (await Deno.stat(file)).isDirectory;
  } catch {
    return false;
  }
}

/** Tests failing now that were not failing at the baseline (none known without a baseline). */
function newFailures(run: CheckRun, before: CheckRun | undefined): string[] {
  if (!before) return [];
  const earlier = new Set(before.failing);
  return run.failing.filter((name) => !earlier.has(name));
}
