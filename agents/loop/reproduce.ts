/**
 * The verifier session of `verify.reproduce: "held-out"`: beside the
 * worker's first session, a separate session on a worktree of the starting
 * commit writes tests that reproduce the task, from the task's text and the
 * detected checks only (never the worker's transcript). The gate keeps them
 * when they fail on the starting commit, holds them out of the worker's
 * tree, and needs them to pass on the final commit.
 *
 * @module
 */

import { firstLine } from "../support/errors.ts";
import { runIndependent } from "./independent.ts";
import { noCost } from "./independent_cost.ts";
import type { ReproductionRecord, VerifierCost } from "./reproduction_plan.ts";
import type { RunState } from "./state.ts";

/** Marks the verifier's system prompt (scripted servers route on it). */
export const VERIFIER_MARKER = "[finishline verifier session]";

/** What the worker is told, in its system prompt, when a verifier runs. */
export const HELD_OUT_NOTICE =
  "A held-out acceptance test for this task is being written from the task's text by a separate verifier; you will not see it. When you claim the task is done it runs on a clean copy of your final commit, beside the repository's checks, and must pass: make the code do what the task asks for every input, not only for the inputs of the tests you can see.";

/**
 * What the worker is told, in its system prompt, when its own test of the
 * fix is required.
 *
 * @param why Why the run needs one.
 * @returns The notice.
 */
export function workerTestNotice(why: string): string {
  return `This is a bug fix (${why}): commit a test that fails without your fix and passes with it, in the repository's own test files. When you claim the task is done, finishline runs your new or changed test files on the starting commit, without the rest of your change, and one of their tests must fail there.`;
}

/** The verifier's instructions, appended to its system prompt. */
const VERIFIER_SYSTEM = `${VERIFIER_MARKER}
You are the verifier of a coding task, not its worker. Another agent will do the task later; you never change the code under test. Your only job: write one or a few tests, in the repository's own test framework and layout, that pass once the task is done and fail now, on this commit, because the behaviour the task asks for is missing (an assertion that fails, not a syntax, import or build error). Put them in new test files where the repository's runner finds them. Run the repository's test command to see them fail for that reason, then stop. If the task cannot be checked by a test (documentation, refactoring, a request without observable behaviour), write nothing and say why.`;

function verifierPrompt(task: string, checks: string[]): string {
  return [
    "The task, as the worker will get it:",
    "",
    task.trim(),
    "",
    checks.length > 0
      ? `The repository's checks: ${checks.map((check) => `\`${check}\``).join(", ")}.`
      : "The repository has no detected checks.",
    "",
    "Write the reproduction tests now.",
  ].join("\n");
}

/**
 * Start the verifier beside the first session, when `verify.reproduce` is
 * `held-out` and the run has a repository and detected checks. The gate
 * waits for it at the first claim; the log gets a `reproduction` event.
 *
 * @param state The run.
 * @param task The first prompt: the task as the worker gets it.
 */
export function startReproduction(state: RunState, task: string): void {
  const { git, repoChecks } = state.options;
  const commit = state.git?.baseline;
  if (!state.reproductionPlan.heldOut || !git || !commit || !repoChecks) return;
  if (state.reproduction) return;
  const account = noCost();
  const verify = state.definition.verify;
  const cost = (): VerifierCost => {
    const { sessions: _, ...rest } = account;
    return rest;
  };
  state.reproduction = repoChecks.startReproduction(git, commit, async (dir) => {
    const end = await runIndependent(state, {
      prompt: verifierPrompt(task, repoChecks.checks.map((check) => check.command)),
      instructions: VERIFIER_SYSTEM,
      cwd: dir,
      tools: ["Bash", "Read", "Write", "Edit", "Glob", "Grep"],
      maxTurns: verify.reproduceMaxTurns,
      maxBudgetUsd: verify.reproduceMaxCostUsd,
    }, account);
    return end.problem ? `the verifier ${end.problem}` : undefined;
  }).then((reproduction) => {
    const record: ReproductionRecord = { ...reproduction, cost: cost() };
    state.emit({ type: "reproduction", reproduction: record });
    return record;
  }, (error) => {
    const record: ReproductionRecord = {
      kept: false,
      why: `it failed: ${firstLine(error)}`,
      notes: [],
      cost: cost(),
    };
    state.emit({ type: "reproduction", reproduction: record });
    return record;
  });
}
