/**
 * End to end: a model the agent cannot use fails in seconds with its cause.
 * Before the first session, no key, a refused port and a name that does not
 * resolve are each one line on stderr, exit 2, and nothing recorded. During
 * a run, a scripted server that goes away is named with the cause (Claude
 * Code reports none), and the finish workflow asks the model nothing more.
 */

import assert from "node:assert/strict";
import { ScriptedModelServer, toolTurn } from "../../agents/testing/mod.ts";
import { commitAgent, git, runCli, tempDir, tempRepo } from "../_helpers.ts";

const blank = (names: string[]) => Object.fromEntries(names.map((name) => [name, ""]));

/** The machine's proxies, blanked: the agent connects to the scripted servers directly. */
const NO_PROXY_ENV: Record<string, string> = blank([
  "HTTPS_PROXY",
  "https_proxy",
  "HTTP_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "all_proxy",
  "FINISHLINE_SKIP_MODEL_CHECK",
]);

/** The machine's credentials and API settings, blanked too: each case sets its own. */
const BLANK: Record<string, string> = {
  ...NO_PROXY_ENV,
  ...blank([
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_UNIX_SOCKET",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
  ]),
};

/** A port nothing listens on (it was free a moment ago). */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

for (
  const [name, env, line] of [
    [
      "no key",
      {},
      /^finishline: No credentials for the claude backend: looked for ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, a Claude Code login \(~\/\.claude\/\.credentials\.json\) and an "apiKeyHelper" setting; run `claude login` \(Claude Code's own login\), or set ANTHROPIC_API_KEY to a key from console\.anthropic\.com$/,
    ],
    [
      "no API (a refused port)",
      { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: "http://127.0.0.1:PORT" },
      /^finishline: Cannot reach the model API at 127\.0\.0\.1:PORT \(ANTHROPIC_BASE_URL\): connection refused \(ECONNREFUSED\); check that it is running, or ANTHROPIC_BASE_URL$/,
    ],
    [
      "a bad host",
      { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: "https://nohost.invalid" },
      /^finishline: Cannot reach the model API at nohost\.invalid:443 \(ANTHROPIC_BASE_URL\): DNS lookup (failed \(E[A-Z_]+\)|timed out after 4 s); check the network, or ANTHROPIC_BASE_URL$/,
    ],
  ] as const
) {
  Deno.test(`${name}: one line, exit 2, nothing recorded, no session`, async () => {
    await using repo = await tempRepo();
    await using home = await tempDir("finishline-home-");
    const port = String(closedPort());
    const given = Object.fromEntries(
      Object.entries(env).map(([key, value]) => [key, value.replace("PORT", port)]),
    );
    const run = await runCli(["--task", "Add a greeting", "--worktree"], {
      cwd: repo.path,
      env: {
        ...BLANK,
        HOME: home.path,
        CLAUDE_CONFIG_DIR: `${home.path}/.claude`,
        ...given,
      },
    });
    assert.equal(run.code, 2, run.stderr);
    const lines = run.stderr.trim().split("\n");
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0], new RegExp(line.source.replace("PORT", port)));
    // `claude login` is named where it helps: when no credentials were found, not for a network fault.
    if (name !== "no key") assert.doesNotMatch(run.stderr, /claude login/);
    assert.equal(run.stdout, "");
    assert.equal(await exists(`${repo.path}/.agent`), false, "no store, no lock, no log");
    assert.equal(await git(repo.path, "status", "--porcelain"), "");
    assert.equal(
      (await git(repo.path, "worktree", "list")).split("\n").length,
      1,
      "no worktree made",
    );
    assert.equal(await git(repo.path, "branch", "--list"), "* main", "no branch made");
    assert.deepEqual([...Deno.readDirSync(home.path)], [], "Claude Code was not started");
  });
}

