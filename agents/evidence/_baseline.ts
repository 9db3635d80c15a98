/**
 * The baseline: the checks on the starting commit, in a worktree of their
 * own while the first session works (the per-claim checks first, the final
 * ones after), its red checks run once more at low priority, and the views
 * of it a claim is compared with. A green baseline's worktree and what it
 * built become the clean copy's start; so does a red one's when its build
 * folders were kept (its second run then has a copy of its own).
 *
 * @module
 */

import type { GitRepo } from "../git/repo.ts";
import type { CheckRun } from "./run/check_run.ts";
import { CheckWorktree } from "./copy/worktree_run.ts";
import { type BaselineResult, baselineTimer } from "./run/baseline_result.ts";
import { seedEntries, settleTimes } from "./copy/build_seed.ts";
import { splitTiers } from "./detect/check_tier.ts";
import type { BaselineView } from "./_rules.ts";
import type { GateState } from "./_gate_state.ts";
import { recordStart } from "./_run_start.ts";

/** Start the baseline (see `RepoChecksChecker.startBaseline`). */
export function startBaseline(
  state: GateState,
  repo: GitRepo,
  commit: string,
): Promise<BaselineResult> {
  const signal = state.stopBaseline.signal;
  state.baselineCommit = commit;
  let claimDone: (result: BaselineResult) => void = () => {};
  const claimEarly = new Promise<BaselineResult>((resolve) => claimDone = resolve);
  state.baseline = (async (): Promise<BaselineResult> => {
    await recordStart(state, repo);
    const finished = baselineTimer(commit);
    const worktree = await CheckWorktree.create(repo, commit, {
      dependencies: (await state.start!).dependencies,
      owner: state.owner,
    });
    if (typeof worktree === "string") return finished([], worktree);
    // Cargo's build output and the kept build folders become the clean copy's seed: the
    // times they are built against first.
    const seeds = await seedEntries(worktree.objects, commit);
    let folders = state.checks.some((check) => check.buildFolder);
    if (
      (seeds.length > 0 || folders) && await settleTimes(worktree.objects, undefined, commit)
    ) {
      seeds.length = 0;
      folders = false;
    }
    const tiers = splitTiers(state.checks, state.final);
    const runs = await worktree.run(tiers.perClaim, { timeoutMs: state.timeoutMs, signal });
    if (tiers.final.length > 0 && !signal.aborted) {
      // One object for both: what the final checks add (and a second run's retries) reach both.
      const result = finished(runs);
      claimDone(result);
      runs.push(
        ...await worktree.run(tiers.final, {
          timeoutMs: state.timeoutMs,
          signal,
          nice: true,
        }),
      );
      result.durationMs = finished(runs).durationMs;
    }
    const green = runs.every((run) => run.green);
    if ((seeds.length > 0 || folders) && !signal.aborted && runs.length > 0) {
      // A build folder is kept when its configure step completed, whether the tests passed
      // or not: a bug-fix task starts red, and its claims would otherwise build from nothing.
      state.seed = await worktree.takeSeed(commit, {
        cargo: seeds,
        checks: folders ? await worktree.builtFolders(state.checks, runs) : [],
        ...(state.owner ? { owner: { repo: repo.root, run: state.owner } } : {}),
      });
    }
    // A build folder records this copy's folder: such a seed makes this copy the clean one.
    const bound = state.seed?.entries.some((entry) => entry.startsWith("build/")) ?? false;
    if (signal.aborted) {
      await worktree.remove();
    } else if (green || bound) {
      state.baselineCopy = worktree;
      // The red checks' second run then starts from nothing in a copy of its own.
      if (!green) {
        const dependencies = (await state.start!).dependencies;
        state.confirmCopy = () =>
          CheckWorktree.create(repo, commit, { dependencies, owner: state.owner });
      }
    } else {
      state.baselineWorktree = worktree;
    }
    return signal.aborted ? finished(runs, "stopped before it finished") : finished(runs);
  })();
  // Without final checks, or when the baseline ends early, the whole baseline answers.
  state.claimBaseline = Promise.race([claimEarly, state.baseline]);
  state.claimBaseline.catch(() => {});
  return state.baseline;
}

/** Run the baseline's red checks a second time, once (see `RepoChecksChecker.confirmBaseline`). */
export function confirmBaseline(state: GateState): Promise<void> {
  if (!state.baseline) return Promise.resolve();
  state.confirmation ??= confirm(state, state.baseline);
  return state.confirmation;
}

/** The baseline's red checks run again in its worktree, which is removed after. */
async function confirm(state: GateState, pending: Promise<BaselineResult>): Promise<void> {
  const baseline = await pending;
  let worktree = state.baselineWorktree;
  state.baselineWorktree = undefined;
  const make = state.confirmCopy;
  state.confirmCopy = undefined;
  try {
    const signal = state.stopBaseline.signal;
    if (!worktree && make && !baseline.error && !signal.aborted) {
      const made = await make();
      if (typeof made === "string") return;
      worktree = made;
      // The times the first run had: make sees a release's generated files as up to date.
      await worktree.keepTimes(baseline.commit);
    }
    if (!worktree || baseline.error || signal.aborted) return;
    const red = state.checks.filter((check) =>
      baseline.runs.some((run) => run.name === check.name && !run.green)
    );
    // A clean start, as the first run had.
    if (await worktree.moveTo(baseline.commit)) return;
    const retries = await worktree.run(red, {
      timeoutMs: state.timeoutMs,
      signal,
      nice: true,
    });
    if (!signal.aborted) baseline.retries = retries;
  } finally {
    state.confirmed = true;
    await worktree?.remove();
  }
}

/** Stop the baseline and its second run, and remove its worktrees (see `RepoChecksChecker.stopBaseline`). */
export async function stopBaseline(state: GateState): Promise<void> {
  state.stopBaseline.abort();
  await state.baseline;
  await state.confirmation;
  await state.baselineWorktree?.remove();
  state.baselineWorktree = undefined;
  await state.baselineCopy?.remove();
  state.baselineCopy = undefined;
}

/**
 * The baseline runs to compare with. A check red at the baseline and red
 * now makes the verdict depend on that red: the baseline's second run is
 * waited for. Otherwise it is used once it has run, and never waited for:
 * a passing claim is not held up to annotate its evidence.
 */
export async function baselineViews(
  state: GateState,
  baseline: BaselineResult | undefined,
  runs: CheckRun[],
): Promise<Map<string, BaselineView>> {
  const redAgain = runs.some((run) =>
    !run.green && baseline?.runs.some((before) => before.name === run.name && !before.green)
  );
  if (redAgain) await confirmBaseline(state);
  const views = new Map<string, BaselineView>();
  for (const first of baseline?.runs ?? []) {
    const second = baseline?.retries?.find((run) => run.name === first.name);
    if (!second) {
      views.set(first.name, { run: first });
      continue;
    }
    const again = new Set(second.failing);
    const flakyTests = first.failing.filter((test) => !again.has(test));
    // Red twice: every test that failed at either run was failing at the start.
    const failing = [...new Set([...first.failing, ...second.failing])];
    views.set(first.name, {
      run: second.green ? second : { ...second, failing },
      ...(second.green || flakyTests.length > 0 ? { flakyTests } : {}),
    });
  }
  return views;
}
