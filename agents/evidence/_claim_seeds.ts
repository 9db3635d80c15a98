/**
 * Which build seed a claim's copy starts from: the baseline's while the
 * claim keeps the starting commit's build definitions; else the seed of
 * its build definitions (`copy/claim_seed.ts`), built once in the copy
 * when no kept one serves it, and used by every later claim that holds the
 * same ones.
 *
 * @module
 */

import type { CheckWorktree } from "./copy/worktree_run.ts";
import type { BuildSeed } from "./copy/build_seed.ts";
import { settleTimes } from "./copy/build_seed.ts";
import { seedOverlay, servesClaim } from "./copy/claim_seed.ts";
import { type BuildSystem, isBuildDefinition } from "./run/build_folder.ts";
import type { RepoCheck } from "./run/check_run.ts";
import { listPaths } from "./_feedback.ts";
import { CLAIM_SEEDS, type GateState } from "./_gate_state.ts";

/**
 * Plant in `copy`, at `head`, the seed that serves it, building one from
 * the claim's build definitions when none does. The copy is at `head`
 * after, its build folders planted or empty.
 */
export async function seedForClaim(
  state: GateState,
  claim: {
    copy: CheckWorktree;
    base: string;
    head: string;
    repoRoot: string;
    signal?: AbortSignal;
  },
): Promise<{ notes: string[]; problem?: string }> {
  const { copy } = claim;
  const seed = state.seed;
  const checks = state.checks.filter((check) => check.buildFolder && check.buildOnly);
  // A seed of build folders alone: Cargo's target stays the baseline's.
  if (!seed || checks.length === 0 || seed.entries.some((entry) => !entry.startsWith("build/"))) {
    return { notes: [] };
  }
  const systems = new Set(checks.map((check) => check.buildFolder as BuildSystem));
  const at = { base: claim.base, head: claim.head, systems };
  for (const candidate of [seed, ...state.claimSeeds]) {
    if (!candidate.usable || !candidate.plantsIn(copy.folder)) continue;
    if (!await servesClaim(copy.objects, candidate.commit, at)) continue;
    if (copy.seed === candidate || await copy.seedWith(candidate)) {
      copy.fallBackTo(seed);
      return { notes: candidate === seed ? [] : [reused(checks)] };
    }
  }
  const overlay = await seedOverlay(copy.objects, at);
  if (!overlay || overlay.length === 0) return { notes: [] };
  const made = await copy.objects.compose(claim.base, claim.head, overlay);
  if (typeof made !== "string" || state.unbuiltSeeds.has(made)) return { notes: [] };
  const built = await buildSeed(state, { ...claim, commit: made, checks });
  copy.unseed();
  const back = await copy.moveTo(claim.head);
  if (back) {
    return {
      notes: [],
      problem: `finishline could not move its clean copy back to ${
        claim.head.slice(0, 12)
      }: ${back}`,
    };
  }
  if (built === "aborted") return { notes: [] };
  if (!built) {
    state.unbuiltSeeds.add(made);
    // The baseline's folders, which the changed build definitions empty: built from nothing.
    if (seed.usable) await copy.seedWith(seed);
    return { notes: [] };
  }
  state.claimSeeds.push(built);
  while (state.claimSeeds.length > CLAIM_SEEDS) await state.claimSeeds.shift()?.remove();
  if (!await copy.seedWith(built)) return { notes: [] };
  copy.fallBackTo(seed);
  const files = overlay.filter((file) =>
    [...systems].some((system) => isBuildDefinition(system, file))
  );
  return {
    notes: [
      `You changed ${listPaths(files)}: finishline configured and built ${
        names(checks)
      } once with them (on the starting commit's other files, no test run), and this claim and later ones with the same build definitions build on that`,
    ],
  };
}

/** The checks, for a note. */
function names(checks: RepoCheck[]): string {
  return checks.map((check) => `"${check.name}"`).join(", ");
}

/** The note of a claim that uses the seed of its build definitions made earlier. */
function reused(checks: RepoCheck[]): string {
  return `${
    names(checks)
  } built on finishline's build of your changed build definitions, made at an earlier claim`;
}

/**
 * Configure and build (`buildOnly`) at `commit` in the copy, every tracked
 * file at the fixed time as in the baseline's copy, and take the folders
 * as a seed; undefined when a build failed, "aborted" when stopped.
 */
async function buildSeed(
  state: GateState,
  options: {
    copy: CheckWorktree;
    commit: string;
    checks: RepoCheck[];
    repoRoot: string;
    signal?: AbortSignal;
  },
): Promise<BuildSeed | undefined | "aborted"> {
  const { copy, commit } = options;
  copy.unseed();
  if (await copy.moveTo(commit)) return undefined;
  if (await settleTimes(copy.objects, undefined, commit)) return undefined;
  const runs = await copy.run(
    options.checks.map((check) => ({
      name: check.name,
      command: check.buildOnly!,
      buildFolder: check.buildFolder!,
    })),
    { timeoutMs: state.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
  );
  if (options.signal?.aborted) return "aborted";
  if (runs.length < options.checks.length || runs.some((run) => !run.green)) return undefined;
  return await copy.takeSeed(commit, {
    cargo: [],
    checks: options.checks,
    ...(state.owner ? { owner: { repo: options.repoRoot, run: state.owner } } : {}),
    // A file dated later than its build would stand for any change a claim makes to it.
    notAfter: Date.now() + 1000,
  });
}
