/**
 * `deno task try` end to end: the export lines it prints run the real CLI
 * against its scripted server, and Ctrl-C removes its temp folders.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { denoDir, git, runCli, tempDir } from "./_helpers.ts";

const TRY = fileURLToPath(new URL("../tools/try.ts", import.meta.url));
const READY = "Each model request is shown below.";

/** `deno run -A tools/try.ts ARGS`, its stdout read as it comes. */
function spawnTry(args: string[] = []) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TRY, ...args],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stdout = "";
  let notify = () => {};
  const reading = (async () => {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      stdout += chunk;
      notify();
    }
  })();
  const stderr = new Response(child.stderr).text();
  /** Resolves with everything printed so far, once `text` has been printed. */
  const printed = async (text: string) => {
    while (!stdout.includes(text)) {
      const status = await Promise.race([
        new Promise<void>((resolve) => notify = resolve),
        child.status,
      ]);
      if (status) throw new Error(`try exited early (${status.code}): ${stdout}${await stderr}`);
    }
    return stdout;
  };
  return { child, printed, output: () => reading.then(() => stdout), stderr };
}

/** The `export NAME=value` lines, as an environment. */
function exportsOf(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, name, value] of text.matchAll(/^export (\w+)=(\S+)$/gm)) env[name] = value;
  return env;
}

Deno.test("deno task try prints the exports that run the CLI offline, and Ctrl-C cleans up", async () => {
  const tryServer = spawnTry();
  const intro = await tryServer.printed(READY);
  const env = exportsOf(intro);
  assert.match(env.ANTHROPIC_BASE_URL, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(env.CLAUDE_CONFIG_DIR, `${env.HOME}/.claude`);
  assert.ok(env.ANTHROPIC_API_KEY, intro);
  // The Deno cache stays where it is, so nothing downloads again under the new HOME.
  assert.equal(env.DENO_DIR, await denoDir());
  const repo = intro.match(/^cd (\S+)$/m)?.[1];
  assert.ok(repo, intro);

  const run = await runCli(["--iterate-max", "1", "--task", "Try finishline", "--json"], {
    cwd: repo,
    home: env.HOME,
    env,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).status, "completed");
  assert.match(await git(repo, "log", "--oneline", "-1"), /chore: try finishline/);
  await tryServer.printed("session 1, turn 2: complete_task");

  tryServer.child.kill("SIGINT");
  assert.equal((await tryServer.child.status).code, 0, await tryServer.stderr);
  assert.match(await tryServer.output(), /SIGINT: stopping/);
  await assert.rejects(Deno.stat(env.HOME), Deno.errors.NotFound);
  await assert.rejects(Deno.stat(repo), Deno.errors.NotFound);
});

Deno.test("deno task try refuses bad flags and bad scripts in one line, exit 2", async (t) => {
  await using dir = await tempDir();
  const bad = `${dir.path}/bad.json`;
  await Deno.writeTextFile(bad, '[{ "toolUses": [{ "name": "Bash", "input": "ls" }] }]');
  const cases: Array<[string[], string]> = [
    [["--port", "http"], 'Flag "--port" expects a port number from 0 to 65535, got "http"'],
    [["--script"], 'Flag "--script" needs a value: a JSON file'],
    [["--verbose"], 'Unknown flag "--verbose": deno task try takes --port N, --script FILE'],
    [
      ["--script", `${dir.path}/none.json`],
      `Cannot read --script "${dir.path}/none.json": file not found`,
    ],
    [
      ["--script", bad],
      `--script "${bad}" at [0].toolUses[0].input: Invalid input: expected record, received string`,
    ],
  ];
  for (const [args, message] of cases) {
    await t.step(args.join(" "), async () => {
      const tryServer = spawnTry(args);
      assert.equal((await tryServer.child.status).code, 2);
      assert.equal(await tryServer.stderr, `${message}\n`);
      assert.equal(await tryServer.output(), "");
    });
  }
});
