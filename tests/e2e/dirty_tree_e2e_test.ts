/**
 * End to end for the user's work in progress: a run started in a working tree
 * with uncommitted changes warns at the start (naming up to 5 files and
 * suggesting `--worktree`), and its report keeps the user's files apart from
 * what the run left. The CLI as a subprocess, the real Claude Code binary
 * against the scripted model, real git.
 */

import assert from "node:assert/strict";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { git, runCli, tempRepo } from "../_helpers.ts";

const leaveWip = toolTurn("Bash", { command: "printf 'half done\\n' > wip.txt" });

Deno.test("a dirty working tree: a warning at the start, and the report separates the user's files from the run's", async () => {
  await using repo = await tempRepo();
  // The user's work in progress: a changed tracked file, an untracked one, and one the agent will touch.
  await Deno.writeTextFile(`${repo.path}/README.md`, "# test repo\n\nDraft.\n");
  await Deno.writeTextFile(`${repo.path}/notes.txt`, "mine\n");
  await Deno.writeTextFile(`${repo.path}/shared.txt`, "mine too\n");
  await using server = await ScriptedModelServer.start({
    scripts: [[
      leaveWip,
      toolTurn("Bash", { command: "printf 'agent was here\\n' >> shared.txt" }),
      textTurn("Worked on it."),
    ]],
  });
  const run = await runCli(["--iterate-max", "1", "--task", "Start a file", "--json"], {
    cwd: repo.path,
    server,
  });
  // The cap, with the run's own files uncommitted: the user's are not held against it, not even
  // shared.txt, which the agent touched (the rescue prompt tells the agent to leave it uncommitted).
  assert.equal(run.code, 3, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.match(result.completionReason, /"wip\.txt" is still uncommitted/);
  assert.doesNotMatch(result.completionReason, /shared\.txt|notes\.txt|README/);
  // The final rescue asked again (the script's fallback answers without committing).
  assert.deepEqual(result.finalRescue, {
    status: "max_iterations",
    by: "agent",
    files: ["wip.txt"],
    left: ["wip.txt"],
    commit: null,
  });
  const warning = run.stderr.split("\n").filter((line) => /warning: the working tree/.test(line));
  assert.equal(warning.length, 1, run.stderr);
  assert.match(warning[0], /uncommitted changes \(README\.md, notes\.txt, shared\.txt\)/);
  assert.match(warning[0], /run with --worktree/);
  assert.doesNotMatch(warning[0], /wip\.txt/, "the warning comes before the agent works");

  const report = await Deno.readTextFile(result.report);
  assert.match(report, /^Left uncommitted: `shared\.txt`, `wip\.txt`$/m);
  assert.match(
    report,
    /^Uncommitted before the run, untouched by it \(yours\): `README\.md`, `notes\.txt`$/m,
  );
  // Nothing of the user's was committed or lost.
  assert.equal(await Deno.readTextFile(`${repo.path}/notes.txt`), "mine\n");
  assert.equal((await git(repo.path, "log", "--format=%s")).trim(), "initial commit");
});

Deno.test("the warning names 5 files and counts the rest; a clean tree and --worktree get none", async () => {
  await using repo = await tempRepo();
  for (const n of [1, 2, 3, 4, 5, 6, 7]) await Deno.writeTextFile(`${repo.path}/f${n}.txt`, "x\n");
  await using server = await ScriptedModelServer.start({
    scripts: [[textTurn("Nothing to do.")], [textTurn("Nothing to do.")]],
  });
  const dirty = await runCli(["--iterate-max", "1", "--task", "Look around"], {
    cwd: repo.path,
    server,
  });
  assert.equal(dirty.code, 0, dirty.stderr);
  assert.match(
    dirty.stderr,
    /uncommitted changes \(f1\.txt, f2\.txt, f3\.txt, f4\.txt, f5\.txt and 2 more\)/,
  );

  const isolated = await runCli(["--iterate-max", "1", "--task", "Look around", "--worktree"], {
    cwd: repo.path,
    server,
  });
  assert.equal(isolated.code, 0, isolated.stderr);
  assert.doesNotMatch(isolated.stderr, /warning: the working tree/);

  await using clean = await tempRepo();
  await using again = await ScriptedModelServer.start({ scripts: [[textTurn("Nothing.")]] });
  const run = await runCli(["--iterate-max", "1", "--task", "Look around"], {
    cwd: clean.path,
    server: again,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /warning/);
});
