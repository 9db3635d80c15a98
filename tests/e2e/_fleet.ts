/**
 * Shared setup of the fleet tests and bench: a repository with a bare
 * `origin` to push to, a scripted GitHub with labelled issues, and the
 * agent's script for an issue (commit a file, report success).
 *
 * @module
 */

import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { type ScriptedTurn, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub, type FakeIssue } from "../fixtures/fake_gh/mod.ts";
import { git, type TempDir, tempDir, tempRepo } from "../_helpers.ts";
import { checkedDefaultAgent } from "./_checked_agent.ts";

/** A repository for a fleet: the checkout, its bare origin, the scripted GitHub. */
export interface FleetRepo extends AsyncDisposable {
  /** The checkout. */
  repo: TempDir;
  /** Its origin, a bare repository. */
  origin: TempDir;
  /** The scripted GitHub. */
  gh: FakeGitHub;
}

/**
 * A repository with an `origin` and a scripted GitHub holding the issues
 * (labels `agent:go`, `blocked` and the priorities exist).
 *
 * @param issues The issues.
 * @returns The repository, removed on dispose.
 */
export async function fleetRepo(issues: FakeIssue[]): Promise<FleetRepo> {
  const repo = await tempRepo();
  await checkedDefaultAgent(repo.path, "ls issue*.txt");
  const origin = await tempDir("finishline-origin-");
  await git(origin.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", origin.path);
  const gh = await FakeGitHub.create({
    repo: "octo/demo",
    labels: ["agent:go", "blocked", "priority:high", "priority:low"],
    issues,
  });
  return {
    repo,
    origin,
    gh,
    [Symbol.asyncDispose]: async () => {
      await gh[Symbol.asyncDispose]();
      await origin[Symbol.asyncDispose]();
      await repo[Symbol.asyncDispose]();
    },
  };
}

/**
 * An issue with the `agent:go` label.
 *
 * @param number Its number.
 * @param extra Other fields.
 * @returns The issue.
 */
export function goIssue(number: number, extra: Partial<FakeIssue> = {}): FakeIssue {
  return {
    number,
    title: `Add file ${number}`,
    body: `Create issue${number}.txt.`,
    labels: ["agent:go"],
    ...extra,
  };
}

/**
 * The agent's session on an issue: commit `issue<N>.txt`, report success.
 *
 * @param number The issue.
 * @param delayMs How long each model turn takes.
 * @returns The turns.
 */
export function fixIssue(number: number, delayMs = 0): ScriptedTurn[] {
  return [
    toolTurn("Bash", {
      command: `printf '${number}' > issue${number}.txt && git add issue${number}.txt && ` +
        `git commit -qm 'fix: issue ${number}'`,
    }),
    toolTurn(COMPLETE_TASK_TOOL, {
      status: "success",
      original_request_summary: `Create issue${number}.txt`,
      summary: `Added issue${number}.txt`,
    }),
    textTurn(`Issue ${number} done.`),
  ].map((turn) => ({ ...turn, delayMs }));
}

/**
 * The agent's session on an issue it cannot do: report it blocked.
 *
 * @param number The issue.
 * @returns The turns.
 */
export function blockIssue(number: number): ScriptedTurn[] {
  return [
    toolTurn(COMPLETE_TASK_TOOL, {
      status: "blocked",
      original_request_summary: `Create issue${number}.txt`,
      summary: "Nothing done",
      remaining_work: "Needs a staging account nobody gave me",
    }),
    textTurn("Blocked."),
  ];
}

/**
 * The prompt text that tells an issue's sessions apart.
 *
 * @param number The issue.
 * @returns The text the issue prompts begin with.
 */
export function issueKey(number: number): string {
  return `GitHub issue #${number}:`;
}