Deno.test("--dry-run makes no model check: it works without a key or a network", async () => {
  await using repo = await tempRepo();
  await using home = await tempDir("finishline-home-");
  const run = await runCli(["--task", "Add a greeting", "--dry-run"], {
    cwd: repo.path,
    env: { ...BLANK, HOME: home.path, ANTHROPIC_BASE_URL: "https://nohost.invalid" },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^Agent: +iterator/m);
});

Deno.test("FINISHLINE_SKIP_MODEL_CHECK skips the check: the run starts, and names the cause of its connection errors", async () => {
  await using repo = await tempRepo();
  await using home = await tempDir("finishline-home-");
  const port = closedPort();
  const run = await runCli(["--task", "Add a greeting", "--max-wait", "1", "--json"], {
    cwd: repo.path,
    env: {
      ...BLANK,
      HOME: home.path,
      CLAUDE_CONFIG_DIR: `${home.path}/.claude`,
      // Claude Code's own temp files (claude-<uid>/, cc-socks/) go with the home.
      CLAUDE_CODE_TMPDIR: `${home.path}/tmp`,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ANTHROPIC_API_KEY: "sk-test",
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
      FINISHLINE_SKIP_MODEL_CHECK: "1",
    },
  });
  assert.equal(run.code, 1, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.match(
    result.completionReason,
    new RegExp(
      `^Claude's API kept failing \\(connection error: cannot reach 127\\.0\\.0\\.1:${port}: connection refused \\(ECONNREFUSED\\)\\)`,
    ),
  );
  assert.equal(
    await exists(`${repo.path}/.agent/.finishline/state.db`),
    true,
    "the run is recorded",
  );
});

Deno.test("a server that goes away mid-run is named with its cause, and the finish asks the model nothing", async () => {
  await using repo = await tempRepo();
  await using scratch = await tempDir("finishline-mark-");
  await commitAgent(repo.path, {
    name: "steady",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 2 },
      // The server is gone mid-run: no complete_task can arrive, and the Stop hook's
      // request would be one more call to the absent server, which is not what is tested.
      requireCompleteTask: false,
      allowedTools: ["Bash"],
    },
    probe: { enabled: false },
    retry: { baseDelaySeconds: 0 },
    // The agent's command marks the host's temp folder, which a sandbox's /tmp is not.
    verify: { sandbox: "off" },
  });
  const mark = `${scratch.path}/working`;
  const server = await ScriptedModelServer.start({
    // The agent's command says it is at work, then outlasts the server.
    scripts: [[toolTurn("Bash", { command: `touch '${mark}' && sleep 2` })]],
  });
  const port = new URL(server.url).port;
  let closed = false;
  const run = await runCli([
    "--agent",
    "steady",
    "--task",
    "Add a greeting",
    "--max-wait",
    "3",
    "--json",
  ], {
    cwd: repo.path,
    server,
    env: NO_PROXY_ENV,
    onSpawn: () => {
      void (async () => {
        while (!(await exists(mark))) await new Promise((resolve) => setTimeout(resolve, 50));
        await server.close();
        closed = true;
      })();
    },
  });
  await server.close();
  assert.ok(closed, "the server went away during the run");
  assert.equal(run.code, 1, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "failed");
  const cause = `cannot reach 127.0.0.1:${port}: connection refused (ECONNREFUSED)`;
  assert.ok(
    result.completionReason.startsWith(
      `Claude's API kept failing (connection error: ${cause}) for `,
    ),
    result.completionReason,
  );
  assert.match(
    run.stderr,
    new RegExp(`API retry 1/\\d+ \\(connection error: ${cause.replace(/[.()]/g, "\\$&")}\\)`),
  );
  assert.doesNotMatch(run.stderr, /no response|unknown/);
  const log = (await Deno.readTextFile(result.logFile)).split("\n").filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    log.filter((event) => event.kind === "finish_fallback").map((
      event,
    ) => [event.step, event.reason]),
    (["summary", "learnings", "skills", "next_actions"] as const).map((step) => [
      step,
      "the run ended because the model could not be used",
    ]),
  );
  // Its process may have been opened ahead (from the iteration before the cap), but it asked nothing.
  assert.deepEqual(
    log.filter((event) => event.kind === "finish_model"),
    [],
    "no finish model session asked anything",
  );
  assert.equal(server.requests.filter((request) => request.side).length, 0);
  const report = await Deno.readTextFile(result.report);
  assert.match(
    report,
    /^- Finish: no model was asked, since the run ended because the model could not be used/m,
  );
});
