/**
 * One claim's run of the checks in the clean copy: the copy made ready, the
 * last claim's failing tests re-run first, the per-claim checks (and the
 * final ones when due), the baseline they compare with, the protected files
 * the claim changed, a second run of what may be flaky, and the gate's rules
 * on every run. The later phases (findings, review) add to what it finds.
 *
 * @module
 */

import type { ChecksEvidence } from "../record/iteration.ts";
import type { TaskCompletionContext, TaskCompletionResult } from "../checks/checker_contract.ts";
import type { CheckRun, RepoCheck } from "./run/check_run.ts";
import type { CheckWorktree } from "./copy/worktree_run.ts";
import { changedProtectedFiles } from "./judge/protected_files.ts";
import { type RedTestChange, redTestChanges } from "./judge/red_tests.ts";
import { finalDue, splitTiers } from "./detect/check_tier.ts";
import { type BaselineView, declaredOutOfScope, judgeAll } from "./_rules.ts";
import { STOPPED } from "./_feedback.ts";
import type { Claim, GateState } from "./_gate_state.ts";
import { dependencyFeedback } from "./_run_start.ts";
import { baselineViews } from "./_baseline.ts";
import { cleanCopy } from "./_clean_copy.ts";
import { rerunFailed } from "./_rerun.ts";

/** A claim's checks once they ran and the rules judged them: what the later phases add to. */
export interface ClaimRun {
  /** The working directory, git evidence and complete_task call. */
  context: TaskCompletionContext;
  /** The claim, or undefined outside a repository. */
  claim: Claim | undefined;
  /** What the agent is told about the dependency folders. */
  notes: string[];
  /** The evidence's facts so far: the commit, the setup time, the notes. */
  facts: Partial<ChecksEvidence>;
  /** The clean copy the checks ran in, when there is one. */
  copy: CheckWorktree | undefined;
  /** The run's signal: it stops the checks. */
  signal: AbortSignal | undefined;
  /** The checks declared out of scope, with their reasons. */
  declared: Map<string, string>;
  /** The commit the claim is compared with. */
  base: string | undefined;
  /** The baseline runs the claim is compared with. */
  views: Map<string, BaselineView>;
  /** The protected files the claim changed, and the red tests changed inside other files. */
  testsChanged: ChecksEvidence["testsChanged"];
  /** The red tests changed inside other files, with their original bodies. */
  splices: RedTestChange[];
  /** The changed protected files with no reason declared. */
  undeclared: ChecksEvidence["testsChanged"];
  /** Each check's run, after a second run of what may be flaky. */
  settled: Array<{ run: CheckRun; flaky: boolean }>;
  /** The checks accepted as out of scope. */
  outOfScope: ChecksEvidence["outOfScope"];
  /** The evidence so far. */
  evidence: ChecksEvidence;
  /** What the agent must fix, so far. */
  problems: string[];
}

/**
 * Run the claim's checks and judge them by the gate's rules, or refuse the
 * claim before that (the clean copy cannot be made, a re-run test still
 * fails, the run is ending).
 */
