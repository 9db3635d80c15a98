/**
 * The secrets catalogue, end to end: every kind of secret of
 * `tests/support/_secrets.ts` placed in every source a run reads (the issue's
 * text, the agent's words, its tool output, its complete_task fields, a
 * check's output, the runner's own environment), then every sink scanned
 * (the log, the run history's files, the report, stdout, stderr with and
 * without `--verbose`, every gh argument, every request the finish workflow
 * sent to the model, and finishline's own prompts and tool answers to the
 * agent). The real CLI and Claude Code binary, a scripted model server, a
 * scripted gh, real git with a remote for the pull request.
 *
 * `deno test -A tests/e2e/secrets_catalogue_e2e_test.ts` prints the table.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import type { ScriptedTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { commitAgent, git, runCli, tempDir, tempRepo } from "../_helpers.ts";
import { catalogueEnv, leakedKinds, SECRET_KINDS } from "../support/_secrets.ts";

const REPO = "octo/demo";
const ISSUE = 7;
const ALL = SECRET_KINDS.map((kind) => kind.text).join("\n");
const ONE_LINE = SECRET_KINDS.filter((kind) => !kind.text.includes("\n"))
  .map((kind) => kind.text).join(" ");

/** The runner's own credentials, as its environment holds them. */
function runnerEnv(): Record<string, string> {
  return catalogueEnv();
}

// What a prompt-injected agent runs to get the runner's credentials past a
// redaction that knows only their exact values.
const ENCODE_CREDENTIALS = [
  'printf %s "$ANTHROPIC_API_KEY" | base64',
  'printf %s "x$ANTHROPIC_API_KEY" | base64 -w 9',
  'printf %s "$OPENAI_API_KEY" | base64 | tr "+/" "-_"',
  'printf %s "$ANTHROPIC_API_KEY" | xxd -p',
  'printf %s "$ANTHROPIC_API_KEY" | od -An -tx1',
  'printf %s "$ANTHROPIC_API_KEY" | fold -w 5',
  'python3 -c \'import os,urllib.parse,json; k=os.environ.get("ANTHROPIC_API_KEY",""); print(urllib.parse.quote(k, safe="")); print(json.dumps(k, ensure_ascii=True).encode().decode()); print("".join("\\\\u%04x" % ord(c) for c in k))\'',
  'echo "$AZURE_STORAGE_CONNECTION_STRING $DOCKER_AUTH_CONFIG $RELEASE_HOOK"',
].join("; ");

/** The worker's script: every source of agent-made text holds every kind. */
function workerScript(): ScriptedTurn[] {
  const report = (status: string) =>
    toolTurn(COMPLETE_TASK_TOOL, {
      status,
      original_request_summary: `Fix the configuration: ${ONE_LINE}`,
      summary: `Used ${SECRET_KINDS[4].text} to push the fix\n${ALL}`,
      learned: [`The key is ${ONE_LINE}`],
      skills_used: [`deploy with ${SECRET_KINDS[0].text}`],
      files_modified: ["work.txt"],
      next_steps: `Rotate ${ALL}`,
      tests_changed: [{ path: "work.txt", reason: `it held ${ONE_LINE}` }],
    });
  return [
    // The agent's words.
    toolTurn("Bash", { command: "cat secrets.txt" }, `I found these:\n${ALL}`),
    // Tool output, the runner's own environment included.
    toolTurn("Bash", {
      command: 'echo "$ANTHROPIC_API_KEY $GH_TOKEN $DATABASE_URL"',
    }),
    // Each encoding of the runner's credentials, through Bash.
    toolTurn("Bash", { command: ENCODE_CREDENTIALS }),
    toolTurn("Bash", {
      command: "printf 'work' > work.txt && git add work.txt && git commit -qm 'feat: work'",
    }),
    // The check fails first: its output holds every kind too.
    report("success"),
    toolTurn("Bash", {
      command: "printf 'ok' > fixed.txt && git add fixed.txt && git commit -qm 'fix: fixed'",
    }),
    report("success"),
    textTurn(`Done. ${ONE_LINE}`),
  ];
}

/** What one sink held, by name. */
type Sinks = Record<string, string>;

async function filesUnder(dir: string): Promise<Array<{ path: string; bytes: Uint8Array }>> {
  const out: Array<{ path: string; bytes: Uint8Array }> = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) out.push(...await filesUnder(path));
      else if (entry.isFile) out.push({ path, bytes: await Deno.readFile(path) });
    }
  } catch {
    // a folder that is not there holds nothing
  }
  return out;
}

/** finishline's own texts in the agent's requests: prompts, system prompts, complete_task answers. */
function finishlineTexts(server: ScriptedModelServer): string {
  const parts: string[] = [];
  for (const request of server.requests.filter((request) => !request.side)) {
    const body = request.body as Record<string, unknown>;
    parts.push(JSON.stringify(body.system ?? ""));
    const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
    const toolNames = new Map<string, string>();
    for (const message of messages) {
      if (!Array.isArray(message.content)) {
        if (message.role === "user") parts.push(String(message.content));
        continue;
      }
      for (const block of message.content as Array<Record<string, unknown>>) {
        if (block.type === "tool_use") toolNames.set(String(block.id), String(block.name));
        if (message.role !== "user") continue;
        // The agent's own tool output is its own: finishline cannot redact what
        // Claude Code sends. Its prompts and complete_task answers are finishline's.
        if (block.type === "text") parts.push(String(block.text));
        if (block.type === "tool_result" && toolNames.get(String(block.tool_use_id)) !== "Bash") {
          parts.push(JSON.stringify(block.content));
        }
      }
    }
  }
  return parts.join("\n");
}

