/**
 * End to end: the CLI as a subprocess, the real Claude Agent SDK and Claude
 * Code binary, a scripted model server, real git in temp repositories.
 */

import assert from "node:assert/strict";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";
import { VERSION } from "../../agents/support/version.ts";

Deno.test("iterate runs exactly N sessions, each really running its Bash call, and exits 0", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    scripts: ({ sessionIndex }) => [
      toolTurn("Bash", {
        command: `echo "iteration ${
          sessionIndex + 1
        }" >> progress.txt && git add progress.txt && git commit -qm "docs: progress ${
          sessionIndex + 1
        }"`,
      }),
      textTurn(`Iteration ${sessionIndex + 1} done.`),
    ],
  });
  const run = await runCli([
    "--iterate-max",
    "3",
    "--json",
    "--task",
    "Write progress notes",
  ], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.sessionIds().length, 3);
  const progress = await Deno.readTextFile(`${repo.path}/progress.txt`);
  assert.equal(progress, "iteration 1\niteration 2\niteration 3\n");
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.completionReason, "Completed 3/3 iterations");
  assert.equal(result.iterations, 3);
  assert.deepEqual(result.sessionIds, server.sessionIds());
  assert.ok(result.costUsd > 0);
  assert.ok(result.durationMs > 0);
  assert.match(result.runId, /^[0-9a-f-]{36}$/);
  const log = await Deno.readTextFile(result.logFile);
  assert.ok(log.includes('"kind":"run_finished"'));
  assert.ok(
    !log.includes("sk-finishline"),
    "the API key must not reach the log",
  );
  assert.match(run.stderr, /iteration 3\/3 · .* · tools: Bash · complete/);
  // No check in this repository: an iterate run completes, and says nothing checked it.
  assert.match(
    run.stderr,
    /\[finishline\] Done: Completed 3\/3 iterations; unverified: no checks found; 3 iterations in /,
  );
  assert.equal(result.unverified, "no checks found");
  const firstPrompt = JSON.stringify(
    server.requests.find((request) => !request.side)?.body,
  );
  assert.ok(
    firstPrompt.includes("Write progress notes"),
    "the task reaches the model",
  );
  assert.ok(
    firstPrompt.includes("This task runs for 3 iterations"),
    "criteria reach the system prompt",
  );
});

Deno.test("manual stops in the iteration whose response holds the keyword", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        toolTurn(COMPLETE_TASK_TOOL, {
          status: "partial",
          original_request_summary: "Finish the work",
          summary: "Still working on it: half of the files are converted.",
          remaining_work: "the other half",
        }),
        textTurn("Still working on it."),
      ],
      [textTurn("Everything is in place. ALL DONE")],
      [textTurn("This session must never start.")],
    ],
  });
  const run = await runCli([
    "--keyword",
    "ALL DONE",
    "--iterate-max",
    "5",
    "--json",
  ], { cwd: repo.path, server });
  // The keyword is the agent's word and this repository has no check: unverified, exit 7.
  assert.equal(run.code, 7, run.stderr);
  assert.equal(server.sessionIds().length, 2);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 2);
  assert.equal(result.status, "unverified");
  assert.equal(
    result.completionReason,
    "unverified: no checks found; the agent called the work done in iteration 2, and nothing checked it",
  );
  const second =
    server.requests.filter((request) => !request.side && request.sessionIndex === 1)[0];
  assert.ok(
    JSON.stringify(second.body).includes("Still working on it."),
    "continuation carries the summary",
  );
});

Deno.test("a run that never completes ends at the cap with exit 3", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    fallback: textTurn("Not yet."),
  });
  const run = await runCli(["--keyword", "FINISHED", "--iterate-max", "2"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(server.sessionIds().length, 2);
  assert.match(run.stderr, /\[finishline\] Stopped at the iteration cap \(2\)/);
});

