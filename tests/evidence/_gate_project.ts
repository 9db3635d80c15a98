/**
 * A project at its starting commit with the gate (RepoChecksChecker) set
 * up as a run sets it up: its start recorded, its baseline run, an optional
 * reviewer of declarations that records what it is asked, and `claim()`
 * for a complete_task call on the current commit. Real git in a temp
 * repository.
 *
 * @module
 */

import { RepoChecksChecker } from "../../agents/evidence/repo_checks.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import type { RepoCheck } from "../../agents/evidence/run/check_run.ts";
import type { ReviewAnswer, ReviewRequest } from "../../agents/evidence/judge/declarations.ts";
import type { TaskCompletionResult } from "../../agents/checks/checker_contract.ts";
import { git, type TempDir, tempRepo } from "../_helpers.ts";

/** `npm test` run by node's test runner. */
export const NODE_TEST: RepoCheck = { name: "npm test", command: "npm test", runner: "node" };

/** A package.json whose test script is `node --test`. */
export const PACKAGE_JSON: string = JSON.stringify({
  name: "math",
  private: true,
  scripts: { test: "node --test" },
});

/**
 * Write files under `root`, making their folders.
 *
 * @param root The folder.
 * @param files Path -> text.
 */
export async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(`${root}/${file}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${root}/${file}`, text);
  }
}

/**
 * Commit everything in `root`.
 *
 * @param root The repository.
 * @param message The commit message.
 * @returns The new commit.
 */
export async function commitAll(root: string, message = "work"): Promise<string> {
  await git(root, "add", "-A");
  await git(root, "commit", "-qm", message);
  return await git(root, "rev-parse", "HEAD");
}

/** How the project starts and how its gate is set up. */
export interface GateSetup {
  /** The starting commit's files. */
  files: Record<string, string>;
  /** The checks. @default [NODE_TEST] */
  checks?: RepoCheck[];
  /** The test globs. @default ["**\/test/**"] */
  protect?: string[];
  /** Why the worker's own test is required, when it is. */
  workerTest?: string;
  /** The reviewer's answer; without it the gate has no reviewer. */
  reviewer?: (request: ReviewRequest) => ReviewAnswer | Promise<ReviewAnswer>;
}

/** The project, its gate, and what the reviewer was asked. */
export interface GateProject extends AsyncDisposable {
  /** The repository. */
  repo: TempDir;
  /** The gate. */
  gate: RepoChecksChecker;
  /** The starting commit. */
  base: string;
  /** Every review request, in order. */
  asked: ReviewRequest[];
  /** A complete_task success on the current commit, with these fields besides. */
  claim(completeTask?: Record<string, unknown>): Promise<TaskCompletionResult>;
}

/**
 * Make the project and its gate, with the baseline run.
 *
 * @param setup Files, checks, globs, the worker-test rule and the reviewer.
 * @returns The project; dispose it to close the gate and remove the repository.
 */
export async function gateProject(setup: GateSetup): Promise<GateProject> {
  const repo = await tempRepo();
  await write(repo.path, setup.files);
  const base = await commitAll(repo.path, "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const gate = new RepoChecksChecker({
    checks: setup.checks ?? [NODE_TEST],
    timeoutMs: 60_000,
    protect: setup.protect ?? ["**/test/**"],
  });
  if (setup.workerTest) gate.requireWorkerTest(setup.workerTest);
  const asked: ReviewRequest[] = [];
  const reviewer = setup.reviewer;
  if (reviewer) {
    gate.setReviewer(async (request) => {
      asked.push(request);
      return await reviewer(request);
    });
  }
  await gate.recordStart(gitRepo);
  await gate.startBaseline(gitRepo, base);
  return {
    repo,
    gate,
    base,
    asked,
    claim: (completeTask = {}) =>
      gate.check(
        {
          cwd: repo.path,
          git: { repo: gitRepo, baseline: base },
          completeTask: {
            status: "success",
            summary: "",
            original_request_summary: "",
            ...completeTask,
          },
        } as never,
      ),
    async [Symbol.asyncDispose]() {
      await gate.close();
      await repo[Symbol.asyncDispose]();
    },
  };
}
