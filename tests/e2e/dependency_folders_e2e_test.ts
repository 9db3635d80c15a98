/**
 * End to end, a pnpm 11 workspace: the real Claude Code binary against the
 * scripted model server, the CLI as a subprocess, finishline detecting the
 * workspace's own `pnpm test`, real pnpm and `node --test`. pnpm, run by a
 * check in a clean copy, writes into that copy's dependency folders; the
 * correct fix must still complete, and the checkout's folders must stay as
 * they were. An edit inside an installed package must not.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { listTree } from "../../agents/evidence/copy/dependency_tree.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { commitAgent, git, runCli, tempDir, tempRepo } from "../_helpers.ts";
import { FIXED_A, pnpmWorkspace, toolBin } from "../evidence/copy/_package_managers.ts";

const KEYWORD = "SHIPPED";
const AGENT = {
  name: "fixer",
  behavior: {
    completionType: "manual",
    completionConfig: { completionKeyword: KEYWORD, maxIterations: 1 },
    allowedTools: ["Bash"],
  },
  probe: { enabled: false },
};
const ENTRIES = ["node_modules", "packages/a/node_modules", "packages/b/node_modules"];

async function fingerprint(root: string): Promise<string> {
  return JSON.stringify([...await listTree(root, ENTRIES)].sort());
}

/** Runs the CLI in a pnpm workspace with a bug, the agent playing `command` then claiming. */
async function play(command: string) {
  await using tools = await tempDir();
  const bin = await toolBin(tools.path);
  await using repo = await tempRepo();
  await pnpmWorkspace(repo.path, bin, `${tools.path}/store`);
  await commitAgent(repo.path, AGENT);
  const before = await fingerprint(repo.path);
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command }),
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "Fix quadruple()",
        summary: "Fixed quadruple()",
      }),
      ...Array.from({ length: 6 }, () => textTurn(`All tests pass. ${KEYWORD}`)),
    ]],
    fallback: textTurn(`Nothing to add. ${KEYWORD}`),
  });
  const run = await runCli(["--agent", AGENT.name, "--json"], {
    cwd: repo.path,
    server,
    env: { PATH: `${bin}:${Deno.env.get("PATH")}` },
  });
  const result = JSON.parse(run.stdout);
  const finished = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line))
    .filter((record: { kind: string }) => record.kind === "iteration_finished");
  return {
    status: result.status as string,
    checks: finished.at(-1)?.summary.checks,
    stderr: run.stderr,
    unchanged: await fingerprint(repo.path) === before,
    worktrees: (await git(repo.path, "worktree", "list")).split("\n"),
  };
}

Deno.test("a pnpm 11 workspace: the correct fix completes, and the checkout's node_modules stay as they were", async () => {
  const run = await play(
    `cat > packages/a/index.js <<'EOF'\n${FIXED_A}EOF\ngit commit -qam 'fix: quadruple'`,
  );
  assert.equal(run.status, "completed", `${JSON.stringify(run.checks)}\n${run.stderr}`);
  assert.deepEqual(
    run.checks?.checks.map((
      check: { name: string; baseline: string; now: string },
    ) => [check.name, check.baseline, check.now]),
    [["pnpm test", "red", "green"]],
  );
  assert.equal(run.checks?.dependencyChanges, undefined);
  assert.ok(run.unchanged, "the checks wrote into the checkout's dependency folders");
  assert.equal(run.worktrees.length, 1, run.worktrees.join("\n"));
});

Deno.test("a pnpm 11 workspace: a dependency edited to make the tests pass is refused, the file named", async () => {
  const run = await play(
    `f=$(ls -d node_modules/.pnpm/lib-x@*/node_modules/lib-x/lib/x.js)\ncat > "$f" <<'EOF'\nmodule.exports = (n) => ({ 3: 10, 1: 2 })[n] ?? n * 2;\nEOF\npnpm test && git commit -q --allow-empty -m 'fix: quadruple'`,
  );
  assert.notEqual(run.status, "completed");
  assert.match(
    (run.checks?.dependencyChanges ?? []).join("\n"),
    /^node_modules\/\.pnpm\/lib-x@[^/]+\/node_modules\/lib-x\/lib\/x\.js \(changed\)$/,
  );
});
