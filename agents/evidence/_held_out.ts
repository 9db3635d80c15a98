/**
 * The verifier's held-out reproduction test: written from the task in a
 * workspace of its own before the worker starts, kept when it fails on the
 * starting commit for a named reason, then run on the clean copy of every
 * claim without the worker ever seeing it; and the worker's dispute of it,
 * as the reviewer reads it.
 *
 * @module
 */

import type { GitRepo } from "../git/repo.ts";
import type { Declaration } from "../record/iteration.ts";
import { CheckWorktree } from "./copy/worktree_run.ts";
import { heldOutFailures } from "./held_out/held_out_feedback.ts";
import { HeldOutStore } from "./held_out/held_out_store.ts";
import { VerifierWorkspace } from "./held_out/verifier_workspace.ts";
import { type HeldOutTest, judgeReproduction, type Reproduction } from "./held_out/reproduction.ts";
import { listPaths } from "./_feedback.ts";
import type { Claim, GateState } from "./_gate_state.ts";
import { recordStart } from "./_run_start.ts";

/** Start the held-out reproduction test (see `RepoChecksChecker.startReproduction`). */
export function startReproduction(
  state: GateState,
  repo: GitRepo,
  commit: string,
  write: (dir: string) => Promise<string | undefined>,
): Promise<Reproduction> {
  const signal = state.stopBaseline.signal;
  state.reproduction = (async (): Promise<Reproduction> => {
    await recordStart(state, repo);
    const start = await state.start!;
    const worktree = await CheckWorktree.create(repo, commit, {
      dependencies: start.dependencies,
      owner: state.owner,
    });
    if (typeof worktree === "string") return { kept: false, why: worktree, notes: [] };
    try {
      // The verifier writes in a repository of its own, which the worker's cannot name.
      const workspace = await VerifierWorkspace.create(repo, commit, {
        link: worktree.dependencyPaths,
      });
      if (typeof workspace === "string") return { kept: false, why: workspace, notes: [] };
      const isTest = (file: string) => state.isTest(file);
      let failed: string | undefined;
      let written: Awaited<ReturnType<VerifierWorkspace["written"]>>;
      try {
        failed = await write(workspace.dir);
        written = await workspace.written(isTest);
      } finally {
        await workspace.remove();
      }
      const notes: string[] = [];
      if (failed) notes.push(failed);
      if (written.others.length > 0) {
        notes.push(`dropped what it changed outside test files: ${listPaths(written.others)}`);
      }
      if (written.files.length === 0) {
        return { kept: false, why: failed ?? "the verifier wrote no test file", notes };
      }
      // Copied into finishline's keeping the moment it stopped; claims run that copy.
      await state.heldOutStore?.remove();
      state.heldOutStore = await HeldOutStore.save(written.files);
      const files: HeldOutTest["files"] = written.files;
      // Only its tests, on the starting commit: a clean checkout, the files written back.
      const moved = await worktree.moveTo(commit);
      if (moved) return { kept: false, why: moved, notes };
      await writeFiles(worktree.dir, files);
      const runs = await worktree.run(state.checks, {
        timeoutMs: state.timeoutMs,
        signal,
      });
      if (signal.aborted) return { kept: false, why: "stopped before it finished", notes };
      const baseline = await state.baseline;
      const judged = judgeReproduction(runs, baseline?.error ? [] : baseline?.runs ?? []);
      if ("why" in judged) return { kept: false, why: judged.why, notes };
      return { kept: true, test: { files, ...judged }, notes };
    } finally {
      await worktree.remove();
    }
  })();
  return state.reproduction;
}

/**
 * The held-out tests on the clean copy of the claim: its files added, the
 * checks that ran them run again. Returns the held-out tests that fail,
 * each with what its assertion said (never its code).
 */
export async function runHeldOut(
  state: GateState,
  test: HeldOutTest,
  claim: Claim,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const copy = state.copy!;
  const kept = await state.heldOutStore?.load() ?? test.files;
  if (typeof kept === "string") return [`it could not be run: ${kept}`];
  const moved = await copy.moveTo(claim.head);
  if (moved) return [`it could not be added to a copy of your commit (${moved})`];
  await writeFiles(copy.dir, kept);
  const checks = state.checks.filter((check) => test.checks.includes(check.name));
  const runs = await copy.run(checks, {
    timeoutMs: state.timeoutMs,
    signal,
    onCheck: state.onCheck,
  });
  const failing: string[] = [];
  for (const run of runs) {
    if (run.green) continue;
    const named = run.failing.filter((name) => test.tests.includes(name));
    // A red run that names no test of its own may still be ours: the held-out names decide.
    const ours = named.length > 0 ? named : run.failing.length === 0 ? test.tests : [];
    if (ours.length === 0) continue;
    // Its name and the behaviour, never what its assertion printed: that would be an oracle.
    failing.push(heldOutFailures(ours));
  }
  // Held out again: the copy, which git worktree list shows, does not keep them.
  await copy.moveTo(claim.head);
  return failing;
}

/**
 * The worker's dispute of a failing held-out test, for the reviewer: the
 * tests, what they asserted, and their code (the worker never sees it; the
 * reviewer must, to judge the test against the task).
 */
export function heldOutDispute(test: HeldOutTest, failing: string[], reason: string): Declaration {
  const code = test.files.map((file) => `--- ${file.path}\n${file.content.slice(0, 4000)}`)
    .join("\n");
  return {
    kind: "held_out_wrong",
    subject: test.tests.join(", "),
    reason,
    facts:
      `a held-out acceptance test, written by a verifier from the task before the work began, fails against the new code: ${
        failing.join("; ")
      }. Its code (never shown to the worker):\n${code}`,
  };
}

/** Writes files under `root`, making their folders. */
async function writeFiles(root: string, files: Array<{ path: string; content: string }>) {
  for (const file of files) {
    const target = `${root}/${file.path}`;
    await Deno.mkdir(target.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(target, file.content);
  }
}
