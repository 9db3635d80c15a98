import assert from "node:assert/strict";
import { parseDefinition } from "../../../agents/definition/parse.ts";
import { UsageError } from "../../../agents/support/errors.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { GitHubCli } from "../../../agents/github/port.ts";
import { preflight } from "../../../agents/iterator/run/preflight.ts";
import { prepareChecks } from "../../../agents/iterator/run/checks_setup.ts";
import { FakeGitHub } from "../../fixtures/fake_gh/mod.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";

function definition(json: { behavior?: Record<string, unknown>; verify?: unknown }) {
  const behavior = {
    completionType: "manual",
    completionConfig: { completionKeyword: "DONE" },
    ...json.behavior,
  };
  return parseDefinition(JSON.stringify({ name: "x", ...json, behavior }), {
    displayPath: ".agent/x/agent.json",
  });
}

Deno.test("preflight refuses a run that cannot finish, before any session", async (t) => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ scripts: { test: "node --test" } }),
  );
  const base = {
    displayPath: ".agent/x/agent.json",
    permissionMode: "default" as const,
    changesCode: true,
  };

  await t.step("a check whose executable is missing", async () => {
    const def = definition({});
    const checks = await prepareChecks(def, repo.path);
    await assert.rejects(
      preflight({ ...base, definition: def, checks, path: "/nonexistent" }),
      (error: Error) =>
        error instanceof UsageError &&
        error.message ===
          `Check "npm test" (from package.json scripts.test) cannot start: "npm" is not installed or not on PATH; install it, or configure "verify.checks" (or "verify.detect": false) in ".agent/x/agent.json"`,
    );
  });

  await t.step("a configured command check whose executable is missing", async () => {
    const def = definition({
      verify: { checks: [{ type: "command", command: "no-such-tool-here --all" }] },
    });
    await assert.rejects(
      preflight({ ...base, definition: def, checks: await prepareChecks(def, repo.path) }),
      /Check "no-such-tool-here --all" \(from "verify.checks\[0\].command" in ".agent\/x\/agent.json"\) cannot start/,
    );
  });

  await t.step("allowed tools without Bash cannot run the checks", async () => {
    const def = definition({ behavior: { allowedTools: ["Read", "Edit"] } });
    await assert.rejects(
      preflight({ ...base, definition: def, checks: await prepareChecks(def, repo.path) }),
      /"behavior.allowedTools" in ".agent\/x\/agent.json" has no "Bash", so the agent cannot run the checks \("npm test"\)/,
    );
  });

  await t.step("allowed tools that cannot edit, for an agent that must change code", async () => {
    // Detection off: otherwise the missing "Bash" for the detected "npm test" is refused first,
    // and this step is about the editing tools alone.
    const def = definition({ behavior: { allowedTools: ["Read"] }, verify: { detect: false } });
    await assert.rejects(
      preflight({ ...base, definition: def, checks: await prepareChecks(def, repo.path) }),
      /lets the agent edit no file/,
    );
    // acceptEdits lets it edit with the same tools.
    await preflight({
      ...base,
      permissionMode: "acceptEdits",
      definition: def,
      checks: await prepareChecks(def, repo.path),
    });
  });

  await t.step("--create-pr without a remote, or without gh logged in", async () => {
    const def = definition({});
    const checks = await prepareChecks(def, repo.path);
    const gitRepo = (await GitRepo.open(repo.path))!;
    await using gh = await FakeGitHub.create({ authenticated: false });
    const github = new GitHubCli({ cwd: repo.path, gh: `${gh.binDir}/gh`, env: gh.env() });
    await assert.rejects(
      preflight({ ...base, definition: def, checks, createPr: { repo: gitRepo, github } }),
      /Flag "--create-pr" needs a remote to push to, and ".*" has none/,
    );
    await using remote = await tempDir();
    await git(remote.path, "init", "-q", "--bare");
    await git(repo.path, "remote", "add", "origin", remote.path);
    await assert.rejects(
      preflight({ ...base, definition: def, checks, createPr: { repo: gitRepo, github } }),
      /The GitHub CLI is not logged in/,
    );
  });
});
