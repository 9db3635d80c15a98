/**
 * The clean copy a claim's checks run in: the one copy of the run (at the
 * first claim, the baseline's worktree when it was green or kept its build
 * folders) moved to the claim's commit,
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
import type { BuildSystem } from "./run/build_folder.ts";
import { seedForClaim } from "./_claim_seeds.ts";

const BUILD_SYSTEM_NAMES: Record<BuildSystem, string> = {
  meson: "Meson",
  cmake: "CMake",
  autotools: "autotools",
};

/** What a seed holds, for a note: `target`, and the build systems' folders. */
function seedNames(entries: readonly string[]): string {
  const names = entries.flatMap((entry) =>
    entry.startsWith("build/")
      ? [`the ${BUILD_SYSTEM_NAMES[entry.slice(6).split("-")[0] as BuildSystem]} build folder`]
      : entry.endsWith("target")
      ? ["target"]
      : []
  );
  return [...new Set(names)].join(", ") || "target";
}

/**
 * The clean copy at `head`: made on the first claim, moved on later ones;
 * each dependency folder linked, or installed from the commit's lock file.
 */
export async function cleanCopy(
  state: GateState,
  claim: Claim,
  signal?: AbortSignal,
): Promise<{ copy?: CheckWorktree; notes: string[]; problem?: string; changes?: string[] }> {
  const start = (await state.start)!;
  await state.tidying;
  state.tidying = undefined;
  // The first claim moves the baseline's worktree (green, or red with build folders kept) (moveTo cleans it as any move does).
  // A claim made before the baseline ended has a copy of its own; the baseline's takes over
  // when there is a seed: the build folders in it record the baseline's folder.
  const baselineCopy = state.baselineCopy;
  state.baselineCopy = undefined;
  let copy = state.copy ?? baselineCopy;
  if (baselineCopy && copy !== baselineCopy) {
    if (state.seed?.usable && state.seed.plantsIn(baselineCopy.folder)) {
      await copy?.remove();
      copy = baselineCopy;
    } else await baselineCopy.remove();
  }
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
  let planted = copy.seeded ||
    (state.seed?.usable === true && await copy.seedWith(state.seed));
  if (!planted && (seeded || state.seed)) {
    const what = seedNames(state.seed?.entries ?? []);
    await state.seed?.remove();
    state.seed = undefined;
    notes.push(
      `finishline's copy of what the baseline built (${what}) changed after it was taken, was built in another folder, or could not be copied: the checks built from nothing`,
    );
  }
  // Changed build definitions: the seed of them, built once if none serves.
  if (planted && base) {
    const seeding = await seedForClaim(state, {
      copy,
      base,
      head: claim.head,
      repoRoot: claim.repo.root,
      ...(signal ? { signal } : {}),
    });
    notes.push(...seeding.notes);
    if (seeding.problem) {
      return {
        copy,
        notes,
        problem: copy.finding ? objectFinding(copy.finding) : seeding.problem,
      };
    }
    planted = copy.seeded;
  }
  // Without a seed, a build from nothing still sees the files' times as a seed would give them.
  if (!planted && base && state.checks.some((check) => check.buildFolder)) {
    await copy.keepTimes(base);
  }
  // A build folder configured from other build definitions than the claim's is not used.
  for (const dropped of planted ? await copy.readyBuildFolders(state.checks) : []) {
    notes.push(
      `You changed ${
        listPaths(dropped.files)
      }: "${dropped.check}" configured and built from nothing, not from the baseline's build folder (a kept ${
        BUILD_SYSTEM_NAMES[dropped.system]
      } build folder keeps what its first configure decided)`,
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
