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

import type { CheckEvidence, ChecksEvidence, CompleteTaskCall } from "../completion/types.ts";
import type { GitRepo } from "../git.ts";
import { type CheckRun, describeRun, type RepoCheck, runRepoCheck } from "./check_run.ts";
import { changedProtectedFiles } from "./protected_files.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./types.ts";
import {
  type BaselineResult,
  runInWorktree,
  snapshotCommit,
  snapshotTree,
} from "./worktree_run.ts";

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
    const git = context.git;
    const base = baseline?.commit ?? git?.baseline ?? undefined;
    const evidence: ChecksEvidence = {
      passed: false,
      checks: [],
      outOfScope: [],
      testsChanged: await this.#changedTests(context, base),
    };
    const undeclared = evidence.testsChanged.filter((entry) => !entry.reason);
    const problems: string[] = [];
    for (const [index, check] of this.#checks.entries()) {
      const before = baseline?.runs.find((run) => run.name === check.name);
      const { run, flaky } = await this.#settle(check, runs[index], before, cwd);
      evidence.checks.push(checkEvidence(run, before, flaky));
      const judged = judgeRun(run, before, declared.get(check.name));
      if (judged.problem) problems.push(judged.problem);
      if (judged.outOfScope) evidence.outOfScope.push(judged.outOfScope);
      const fewer = fewerTests(run, before, undeclared, evidence.testsChanged.length);
      if (fewer) problems.push(fewer);
    }
    if (problems.length === 0 && git && base && evidence.testsChanged.length > 0) {
      const originals = await this.#originals(git.repo, base, evidence.testsChanged, declared);
      evidence.originalsPass = originals.passed;
      if (!originals.passed && undeclared.length > 0) {
        problems.push(
          `You changed ${
            listChanges(undeclared)
          }, which define when the task is done, and the original versions fail against your code${originals.detail}. Restore them and fix the code, or declare each change in complete_task tests_changed with a reason`,
        );
      }
    }
    evidence.passed = problems.length === 0;
    this.#evidence = evidence;
    return problems.length > 0 ? incomplete(problems.join("\n\n")) : ok(passedText(evidence));
  }

  /** Protected files the agent changed since `base`, with the reasons it declared. */
  async #changedTests(
    context: TaskCompletionContext,
    base: string | undefined,
  ): Promise<ChecksEvidence["testsChanged"]> {
    if (!context.git || !base) return [];
    const changed = await changedProtectedFiles(context.git.repo, base, {
      protect: this.#protect,
      configFiles: this.#configFiles,
    });
    const reasons = new Map(
      (context.completeTask?.tests_changed ?? []).map((
        entry,
      ) => [entry.path, entry.reason?.trim()]),
    );
    return changed.map((entry) => {
      const reason = reasons.get(entry.path);
      return reason ? { ...entry, reason } : entry;
    });
  }

  /** A check that passed before the run and fails once may be flaky: it is asked again. */
  async #settle(
    check: RepoCheck,
    run: CheckRun,
    before: CheckRun | undefined,
    cwd: string,
  ): Promise<{ run: CheckRun; flaky: boolean }> {
    if (run.green || !before?.green || run.timedOut) return { run, flaky: false };
    const again = await runRepoCheck(check, { cwd, timeoutMs: this.#timeoutMs });
    return { run: again, flaky: again.green };
  }

  /** Run the checks on the working tree with the original test files put back. */
  async #originals(
    repo: GitRepo,
    base: string,
    changed: Array<{ path: string; from?: string }>,
    outOfScope: Map<string, string>,
  ): Promise<{ passed: boolean; detail: string }> {
    const snapshot = await snapshotCommit(repo);
    if (!snapshot) return { passed: false, detail: " (finishline could not snapshot the tree)" };
    const result = await runInWorktree(repo, snapshot, {
      checks: this.#checks.filter((check) => !outOfScope.has(check.name)),
      timeoutMs: this.#timeoutMs,
      restore: {
        from: base,
        // A rename is undone by putting back the old path and removing the new one.
        paths: changed.flatMap((entry) => entry.from ? [entry.from, entry.path] : [entry.path]),
      },
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

/** Tests failing now that were not failing at the baseline (none known without a baseline). */
function newFailures(run: CheckRun, before: CheckRun | undefined): string[] {
  if (!before) return [];
  const earlier = new Set(before.failing);
  return run.failing.filter((name) => !earlier.has(name));
}

/** A check's run now, against its run at the baseline. */
function checkEvidence(run: CheckRun, before: CheckRun | undefined, flaky: boolean): CheckEvidence {
  return {
    name: run.name,
    baseline: before ? (before.green ? "green" : "red") : "unknown",
    now: run.green ? "green" : "red",
    failing: run.failing,
    ...(before && !before.green ? { baselineFailing: before.failing } : {}),
    ...(run.testsRun !== undefined ? { testsRun: run.testsRun } : {}),
    ...(before?.testsRun !== undefined ? { baselineTestsRun: before.testsRun } : {}),
    durationMs: run.durationMs,
    ...(flaky ? { flaky } : {}),
  };
}

/**
 * The gate's rules for one red check: green at the baseline must stay green;
 * red must turn green unless declared out of scope, and the declaration
 * covers only the failures that were there before.
 */
function judgeRun(
  run: CheckRun,
  before: CheckRun | undefined,
  declaredReason: string | undefined,
): { problem?: string; outOfScope?: { check: string; reason: string } } {
  if (run.green) return {};
  const name = run.name;
  if (before?.green) {
    return { problem: `"${name}" passed before your changes and fails now${describeRun(run)}` };
  }
  const fresh = newFailures(run, before);
  if (declaredReason && fresh.length > 0) {
    return {
      problem: `"${name}" was declared out of scope, but it now also fails in ${
        fresh.slice(0, 10).map((test) => `"${test}"`).join(", ")
      }, which ${fresh.length === 1 ? "was" : "were"} not failing before your changes: fix ${
        fresh.length === 1 ? "it" : "them"
      }${describeRun(run)}`,
    };
  }
  if (declaredReason) return { outOfScope: { check: name, reason: declaredReason } };
  return {
    problem: `"${name}" fails${
      before
        ? " (it failed before your changes too: fix it, or, if it is outside this task, declare it in complete_task out_of_scope with a reason)"
        : ""
    }${describeRun(run)}`,
  };
}

/** Fewer tests than at the baseline is never silent: undeclared test changes or skips fail. */
function fewerTests(
  run: CheckRun,
  before: CheckRun | undefined,
  undeclared: ChecksEvidence["testsChanged"],
  changedCount: number,
): string | undefined {
  if (before?.testsRun === undefined || run.testsRun === undefined) return undefined;
  if (run.testsRun >= before.testsRun) return undefined;
  if (undeclared.length === 0 && changedCount > 0) return undefined;
  return `"${run.name}" ran ${run.testsRun} tests, fewer than the ${before.testsRun} before your changes${
    undeclared.length > 0
      ? `; you changed ${listChanges(undeclared)}: restore ${
        undeclared.length === 1 ? "it" : "them"
      }, or declare each change in complete_task tests_changed with a reason`
      : ": tests that ran before are skipped or no longer found; make every one of them run again"
  }`;
}

function listChanges(changes: ChecksEvidence["testsChanged"]): string {
  return changes.map((entry) =>
    `"${entry.path}" (${entry.change}${entry.from ? ` from "${entry.from}"` : ""}${
      entry.why ? `, ${entry.why}` : ""
    })`
  ).join(", ");
}

/** What a passing gate tells the agent. */
function passedText(evidence: ChecksEvidence): string {
  const passed = evidence.checks.filter((check) => check.now === "green").map((check) =>
    `"${check.name}"${check.flaky ? " (after a retry: it failed once)" : ""}`
  );
  const parts = passed.length > 0 ? [`${passed.join(", ")} passed`] : [];
  for (const entry of evidence.outOfScope) {
    parts.push(`"${entry.check}" still fails, declared out of scope: ${entry.reason}`);
  }
  return parts.join("; ") || "no checks ran";
}
