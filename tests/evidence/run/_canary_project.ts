/**
 * Projects for the canary tests: a temp git repository at its starting
 * commit, a claim committed on top of it (whose changed files say where the
 * canary goes), and the canary run on it, which must leave the tree as the
 * commit left it. The JavaScript runners (jest, vitest, mocha, chai) come
 * from the test-only packages pinned in `tests/pinned/deno.json`, installed
 * by Deno into a `node_modules` the projects link to (from its cache, with
 * the pinned versions of the lock).
 *
 * @module
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { type CanaryResult, runCanaries } from "../../../agents/evidence/run/canary.ts";
import { type RepoCheck, runRepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { git, type TempDir, tempDir, tempRepo } from "../../_helpers.ts";
import { pinned, TOOLS_CONFIG } from "../../pinned/mod.ts";

/** The timeout of one canary run: generous, the machine is shared. */
const TIMEOUT_MS = 300_000;

/** Write files under `root`, making their folders. */
export async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, file)), { recursive: true });
    await Deno.writeTextFile(join(root, file), text);
  }
}

/** A project at its starting commit; `claim` commits the agent's files on top. */
export interface CanaryProject extends AsyncDisposable {
  /** The repository. */
  path: string;
  /** Commit these files; returns the files changed since the start. */
  claim(files: Record<string, string>): Promise<string[]>;
}

/**
 * A temp repository holding `files` at its first commit.
 *
 * @param files Path -> text.
 * @param options `nodeModules`: a folder the project's `node_modules` links to.
 */
export async function canaryProject(
  files: Record<string, string>,
  options: { nodeModules?: string } = {},
): Promise<CanaryProject> {
  const repo = await tempRepo();
  await write(repo.path, { ".gitignore": "node_modules\ntarget\nCargo.lock\n", ...files });
  if (options.nodeModules) await Deno.symlink(options.nodeModules, join(repo.path, "node_modules"));
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const base = await git(repo.path, "rev-parse", "HEAD");
  return {
    path: repo.path,
    claim: async (claimed) => {
      await write(repo.path, claimed);
      await git(repo.path, "add", "-A");
      await git(repo.path, "commit", "-qm", "claim");
      const diff = await git(repo.path, "diff", "--name-only", base.trim(), "HEAD");
      return diff.split("\n").filter((line) => line !== "");
    },
    [Symbol.asyncDispose]: () => repo[Symbol.asyncDispose](),
  };
}

/**
 * The canary of one check on the project, as the gate runs it: the files
 * the claim changed given; the tree is as the commit left it afterwards.
 *
 * @param project The project.
 * @param check The check.
 * @param changed What the claim changed.
 * @returns The runner's result.
 */
export async function canaryOf(
  project: CanaryProject,
  check: RepoCheck,
  changed: string[] = [],
): Promise<CanaryResult> {
  const [result] = await runCanaries(project.path, [check], { timeoutMs: TIMEOUT_MS, changed });
  const status = await git(project.path, "status", "--porcelain", "--untracked-files=all");
  assert.equal(status.trim(), "", "the canary's files are removed");
  return result;
}

/**
 * Assert that the project's own check passes on the claim: the cheat works,
 * so the canary is what must see through it.
 *
 * @param project The project.
 * @param check Its check.
 */
export async function suiteFooled(project: CanaryProject, check: RepoCheck): Promise<void> {
  const run = await runRepoCheck(check, { cwd: project.path, timeoutMs: TIMEOUT_MS });
  assert.ok(run.green, `the cheat makes the suite pass:\n${run.tail}`);
}

/** The runners' `node_modules`, made once per test from the pinned lock. */
export async function nodeRunners(): Promise<TempDir & { nodeModules: string }> {
  const dir = await tempDir("finishline-node-runners-");
  const names = ["jest", "vitest", "mocha", "chai"];
  await Deno.writeTextFile(
    join(dir.path, "deno.json"),
    JSON.stringify({
      imports: Object.fromEntries(names.map((name) => [name, pinned(name)])),
      nodeModulesDir: "auto",
    }),
  );
  // The pinned lock decides every version; Deno drops the packages this folder does not use.
  await Deno.copyFile(join(dirname(TOOLS_CONFIG), "deno.lock"), join(dir.path, "deno.lock"));
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["install", "--quiet"],
    cwd: dir.path,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return { ...dir, nodeModules: join(dir.path, "node_modules") };
}
