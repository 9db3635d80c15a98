/**
 * The clean copy a claim's checks run in: the one copy of the run (at the
 * first claim, the green baseline's worktree) moved to the claim's commit,
 * the starting commit fetched beside it, the build seed planted, and each
 * dependency folder copied as found at the start or installed from the
 * manifest the agent changed.
 *
 * @module
 */

import { CheckWorktree } from "./copy/worktree_run.ts";
import {
  binaryFinding,
  binarySources,
  OBJECT_FINDING,
  objectFinding,
} from "./copy/object_findings.ts";
import { folderOf, nodeInstallCommand } from "./copy/dependency_folders.ts";
import { listPaths } from "./_feedback.ts";
import type { Claim, GateState } from "./_gate_state.ts";
import { pythonNote } from "./_run_start.ts";

/**
 * The clean copy at `head`: made on the first claim, moved on later ones;
 * each dependency folder linked, or installed from the commit's lock file.
 */
export async function cleanCopy(
  state: GateState,
  claim: Claim,
): Promise<{ copy?: CheckWorktree; notes: string[]; problem?: string; changes?: string[] }> {
  const start = (await state.start)!;
  await state.tidying;
  state.tidying = undefined;
  // The first claim moves the green baseline's worktree (moveTo cleans it as any move does).
  let copy = state.copy ?? state.baselineCopy;
  state.baselineCopy = undefined;
  const seeded = copy?.seeded ?? false;
  if (copy && await copy.moveTo(claim.head)) {
    if (copy.finding) {
      state.copy = copy;
      return { notes: [], problem: objectFinding(copy.finding) };
    }
    // Something broke the copy (its folder removed, say): a new one.
    await copy.remove();
    copy = undefined;
  }
  if (!copy) {
    const made = await CheckWorktree.create(claim.repo, claim.head, {
      dependencies: start.dependencies,
      owner: state.owner,
    });
    if (typeof made === "string") {
      state.copy = undefined;
      return {
        notes: [],
        problem: OBJECT_FINDING.test(made)
          ? objectFinding(made)
          : `finishline could not make its clean copy: ${made}`,
      };
    }
    copy = made;
  }
  state.copy = copy;
  // The diffs read the starting commit from the copy's repository too.
  const base = state.baselineCommit ?? claim.base;
  const fetched = base ? await copy.objects.fetch([base]) : undefined;
  if (fetched) return { copy, notes: [], problem: `finishline could not copy ${fetched}` };
  const binary = base ? await binarySources(copy.objects, base, claim.head) : [];
  if (binary.length > 0) return { copy, notes: [], problem: binaryFinding(binary) };
  const notes: string[] = [];
  const planted = copy.seeded ||
    (state.seed?.usable === true && await copy.seedWith(state.seed));
  if (!planted && (seeded || state.seed)) {
    await state.seed?.remove();
    state.seed = undefined;
    notes.push(
      "finishline's copy of what the baseline built (target) changed after it was taken, or could not be copied: the checks built from nothing",
    );
  }
  // A folder installed for an earlier commit whose dependency change is gone since.
  for (const dir of [...copy.folders.keys()]) {
    if (!claim.plans.some((plan) => plan.dir === dir)) await copy.drop(dir);
  }
  for (const plan of claim.plans) {
    const note = pythonNote(plan);
    if (note) notes.push(note);
    if (!plan.install) {
      const failed = await copy.copyIn(plan.dir);
      if (failed) {
        return { copy, notes, problem: `finishline could not copy ${plan.dir}: ${failed}` };
      }
      continue;
    }
    const command = await nodeInstallCommand(copy.dir);
    const failed = await copy.install(plan.dir, command, {
      key: plan.key,
      timeoutMs: state.timeoutMs,
    });
    if (!failed) {
      notes.push(
        `You changed ${
          listPaths(plan.changedFiles)
        }: the clean copy installed ${plan.dir} with \`${command.command}\` instead of linking the one found at the start`,
      );
      continue;
    }
    if (!failed.missing) {
      return {
        copy,
        notes,
        problem: `You changed ${
          listPaths(plan.changedFiles)
        }, so finishline installs ${plan.dir} from them in its clean copy of ${
          claim.head.slice(0, 12)
        }, and that failed: ${failed.detail}. Fix the dependency manifest and lock file, and commit them`,
      };
    }
    const linked = start.dependencies.entries.some((entry) => folderOf(entry)?.dir === plan.dir) &&
      await copy.copyIn(plan.dir) === undefined;
    notes.push(
      `You changed ${
        listPaths(plan.changedFiles)
      }, but finishline cannot install ${plan.dir} (${failed.detail}): the checks ran with ${
        linked ? `the ${plan.dir} found at the start` : `no ${plan.dir}`
      }`,
    );
    if (linked && plan.changes.length > 0) return { copy, notes, changes: plan.changes };
  }
  return { copy, notes };
}