export async function runClaim(
  state: GateState,
  context: TaskCompletionContext,
  claim: Claim | undefined,
): Promise<ClaimRun | { refused: TaskCompletionResult }> {
  const declared = declaredOutOfScope(context.completeTask);
  const setupStarted = performance.now();
  const prepared = claim ? await cleanCopy(state, claim, context.signal) : { notes: [] };
  const setupMs = Math.round(performance.now() - setupStarted);
  const notes = prepared.notes;
  const facts: Partial<ChecksEvidence> = {
    ...(claim ? { commit: claim.head, setupMs } : {}),
    ...(notes.length > 0 ? { dependencyNotes: notes } : {}),
  };
  if (prepared.changes) {
    return {
      refused: state.refuse(
        { ...facts, dependencyChanges: prepared.changes },
        dependencyFeedback(prepared.changes, claim!.plans),
      ),
    };
  }
  if (prepared.problem) return { refused: state.refuse(facts, prepared.problem) };
  // Outside a repository there is no commit to copy: the working directory, as it is.
  const copy = prepared.copy;
  const cwd = copy?.dir ?? context.cwd;
  // The run's signal stops the checks: an interrupted run does not wait for its suite.
  const signal = context.signal;
  // What failed at the last claim runs first, alone: the agent hears at once when it still fails.
  const rerun = state.failedLast.size > 0
    ? await rerunFailed(state, cwd, declared, facts, signal)
    : undefined;
  if (rerun?.result) return { refused: rerun.result };
  // The protected files the claim changed are read from the agent's checkout while the
  // checks run in the clean copy (against the baseline's commit, as after them).
  const early = state.baselineCommit ?? context.git?.baseline ?? undefined;
  const changedEarly = changedTests(state, context, early, claim?.head);
  // The final state runs while a baseline still running finishes; the comparison waits for both.
  const runs: CheckRun[] = [];
  const tiers = splitTiers(state.checks, state.final);
  // Each check after the first starts from the commit's files again: a run that rewrote a
  // source or a config file (its own, or the next check's) changes no other check's verdict.
  const runNext = async (check: RepoCheck): Promise<CheckRun> => {
    const restored = runs.length > 0 && copy ? await copy.restoreTree() : undefined;
    if (restored) {
      const tail = `finishline could not put its clean copy back before this check: ${restored}`;
      return {
        name: check.name,
        green: false,
        code: -1,
        timedOut: false,
        failing: [],
        durationMs: 0,
        tail,
      };
    }
    return await state.runOne(check, cwd, signal);
  };
  for (const check of tiers.perClaim) runs.push(await runNext(check));
  // The slow checks run once the others leave nothing to refuse: at the claim that completes.
  const due = tiers.final.length > 0 && finalDue(runs, declared);
  for (const check of due ? tiers.final : []) runs.push(await runNext(check));
  const ran = due ? [...tiers.perClaim, ...tiers.final] : tiers.perClaim;
  if (signal?.aborted) {
    await changedEarly.catch(() => undefined);
    return { refused: state.refuse(facts, STOPPED) };
  }
  const started = await (due ? state.baseline : state.claimBaseline ?? state.baseline);
  // A baseline that could not run compares as none.
  const baseline = started?.error ? undefined : started;
  const base = baseline?.commit ?? context.git?.baseline ?? undefined;
  const views = await baselineViews(state, baseline, runs);
  let testsChanged = await changedEarly.catch(() => undefined);
  // The baseline could not run: its commit is not the base any more.
  if (base !== early || !testsChanged) {
    testsChanged = await changedTests(state, context, base, claim?.head);
  }
  // Red tests found by name wherever they live: an inline one whose body changed is protected too.
  const splices = claim && base ? await redTestChanges(claim, base, views, testsChanged) : [];
  testsChanged = [...testsChanged, ...splices.map((edit) => edit.change)];
  const undeclared = testsChanged.filter((entry) => !entry.reason);
  const settled: Array<{ run: CheckRun; flaky: boolean }> = [];
  // A check asked again runs in the copy made anew at the claim's commit: nothing its first
  // run wrote (an object in its build folder, a file of the work tree) reaches the second.
  const anew = copy && claim ? async () => await copy.moveTo(claim.head) === undefined : undefined;
  for (const [index, check] of ran.entries()) {
    settled.push(
      await settle(state, check, runs[index], views.get(check.name), { cwd, signal, anew }),
    );
  }
  if (!signal?.aborted) {
    state.failedLast = new Map(
      settled.flatMap(({ run }) =>
        run.green || run.failing.length === 0 ? [] : [[run.name, run.failing]]
      ),
    );
  }
  // A check that wrote into the copy's object store: every checkout, diff and review read
  // after it would read what it wrote.
  const tampered = await copy?.objects.intact();
  if (tampered) {
    return {
      refused: state.refuse(
        facts,
        `finishline cannot rely on this claim's checks: ${tampered}. Tests and code must not write git objects into the repository they run in`,
      ),
    };
  }
  // The agent's tests ran: what they wrote into the copy's dependency folders is undone.
  const planted = claim && await state.undoWrites(facts);
  if (planted) return { refused: planted };
  const judged = judgeAll(settled, views, declared, {
    undeclared,
    changedCount: testsChanged.length,
    declarations: context.completeTask?.tests_changed,
  });
  const evidence: ChecksEvidence = {
    passed: false,
    checks: judged.checks,
    outOfScope: judged.outOfScope,
    testsChanged,
    ...facts,
    ...(rerun ? { rerun: rerun.evidence } : {}),
  };
  const problems = judged.problems;
  return {
    context,
    claim,
    notes,
    facts,
    copy,
    signal,
    declared,
    base,
    views,
    testsChanged,
    splices,
    undeclared,
    settled,
    outOfScope: judged.outOfScope,
    evidence,
    problems,
  };
}

/** Protected files the agent changed since `base`, with the reasons it declared. */
async function changedTests(
  state: GateState,
  context: TaskCompletionContext,
  base: string | undefined,
  head: string | undefined,
): Promise<ChecksEvidence["testsChanged"]> {
  if (!context.git || !base) return [];
  // The claim's commit, read by hash in the clean copy's repository: no attribute hides a diff.
  const reader = head && state.copy ? state.copy.objects : context.git.repo;
  if (reader !== context.git.repo && await state.copy!.objects.fetch([base])) return [];
  const changed = await changedProtectedFiles(reader, base, {
    protect: state.protect,
    configFiles: state.configFiles,
    ...(reader !== context.git.repo ? { head } : {}),
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

/**
 * A check that passed before the run and fails once may be flaky: it is
 * asked again. So is one that fails only in tests that were flaky at the
 * baseline. The second run is in the clean copy made anew (`anew`), so
 * that the first cannot have prepared it; when the copy cannot be made
 * anew, the first run stands.
 */
async function settle(
  state: GateState,
  check: RepoCheck,
  run: CheckRun,
  before: BaselineView | undefined,
  options: { cwd: string; signal: AbortSignal | undefined; anew?: () => Promise<boolean> },
): Promise<{ run: CheckRun; flaky: boolean }> {
  if (run.green || run.timedOut || !before) return { run, flaky: false };
  const flakyBefore = new Set(before.flakyTests ?? []);
  const onlyFlaky = run.failing.length > 0 && run.failing.every((test) => flakyBefore.has(test));
  if (!before.run.green && !onlyFlaky) return { run, flaky: false };
  if (options.anew && !await options.anew()) return { run, flaky: false };
  const again = await state.runOne(check, options.cwd, options.signal);
  return { run: again, flaky: again.green };
}
