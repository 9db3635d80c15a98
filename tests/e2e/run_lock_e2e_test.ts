/**
 * End to end for the run locks: a run SIGKILLed under a parent that never
 * reaps it (a zombie, as in a container without an init) resumes at once,
 * and a second run on the same issue is refused while the first one goes
 * on. The CLI as a subprocess, the real Claude Code binary against the
 * scripted model, real git, the scripted gh.
 */

import assert from "node:assert/strict";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { denoDir, MAIN, runCli, tempDir, tempRepo } from "../_helpers.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { catalogueLine } from "./_fault_catalogue.ts";

const commitTurn = (n: number) =>
  toolTurn("Bash", {
    command:
      `printf '${n}' > step${n}.txt && git add step${n}.txt && git commit -qm 'feat: step ${n}'`,
  });

/** The state letter of a process in /proc (Z for a zombie), or undefined once it is gone. */
async function processState(pid: number): Promise<string | undefined> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** Wait (bounded) until a process is a zombie or gone; its state then. */
async function waitDead(pid: number): Promise<string | undefined> {
  for (let i = 0; i < 500; i++) {
    const state = await processState(pid);
    if (state === undefined || state === "Z") return state;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return await processState(pid);
}

Deno.test({
  name:
    "a run SIGKILLed under a parent that never reaps it is a zombie, and --resume continues it at once",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await using repo = await tempRepo();
    await using home = await tempDir("finishline-home-");
    await using scratch = await tempDir("finishline-zombie-");
    let hung: () => void;
    const hanging = new Promise<void>((resolve) => hung = resolve);
    await using server = await ScriptedModelServer.start({
      scripts: [
        [commitTurn(1), textTurn("Step 1 done.")],
        [() => {
          hung();
          return { text: "never delivered", delayMs: 120_000 };
        }],
        [commitTurn(2), textTurn("Step 2 done.")],
        [commitTurn(3), textTurn("Step 3 done.")],
      ],
    });
    // The runner's parent is `sleep`, which never waits for its children: a
    // killed runner stays a zombie, as under a container's PID 1 without --init.
    const pidFile = `${scratch.path}/runner.pid`;
    const script = `"$DENO" run -A "$MAIN" --iterate-max 3 --task "Three steps" --json ` +
      `>"$SCRATCH/out" 2>"$SCRATCH/err" & echo $! >"$SCRATCH/runner.pid"; exec sleep 120`;
    const parent = new Deno.Command("sh", {
      args: ["-c", script],
      cwd: repo.path,
      env: {
        NO_COLOR: "1",
        DENO_DIR: await denoDir(),
        ...server.env(home.path),
        DENO: Deno.execPath(),
        MAIN,
        SCRATCH: scratch.path,
      },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      await hanging;
      const runner = Number((await Deno.readTextFile(pidFile)).trim());
      // Alive mid-iteration: sleeping on the agent, or running (the baseline works beside it).
      assert.match(await processState(runner) ?? "gone", /^[SR]$/, "the runner is mid-iteration");
      const refused = await runCli(["--resume"], { cwd: repo.path });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(
        refused.stderr,
        /^finishline: Run [0-9a-f-]{36} is still going \(another finishline process holds its lock\): wait for it, or stop it first\n$/,
      );
      Deno.kill(runner, "SIGKILL");
      const killedAt = performance.now();
      assert.equal(await waitDead(runner), "Z", "the killed runner is a zombie nobody reaps");

      const resumed = await runCli(["--resume", "--json"], { cwd: repo.path, server });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(await processState(runner), "Z", "still a zombie while the run resumed");
      const result = JSON.parse(resumed.stdout);
      assert.equal(result.status, "completed");
      assert.equal(result.iterations, 3);
      assert.match(resumed.stderr, /resuming run .* after iteration 1/);
      const store = SqliteStore.open(`${repo.path}/.agent/.finishline/state.db`);
      const iterations = store.iterations(result.runId).map((row) => row.number);
      store.close();
      assert.deepEqual(iterations, [1, 2, 3]);
      catalogueLine(
        "SIGKILL (a zombie nobody reaps), then --resume at once",
        "resumed, completed, exit 0",
        killedAt,
        iterations,
      );
    } finally {
      parent.kill("SIGKILL");
      await parent.status;
    }
  },
});

Deno.test("a second run on the same issue is refused while the first goes on, exit 2", async () => {
  await using repo = await tempRepo();
  await using gh = await FakeGitHub.create({
    repo: "octo/demo",
    issues: [{ number: 42, title: "Add a greeting", body: "Create greet.txt." }],
  });
  let hung: () => void;
  const hanging = new Promise<void>((resolve) => hung = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [[() => {
      hung();
      return { text: "never delivered", delayMs: 120_000 };
    }]],
  });
  let second: Awaited<ReturnType<typeof runCli>> | undefined;
  let firstRunId = "";
  const first = await runCli(["--issue", "42", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
    onSpawn: async (child) => {
      await hanging;
      firstRunId = (await runCli(["runs", "--json"], { cwd: repo.path })).stdout;
      second = await runCli(["--issue", "42"], { cwd: repo.path, server, env: gh.env() });
      child.kill("SIGKILL");
    },
  });
  assert.equal(first.code, 137, first.stderr);
  assert.ok(second);
  assert.equal(second.code, 2, second.stderr);
  const [running] = JSON.parse(firstRunId);
  assert.equal(
    second.stderr.trim(),
    `finishline: Issue #42 already has a run going in this repository (run ${
      running.id.slice(0, 8)
    }, another finishline process holds its lock): wait for it, or stop it first`,
  );
  assert.equal(server.sessionIds().length, 1, "the second run started no session");
});

Deno.test("a second run of any kind in the same checkout is refused while the first goes on, exit 2, nothing written", async () => {
  await using repo = await tempRepo();
  let hung: () => void;
  const hanging = new Promise<void>((resolve) => hung = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [[() => {
      hung();
      return { text: "never delivered", delayMs: 120_000 };
    }]],
  });
  let second: Awaited<ReturnType<typeof runCli>> | undefined;
  let secondAt = 0;
  let runs = "";
  let logs: string[] = [];
  const first = await runCli(["--task", "Write the docs", "--json"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await hanging;
      const listed = () => runCli(["runs", "--json"], { cwd: repo.path });
      runs = (await listed()).stdout;
      logs = [...Deno.readDirSync(`${repo.path}/.agent/iterator/logs`)].map((entry) => entry.name);
      secondAt = performance.now();
      second = await runCli(["--task", "Write the tests"], { cwd: repo.path, server });
      catalogueLine("two runs in one checkout", "the second refused, exit 2", secondAt, []);
      assert.equal((await listed()).stdout, runs, "the refused run is not recorded");
      child.kill("SIGKILL");
    },
  });
  assert.equal(first.code, 137, first.stderr);
  assert.ok(second);
  assert.equal(second.code, 2, second.stderr);
  const [running] = JSON.parse(runs);
  assert.equal(
    second.stderr.trim(),
    `finishline: Another run is working in this checkout (run ${
      running.id.slice(0, 8)
    }, another finishline process holds its lock): wait for it, stop it, or start this one with --worktree`,
  );
  assert.deepEqual(
    [...Deno.readDirSync(`${repo.path}/.agent/iterator/logs`)].map((entry) => entry.name),
    logs,
    "it wrote no log",
  );
  assert.equal(server.sessionIds().length, 1, "the second run started no session");
});