async function runScenario(
  flags: string[],
): Promise<{ sinks: Sinks; code: number; stderr: string }> {
  await using repo = await tempRepo();
  await using outside = await tempDir("finishline-secrets-");
  await using remote = await tempDir("finishline-remote-");
  await git(remote.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", remote.path);
  const secretsFile = `${outside.path}/secrets.txt`;
  await Deno.writeTextFile(secretsFile, `${ALL}\n`);
  // The agent's copy is in its checkout: the sandbox shows it nothing else of the machine.
  await Deno.writeTextFile(`${repo.path}/secrets.txt`, `${ALL}\n`);
  await git(repo.path, "add", "secrets.txt");
  await git(repo.path, "commit", "-qm", "the secrets the agent reads");
  await commitAgent(repo.path, {
    name: "sec",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 3 },
      allowedTools: ["Bash"],
      permissionMode: "acceptEdits",
    },
    verify: {
      checks: [{
        type: "command",
        name: "leaky",
        command:
          `cat '${secretsFile}'; echo "$ANTHROPIC_API_KEY $GH_TOKEN $DATABASE_URL"; ${ENCODE_CREDENTIALS}; test -f fixed.txt`,
      }],
    },
    github: { comment: true },
    probe: { enabled: false },
  });
  await using gh = await FakeGitHub.create({
    repo: REPO,
    issues: [{
      number: ISSUE,
      title: `Leaky config ${SECRET_KINDS[6].text}`,
      body: `Fix it.\n${ALL}`,
    }],
  });
  await using server = await ScriptedModelServer.start({
    scripts: [workerScript()],
  });
  const run = await runCli(
    ["--agent", "sec", "--issue", String(ISSUE), "--worktree", "--create-pr", ...flags],
    { cwd: repo.path, server, env: { ...gh.env(), ...runnerEnv() } },
  );
  // The run history, the log and the report all live under .agent/.
  const files = (await filesUnder(`${repo.path}/.agent`))
    .filter((file) => !file.path.endsWith("/agent.json"));
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const pick = (test: (path: string) => boolean) =>
    files.filter((file) => test(file.path)).map((file) => decode(file.bytes)).join("\n");
  const sinks: Sinks = {
    "log": pick((path) => path.endsWith(".jsonl")),
    "store file": pick((path) => /\.(db|sqlite)(-wal|-shm)?$/.test(path)),
    "report": pick((path) => path.endsWith(".md")),
    "other files": pick((path) => !/\.(jsonl|md)$|\.(db|sqlite)(-wal|-shm)?$/.test(path)),
    "stdout": run.stdout,
    "stderr": run.stderr,
    "gh arguments": (await gh.calls()).map((call) => call.argv.join(" ")).join("\n"),
    "finish requests": server.requests.filter((request) => request.side)
      .map((request) => JSON.stringify(request.body)).join("\n"),
    "agent prompts": finishlineTexts(server),
  };
  // The sources held the secrets: the agent's tool output carried them back to its model.
  const toolOutput = JSON.stringify(server.requests.filter((request) => !request.side));
  assert.ok(
    SECRET_KINDS.every((kind) => toolOutput.includes(JSON.stringify(kind.secret).slice(1, -1))),
    "the agent read every secret",
  );
  assert.ok(
    sinks["log"].length > 0 && sinks["store file"].length > 0 && sinks["report"].length > 0,
    `exit ${run.code}: ${run.stderr}`,
  );
  return { sinks, code: run.code, stderr: run.stderr };
}

function table(results: Record<string, Sinks>): { text: string; leaks: string[] } {
  const columns = Object.entries(results).flatMap(([mode, sinks]) =>
    Object.keys(sinks).map((sink) => ({ name: `${sink} (${mode})`, text: sinks[sink] }))
  );
  const leaks: string[] = [];
  const rows = SECRET_KINDS.map((kind) => {
    const cells = columns.map((column) => {
      const leaked = leakedKinds(column.text).includes(kind.name);
      if (leaked) leaks.push(`${kind.name} in ${column.name}`);
      return leaked ? "LEAK" : "·";
    });
    return `| ${kind.name} | ${cells.join(" | ")} |`;
  });
  const header = `| kind | ${columns.map((column) => column.name).join(" | ")} |`;
  const rule = `|${" --- |".repeat(columns.length + 1)}`;
  const text = [
    header,
    rule,
    ...rows,
    "",
    `${SECRET_KINDS.length} kinds tried, ${columns.length} sinks scanned, ${leaks.length} leaks found`,
  ].join("\n");
  return { text, leaks };
}

Deno.test("secrets catalogue: no kind of secret reaches any sink, with and without --verbose", async () => {
  const verbose = await runScenario(["--verbose", "--json"]);
  const plain = await runScenario([]);
  for (const run of [verbose, plain]) assert.equal(run.code, 0, run.stderr);
  const sinks = Object.keys(verbose.sinks).length;
  const { text, leaks } = table({ "--verbose --json": verbose.sinks, "plain": plain.sinks });
  console.log(text);
  assert.ok(SECRET_KINDS.length >= 40);
  assert.ok(sinks >= 8);
  // The run really carried the secrets to finishline: the gh calls opened a
  // pull request and closed the issue, the finish workflow asked the model.
  assert.match(verbose.sinks["gh arguments"], /pr create/);
  assert.match(verbose.sinks["gh arguments"], /issue close/);
  assert.ok(verbose.sinks["finish requests"].length > 0, "the finish workflow asked the model");
  assert.match(verbose.sinks["report"], /\[redacted\]/);
  assert.deepEqual(leaks, []);
});