Deno.test("a custom handler dropped into .agent/<name>/completion/ is loaded and decides", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/.agent/marker/completion`, {
    recursive: true,
  });
  await Deno.writeTextFile(
    `${repo.path}/.agent/marker/agent.json`,
    JSON.stringify({
      name: "marker",
      behavior: {
        completionType: "custom",
        completionConfig: {
          handlerPath: "completion/marker.ts",
          maxIterations: 4,
        },
        allowedTools: ["Bash"],
      },
    }),
  );
  await Deno.writeTextFile(
    `${repo.path}/.agent/marker/completion/marker.ts`,
    `export default function (definition, args) {
  const marker = args.cwd + "/MARKER";
  return {
    type: "custom",
    buildInitialPrompt: async () => "Create the MARKER file in " + args.cwd,
    buildContinuationPrompt: async (iteration) => "Iteration " + iteration + ": the MARKER file is still missing",
    buildCompletionCriteria: () => ({ short: "MARKER exists", detailed: "Create a file named MARKER." }),
    isComplete: async () => { try { await Deno.stat(marker); return true; } catch { return false; } },
    getCompletionDescription: async (summary) => "MARKER found after iteration " + summary.iteration,
  };
}
`,
  );
  await using server = await ScriptedModelServer.start({
    scripts: [
      [textTurn("Looking around first.")],
      [
        toolTurn("Bash", {
          command: "touch MARKER && git add MARKER && git commit -qm 'feat: marker'",
        }),
        textTurn("Created it."),
      ],
    ],
  });
  const run = await runCli(
    ["--agent", "marker", "--json", "--cwd", repo.path],
    { cwd: repo.path, server },
  );
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.completionReason, "MARKER found after iteration 2");
  assert.equal(server.sessionIds().length, 2);
  const second =
    server.requests.filter((request) => !request.side && request.sessionIndex === 1)[0];
  assert.ok(
    JSON.stringify(second.body).includes("the MARKER file is still missing"),
  );
});

Deno.test("--dry-run prints handler, system prompt and first prompt and calls no model", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start();
  const run = await runCli([
    "--iterate-max",
    "2",
    "--dry-run",
    "--task",
    "Sort the imports",
  ], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(server.requests.length, 0);
  assert.match(run.stdout, /Handler: +iterate \(2 iterations\)/);
  assert.match(run.stdout, /--- system prompt/);
  assert.match(run.stdout, /Sort the imports/);
  const json = await runCli(["--dry-run", "--json", "--keyword", "OK"], {
    cwd: repo.path,
    server,
  });
  const parsed = JSON.parse(json.stdout);
  assert.equal(parsed.handler, "manual");
  assert.equal(server.requests.length, 0);
  await assert.rejects(
    Deno.stat(`${repo.path}/.agent`),
    Deno.errors.NotFound,
    "a dry run writes nothing",
  );
});

Deno.test("SIGINT during an iteration stops the agent and exits 130", async () => {
  await using repo = await tempRepo();
  let firstRequest: () => void;
  const requested = new Promise<void>((resolve) => firstRequest = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [[() => {
      firstRequest();
      return { text: "This reply comes too late.", delayMs: 60_000 };
    }]],
  });
  const started = performance.now();
  let stoppedAt = 0;
  const run = await runCli(["--iterate-max", "3"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await requested;
      stoppedAt = performance.now();
      child.kill("SIGINT");
    },
  });
  assert.equal(run.code, 130, run.stderr);
  assert.match(
    run.stderr,
    /\[finishline\] Interrupted during iteration 1\. Resume with: deno run -A \S+main\.ts --resume [0-9a-f-]{36}; /,
  );
  assert.ok(
    performance.now() - stoppedAt < 15_000,
    "exits within seconds of the signal",
  );
  assert.ok(performance.now() - started < 50_000);
});

Deno.test("bad input gets one line, exit 2, and nothing written", async (t) => {
  await using repo = await tempRepo();
  const cases: Array<[string[], RegExp]> = [
    [["--issue", "abc"], /Flag "--issue" expects an issue number/],
    [["--issue", "0"], /Flag "--issue" expects an issue number/],
    [["--issue", "4", "--project", "2"], /"--issue" and "--project" conflict/],
    [["--frobnicate"], /Unknown flag "--frobnicate"/],
    [["--agent", "nope"], /Unknown agent "nope"/],
    [["--iterate-max", "-3"], /--iterate-max/],
  ];
  for (const [args, message] of cases) {
    await t.step(args.join(" "), async () => {
      const run = await runCli(args, { cwd: repo.path });
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, /\s+at /, "no stack trace");
    });
  }
  assert.equal(await git(repo.path, "status", "--porcelain"), "");
});

Deno.test("--list shows the built-in agent and --init scaffolds a working custom agent", async () => {
  await using repo = await tempRepo();
  const list = await runCli(["--list"], { cwd: repo.path });
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^iterator +built-in +iterate/m);
  const init = await runCli(["--init", "greeter"], { cwd: repo.path });
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /created \.agent\/greeter\/agent\.json/);
  // What to run next, as the user runs finishline.
  assert.match(
    init.stdout,
    /\nNext, .*\n {2}deno run -A \S+main\.ts --agent greeter --goal "[^"]+" --dry-run\n/,
  );
  const again = await runCli(["--init", "greeter"], { cwd: repo.path });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already exists/);

  // The handler imports the contract's types from the package; mapped to this
  // checkout's kit (JSR is not reached here), it type-checks.
  const handler = `${repo.path}/.agent/greeter/completion/handler.ts`;
  const kit = `jsr:@finishline/agents@${VERSION}/kit`;
  assert.ok((await Deno.readTextFile(handler)).includes(`} from "${kit}";`));
  const map = `${repo.path}/.agent/map.json`;
  await Deno.writeTextFile(
    map,
    JSON.stringify({ imports: { [kit]: new URL("../../agents/kit.ts", import.meta.url).href } }),
  );
  const checked = await new Deno.Command(Deno.execPath(), {
    args: ["check", "--quiet", "--import-map", map, handler],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(checked.code, 0, new TextDecoder().decode(checked.stderr));
  await Deno.remove(map);

  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "Say hello",
        summary: "Said hello",
      }),
      textTurn("Done."),
    ]],
  });
  const run = await runCli([
    "--agent",
    "greeter",
    "--goal",
    "Say hello",
    "--json",
  ], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    JSON.parse(run.stdout).completionReason,
    "Goal reached in iteration 1",
  );
  const prompt = JSON.stringify(
    server.requests.find((request) => !request.side)?.body,
  );
  assert.ok(prompt.includes("Say hello"));
  // One way to finish, said the same in the prompt and the system prompt.
  assert.match(prompt, /call the complete_task tool with status success/);
  assert.doesNotMatch(prompt, /```action|fenced `action`/);
});

Deno.test("the runner works from another repository's folder through an absolute path", async () => {
  await using repo = await tempRepo();
  await using elsewhere = await tempDir();
  await using server = await ScriptedModelServer.start({
    fallback: textTurn("ok"),
  });
  const run = await runCli(["--iterate-max", "1", "--cwd", repo.path], {
    cwd: elsewhere.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const logs = [...Deno.readDirSync(`${repo.path}/.agent/iterator/logs`)].map((entry) =>
    entry.name
  );
  assert.equal(
    logs.filter((name) => name.endsWith(".jsonl")).length,
    1,
    "the log goes to the --cwd repository",
  );
  assert.equal(logs.filter((name) => name.endsWith(".md")).length, 1, "and so does the report");
});
