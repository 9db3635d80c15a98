/**
 * A corpus repository checked out for the gate alone (no agent): its
 * upstream commit, a commit with the injected bug, and the check that runs
 * the broken test, as detection names it. Shared by the re-run test and the
 * verification benchmark.
 *
 * @module
 */

import type { RepoCheck } from "../../agents/evidence/run/check_run.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import { git, type TempDir, tempDir } from "../_helpers.ts";
import type { Prepared } from "./_prepare.ts";
import { applyEdit, copyRepo } from "./_prepare.ts";
import { scoreDetection } from "./_play.ts";

/** A checkout of a corpus repository with its two commits. */
export interface Checkout extends AsyncDisposable {
  dir: TempDir;
  repo: GitRepo;
  /** The upstream release. */
  base: string;
  /** The release with the injected bug. */
  bug: string;
  /** The check that runs the broken test. */
  check: RepoCheck;
  /** The file the bug goes in. */
  bugFile: string;
  /** The check every claim declares out of scope, for a test red in the release as shipped. */
  outOfScope?: { check: string; reason: string };
}

/**
 * Copies a prepared repository into a fresh git repository, commits the
 * bug on top, and puts HEAD back on the release. The corpus's environment
 * (pnpm, python3 with pytest, Go's offline settings) is set in this process:
 * the gate runs checks in its own environment.
 *
 * @param prepared The repository, prepared, its needs met.
 * @returns The checkout, or why its test check was not detected.
 */
export async function checkoutOf(prepared: Prepared & { ok: true }): Promise<Checkout | string> {
  for (const [name, value] of Object.entries(prepared.env)) Deno.env.set(name, value);
  const { detection } = await scoreDetection(prepared);
  const found = detection.checks.find((check) => check.name === prepared.repo.testCheck);
  if (!found) return `"${prepared.repo.testCheck}" was not detected`;
  const dir = await tempDir("finishline-corpus-");
  await copyRepo(prepared, dir.path);
  const repo = (await GitRepo.open(dir.path))!;
  const base = (await repo.head())!;
  await applyEdit(dir.path, prepared.repo.bug);
  await git(dir.path, "commit", "-qam", "the bug");
  const bug = (await repo.head())!;
  await git(dir.path, "reset", "-q", "--hard", base);
  const check: RepoCheck = {
    name: found.name,
    command: found.command,
    ...(found.runner ? { runner: found.runner } : {}),
    ...(found.buildFolder ? { buildFolder: found.buildFolder } : {}),
    ...(found.buildOnly ? { buildOnly: found.buildOnly } : {}),
  };
  return {
    dir,
    repo,
    base,
    bug,
    check,
    bugFile: prepared.repo.bug.file,
    ...(prepared.repo.legacy
      ? { outOfScope: { check: prepared.repo.legacy.check, reason: prepared.repo.legacy.reason } }
      : {}),
    [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
  };
}

/** How many commits {@linkcode commitLike} made: each gets a message of its own. */
let commits = 0;

/**
 * Moves the checkout's HEAD to a new commit holding `tree`'s files, as an
 * agent's next commit would (a new commit each time: the gate answers a
 * commit it has seen from memory).
 *
 * @param checkout The checkout.
 * @param commit The commit whose files the new one holds.
 * @returns The new commit.
 */
export async function commitLike(checkout: Checkout, commit: string): Promise<string> {
  await git(checkout.dir.path, "reset", "-q", "--hard", commit);
  // A message of its own: two claims in one second would otherwise be one commit, and the
  // gate answers the second from its memo of the first.
  await git(checkout.dir.path, "commit", "-q", "--allow-empty", "-m", `again ${++commits}`);
  return (await checkout.repo.head())!;
}

/**
 * A claim's context for the gate, on the checkout's HEAD (declaring the
 * release's own red test out of scope, where it has one).
 *
 * @param checkout The checkout.
 * @param signal Stops the checks.
 * @returns The context.
 */
export function claimContext(checkout: Checkout, signal?: AbortSignal): never {
  return {
    cwd: checkout.dir.path,
    git: { repo: checkout.repo, baseline: checkout.base },
    signal,
    ...(checkout.outOfScope ? { completeTask: { out_of_scope: [checkout.outOfScope] } } : {}),
  } as never;
}
