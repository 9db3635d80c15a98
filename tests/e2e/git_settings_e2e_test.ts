/**
 * End to end for "git cannot run agent code": the agent installs hooks
 * (through `core.hooksPath` and in `.git/hooks`) and an fsmonitor, then does
 * its work; finishline's checks (baseline, final state, original tests in a
 * worktree) run git without firing any of them, the report names the
 * changes, and `.git/config` is byte-identical afterwards. The real CLI, the
 * real Claude Code binary against the scripted model, real git.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { commitAgent, git, runCli, tempDir, tempRepo } from "../_helpers.ts";

const BROKEN = "exports.add = (a, b) => a - b;\n";
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
`;

Deno.test("hooks and settings the agent adds never run during finishline's checks, and are undone at the end", async () => {
  await using repo = await tempRepo();
  await using outside = await tempDir("finishline-marks-");
  const marks = outside.path;
  await Deno.mkdir(join(repo.path, "src"));
  await Deno.mkdir(join(repo.path, "test"));
  await Deno.writeTextFile(
    join(repo.path, "package.json"),
    JSON.stringify({ name: "math", scripts: { test: "node --test" } }),
  );
  await Deno.writeTextFile(join(repo.path, "src/math.js"), BROKEN);
  await Deno.writeTextFile(join(repo.path, "test/math.test.js"), TEST);
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "math with a bug");
  // The layer under test is the one for runs without a sandbox (in one, .git/config and
  // .git/hooks are read-only to the agent, and the marks folder is not in its world).
  await commitAgent(repo.path, {
    name: "gits",
    behavior: { completionType: "iterate", completionConfig: { maxIterations: 1 } },
    verify: { sandbox: "off" },
  });
  const configBefore = await Deno.readFile(join(repo.path, ".git/config"));

  // Each hook leaves a marker, and the pre-commit one weakens the test too. The
  // agent runs this script (one command: Claude Code asks before compound ones).
  const hook = (name: string) => `#!/bin/sh\\ntouch ${marks}/${name}\\n`;
  const arm = join(marks, "arm.sh");
  await Deno.writeTextFile(
    arm,
    [
      "set -e",
      "mkdir -p lib/hooks",
      ...["post-checkout", "pre-commit", "post-commit", "reference-transaction"].map((name) =>
        `printf '${hook(name)}' > lib/hooks/${name}`
      ),
      `printf 'sed -i s/4/0/ test/math.test.js\\n' >> lib/hooks/pre-commit`,
      "chmod +x lib/hooks/*",
      // Committed while no hook is in place yet: the agent's work is all committed.
      "git add lib/hooks && git commit -qm 'chore: hooks'",
      "cp lib/hooks/pre-commit lib/hooks/post-checkout .git/hooks/",
      `printf '${hook("fsmonitor")}' > ${marks}/fsmonitor.sh`,
      `chmod +x ${marks}/fsmonitor.sh`,
      "git config core.hooksPath lib/hooks",
      `git config core.fsmonitor ${marks}/fsmonitor.sh`,
      "",
    ].join("\n"),
  );
  // The fix, and one more test in the test file (the originals then run in a
  // worktree), committed before the hooks are in place: the agent's own git runs none.
  const work = [
    `printf 'exports.add = (a, b) => a + b;\\n' > src/math.js`,
    `printf 'test("adds zero", () => assert.equal(add(2, 0), 2));\\n' >> test/math.test.js`,
    "git commit -qam 'fix: add() adds'",
  ].join(" && ");
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: work }),
      toolTurn("Bash", { command: `sh ${arm}` }),
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "Fix add()",
        summary: "Fixed add() and tested adding zero",
      }),
      textTurn("Done."),
    ]],
  });
  const run = await runCli([
    "--agent",
    "gits",
    "--task",
    "Fix add() so that the tests pass",
    "--iterate-max",
    "1",
    "--json",
  ], {
    cwd: repo.path,
    server,
  });
  const result = JSON.parse(run.stdout);
  assert.equal(run.code, 0, `${run.stderr}\n${await Deno.readTextFile(result.logFile)}`);

  const fired: string[] = [];
  for await (const entry of Deno.readDir(marks)) {
    if (!entry.name.endsWith(".sh")) fired.push(entry.name);
  }
  assert.deepEqual(fired, [], "no hook and no fsmonitor ran");
  assert.match(await Deno.readTextFile(join(repo.path, "test/math.test.js")), /add\(2, 2\), 4/);

  assert.deepEqual(
    await Deno.readFile(join(repo.path, ".git/config")),
    configBefore,
    ".git/config is byte-identical",
  );
  await assert.rejects(Deno.stat(join(repo.path, ".git/hooks/pre-commit")));
  await assert.rejects(Deno.stat(join(repo.path, ".git/hooks/post-checkout")));
  assert.ok(
    (await Deno.stat(join(repo.path, "lib/hooks/pre-commit"))).isFile,
    "the agent's files stay",
  );

  const report = await Deno.readTextFile(result.report);
  assert.match(
    report,
    /Git settings changed during the run, restored at its end: \.git\/config modified \(added core\.hookspath = lib\/hooks, added core\.fsmonitor = [^)]*fsmonitor\.sh\); \.git\/hooks\/post-checkout added; \.git\/hooks\/pre-commit added/,
  );
  assert.match(run.stderr, /git settings changed during the run, restored: \.git\/config modified/);
  const log = (await Deno.readTextFile(result.logFile)).trim().split("\n").map((line) =>
    JSON.parse(line)
  );
  const restored = log.find((record) => record.kind === "git_config_restored");
  assert.deepEqual(
    restored?.changes.map((change: { file: string }) => change.file),
    [".git/config", ".git/hooks/post-checkout", ".git/hooks/pre-commit"],
  );
  assert.match(report, /`test\/math.test.js` \(modified, test file\)/);
});
