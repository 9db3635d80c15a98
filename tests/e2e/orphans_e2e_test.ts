/**
 * End to end: nothing a run starts outlives it. The CLI as a subprocess, the
 * real Claude Code binary against the scripted model server, real git and
 * real checks; processes are found in /proc by the tag every process of a
 * run carries, and by their command line.
 */

import assert from "node:assert/strict";
import { RUN_TAG, taggedProcesses } from "../../agents/support/process_tags.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { commitAgent, git, runCli, tempDir, tempRepo } from "../_helpers.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { catalogueLine } from "./_fault_catalogue.ts";
import { copyFolders } from "../evidence/copy/_copies.ts";

/** A repository whose test script sleeps (a slow suite) unless FAST is set. */
async function slowSuite(repo: string, script: string): Promise<void> {
  await Deno.writeTextFile(
    `${repo}/package.json`,
    JSON.stringify({ name: "slow", private: true, scripts: { test: script } }),
  );
  await git(repo, "add", "-A");
  await git(repo, "commit", "-qm", "slow suite");
  await commitAgent(repo, {
    name: "worker",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 1 },
      allowedTools: ["Bash"],
    },
    probe: { enabled: false },
  });
}

/** Waits until `found` holds, polling every 100 ms, for at most `ms`. */
async function until<T>(found: () => Promise<T | undefined>, ms: number): Promise<T | undefined> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await found();
    if (value !== undefined || performance.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The run id of the processes tagged in `repo`'s runs whose command line holds `marker`. */
async function taggedRun(marker: string): Promise<string | undefined> {
  for (const process of await taggedProcesses(RUN_TAG)) {
    const command = await Deno.readTextFile(`/proc/${process.pid}/cmdline`).catch(() => "");
    if (command.includes(marker)) return process.value.split("/")[0];
  }
  return undefined;
}

/** Processes whose command line holds `marker`, as pids. */
async function withMarker(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    const command = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => "");
    const zombie = stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
    if (command.includes(marker) && !zombie) found.push(entry.name);
  }
  return found;
}

/** Waits until no process's command line holds `marker` (at most `ms`); returns those left. */
async function gone(marker: string, ms: number): Promise<string[]> {
  return await until(async () => {
    const left = await withMarker(marker);
    return left.length === 0 ? left : undefined;
  }, ms) ?? await withMarker(marker);
}

/**
 * A check that runs for five minutes and starts a daemon of its own in
 * another session, unless FAST is set (the resumed run's).
 */
const SLOW_CHECK = (marker: string) =>
  `[ -n "$FAST" ] || { (setsid node -e "setTimeout(() => {}, 301000)" ${marker}-daemon &); node -e "setTimeout(() => {}, 300000)" ${marker}; }`;

/** The check copies of a repository's runs: private folders in the temp folder, and worktrees. */
async function worktrees(repo: string): Promise<string[]> {
  return await copyFolders(repo);
}

/** The iterations the run history holds for a run. */
function recorded(repo: string, runId: string): number[] {
  const store = SqliteStore.open(`${repo}/.agent/.finishline/state.db`);
  try {
    return store.iterations(runId).map((row) => row.number);
  } finally {
    store.close();
  }
}

const done = toolTurn("mcp__finishline__complete_task", {
  status: "success",
  original_request_summary: "Do the work",
  summary: "Done",
});

/** Starts a run whose first session hangs, and SIGKILLs it once its baseline runs; returns its run id. */
async function killedDuringBaseline(
  repo: string,
  server: ScriptedModelServer,
  marker: string,
  options: { killWatchdog?: boolean; home?: string } = {},
): Promise<string> {
  let runId: string | undefined;
  const run = await runCli(["--agent", "worker", "--task", "Do the work", "--json"], {
    cwd: repo,
    server,
    home: options.home,
    onSpawn: async (child) => {
      runId = await until(() => taggedRun(marker), 60_000);
      // The first session is waiting for its model's answer: it holds the first script.
      await until(
        () => Promise.resolve(server.requests.some((request) => !request.side) || undefined),
        60_000,
      );
      if (options.killWatchdog) {
        for (const pid of await withMarker("finishline-watchdog")) {
          Deno.kill(Number(pid), "SIGKILL");
        }
      }
      child.kill("SIGKILL");
    },
  });
  assert.equal(run.code, 137, run.stderr);
  assert.ok(runId, "the baseline's check was seen running, tagged with the run");
  return runId!;
}

Deno.test("kill -9 during the baseline: the watchdog stops the check, its daemon and the agent; --resume completes with no stale worktree", async () => {
  await using repo = await tempRepo();
  const marker = `baseline-${crypto.randomUUID().slice(0, 8)}`;
  await slowSuite(repo.path, SLOW_CHECK(marker));
  await using server = await ScriptedModelServer.start({
    scripts: [[{ text: "Thinking about it.", delayMs: 120_000 }], [
      toolTurn("Bash", { command: "echo done > done.txt && git add -A && git commit -qm done" }),
      done,
      textTurn("Done."),
    ]],
  });
  await using home = await tempDir("finishline-home-");
  const started = performance.now();
  const runId = await killedDuringBaseline(repo.path, server, marker, { home: home.path });
  // SIGTERM, then SIGKILL two seconds on.
  assert.deepEqual(await gone(marker, 10_000), [], "the check and its daemon are gone");
  const left = await until(async () => {
    const tagged = await taggedProcesses(RUN_TAG, `${runId}/`, { prefix: true });
    return tagged.length === 0 ? tagged : undefined;
  }, 5_000) ?? await Promise.all(
    (await taggedProcesses(RUN_TAG, `${runId}/`, { prefix: true })).map((process) =>
      Deno.readTextFile(`/proc/${process.pid}/cmdline`).catch(() => "")
    ),
  );
  assert.deepEqual(left, [], "no process of the run is left");
  const resumed = await runCli(["--resume", runId, "--json"], {
    cwd: repo.path,
    server,
    home: home.path,
    env: { FAST: "1" },
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, /removed 1 check worktree left by an earlier run that was killed/);
  assert.deepEqual(await worktrees(repo.path), []);
  assert.deepEqual(await taggedProcesses(RUN_TAG, `${runId}/`, { prefix: true }), []);
  assert.deepEqual(recorded(repo.path, runId), [1]);
  catalogueLine(
    "SIGKILL during the baseline, then --resume",
    "completed, exit 0",
    started,
    [1],
    { orphans: 0, worktrees: 0, lost: 0 },
  );
});

Deno.test("kill -9 of a run and of its watchdog: the next run in the checkout stops what is left and removes its worktree", async () => {
  await using repo = await tempRepo();
  const marker = `orphan-${crypto.randomUUID().slice(0, 8)}`;
  await slowSuite(repo.path, SLOW_CHECK(marker));
  await using server = await ScriptedModelServer.start({
    scripts: [[{ text: "Thinking about it.", delayMs: 120_000 }], [textTurn("Done.")]],
  });
  // A HOME that outlives the run: runCli's own would stop what is left in it (tests/_helpers.ts).
  await using home = await tempDir("finishline-home-");
  const runId = await killedDuringBaseline(repo.path, server, marker, {
    killWatchdog: true,
    home: home.path,
  });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.notDeepEqual(await withMarker(marker), [], "with no watchdog, the check lives on");
  const worktrees = () => copyFolders(repo.path);
  const left = await worktrees();
  assert.equal(left.length, 1, "the baseline's copy is left");
  assert.match(left[0], new RegExp(`-${runId}-`));
  // The next run (any run in this checkout) finds the dead run's processes by their tag.
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ name: "slow", private: true, scripts: { test: "exit 0" } }),
  );
  await git(repo.path, "commit", "-qam", "fast suite");
  const next = await runCli(["--agent", "worker", "--task", "Something else", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.match(
    next.stderr,
    /stopped \d+ process(es)? left running by an earlier run that was killed/,
  );
  assert.deepEqual(await gone(marker, 10_000), []);
  assert.deepEqual(await taggedProcesses(RUN_TAG, `${runId}/`, { prefix: true }), []);
  assert.match(next.stderr, /removed 1 check worktree left by an earlier run that was killed/);
  assert.deepEqual(await worktrees(), [], "no worktree of either run is left");
  assert.equal(
    await Deno.stat(left[0]).then(() => true, () => false),
    false,
    "its folder is gone too",
  );
});

Deno.test("a check that starts a daemon does not leave it behind after a run", async () => {
  await using repo = await tempRepo();
  const marker = `daemon-${crypto.randomUUID().slice(0, 8)}`;
  await slowSuite(repo.path, `(setsid sleep 302 ${marker} > /dev/null 2>&1 &); exit 0`);
  await Deno.writeTextFile(`${repo.path}/note.txt`, "x\n");
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command: "echo y >> note.txt && git add -A && git commit -qm 'docs: note'",
      }),
      toolTurn("mcp__finishline__complete_task", {
        status: "success",
        original_request_summary: "Do the work",
        summary: "Done",
      }),
      textTurn("Done."),
    ]],
  });
  const started = performance.now();
  const run = await runCli(["--agent", "worker", "--task", "Do the work", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(
    await gone(marker, 5_000),
    [],
    "the daemons the baseline and the claim's check started are gone",
  );
  const { runId } = JSON.parse(run.stdout);
  assert.deepEqual(await worktrees(repo.path), []);
  catalogueLine(
    "a check that backgrounds a daemon",
    "completed, exit 0, the daemon stopped",
    started,
    recorded(repo.path, runId),
    { orphans: 0, worktrees: 0, lost: 0 },
  );
});

Deno.test("kill -9 while a claim is verified: nothing left running; --resume completes with no stale worktree", async () => {
  await using repo = await tempRepo();
  const marker = `verify-${crypto.randomUUID().slice(0, 8)}`;
  // Slow only on a commit that holds slow.flag, so the baseline is quick and the claim's check is not.
  await slowSuite(
    repo.path,
    `if [ -f slow.flag ] && [ -z "$FAST" ]; then node -e "setTimeout(() => {}, 300000)" ${marker}; fi`,
  );
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        toolTurn("Bash", { command: "touch slow.flag && git add -A && git commit -qm flag" }),
        done,
        textTurn("Done."),
      ],
      [done, textTurn("Done.")],
    ],
  });
  await using home = await tempDir("finishline-home-");
  const started = performance.now();
  let runId: string | undefined;
  const killed = await runCli(["--agent", "worker", "--task", "Do the work", "--json"], {
    cwd: repo.path,
    server,
    home: home.path,
    onSpawn: async (child) => {
      runId = await until(() => taggedRun(marker), 60_000);
      child.kill("SIGKILL");
    },
  });
  assert.equal(killed.code, 137, killed.stderr);
  assert.ok(runId, "the claim's check was seen running on the clean copy");
  assert.deepEqual(await gone(marker, 10_000), []);
  assert.equal((await worktrees(repo.path)).length, 1, "the clean copy is left until the resume");
  const resumed = await runCli(["--resume", runId!, "--json"], {
    cwd: repo.path,
    server,
    home: home.path,
    env: { FAST: "1" },
  });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(await worktrees(repo.path), []);
  assert.deepEqual(await taggedProcesses(RUN_TAG, `${runId}/`, { prefix: true }), []);
  assert.deepEqual(recorded(repo.path, runId!), [1]);
  catalogueLine(
    "SIGKILL while a claim is verified, then --resume",
    "completed, exit 0",
    started,
    [1],
    { orphans: 0, worktrees: 0, lost: 0 },
  );
});

Deno.test("a check that prints 100 MB: the run completes, and the runner's memory is reported", async () => {
  await using repo = await tempRepo();
  await slowSuite(
    repo.path,
    "head -c 104857600 /dev/zero | tr '\\\\0' 'x' | fold -w 99; echo; echo '# pass 1'",
  );
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: "echo y > y.txt && git add -A && git commit -qm y" }),
      done,
      textTurn("Done."),
    ]],
  });
  const started = performance.now();
  let peakKb = 0;
  const run = await runCli(["--agent", "worker", "--task", "Do the work", "--json"], {
    cwd: repo.path,
    server,
    onSpawn: (child) => {
      // The runner's resident memory, sampled while it runs (reported, never asserted).
      const watch = async () => {
        for (;;) {
          const status = await Deno.readTextFile(`/proc/${child.pid}/status`).catch(() => "");
          const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
          if (Number.isNaN(kb)) return;
          peakKb = Math.max(peakKb, kb);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      watch();
    },
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  catalogueLine(
    "a check that prints 100 MB",
    "completed, exit 0",
    started,
    [1],
    { orphans: 0, worktrees: 0, lost: 0, peakMb: peakKb / 1024 },
  );
});

for (const sandbox of ["auto", "off"] as const) {
  Deno.test(`kill -9 while the first agent process boots, before the run's watchdog (sandbox ${sandbox}): it does not outlive the run`, async () => {
    await using repo = await tempRepo();
    const marker = `early-${crypto.randomUUID().slice(0, 8)}`;
    // A handler whose module takes minutes to load: the run is held in its preparation,
    // after its first agent process was started and before its watchdog runs.
    await Deno.mkdir(`${repo.path}/.agent/held/completion`, { recursive: true });
    await Deno.writeTextFile(
      `${repo.path}/.agent/held/completion/held.ts`,
      `await new Promise((resolve) => setTimeout(resolve, 300_000)); // ${marker}\nexport default () => ({});\n`,
    );
    await commitAgent(repo.path, {
      name: "held",
      behavior: {
        completionType: "custom",
        completionConfig: { handlerPath: "completion/held.ts", maxIterations: 1 },
        allowedTools: ["Bash"],
      },
      verify: { sandbox },
      probe: { enabled: false },
    });
    // A repository finishline ran in before: its run history's folder is there.
    await Deno.mkdir(`${repo.path}/.agent/.finishline`, { recursive: true });
    await using server = await ScriptedModelServer.start({ scripts: [[textTurn("Done.")]] });
    let runId: string | undefined;
    let agents: number[] = [];
    const run = await runCli(["--agent", "held", "--task", `Do the work ${marker}`], {
      cwd: repo.path,
      server,
      onSpawn: async (child) => {
        // Claude Code's own process, tagged with the run (under bwrap, its child).
        // This run's own: the tag ends with the pid of the finishline process (other test
        // files' runs go on beside this one).
        const agent = () =>
          until(async () => {
            const found: number[] = [];
            for (const process of await taggedProcesses(RUN_TAG)) {
              if (!process.value.endsWith(`/${child.pid}`)) continue;
              const command = await Deno.readTextFile(`/proc/${process.pid}/cmdline`)
                .catch(() => "");
              if (command.includes("claude-agent-sdk")) {
                runId = process.value.split("/")[0];
                found.push(process.pid);
              }
            }
            return found.length > 0 ? found : undefined;
          }, 60_000);
        agents = await agent() ?? [];
        child.kill("SIGKILL");
      },
    });
    assert.equal(run.code, 137, run.stderr);
    assert.ok(runId, "the first agent process started while the run was prepared, tagged");
    const watchdogs = (await withMarker(runId!)).filter((pid) => {
      try {
        return Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes("finishline-watchdog");
      } catch {
        return false;
      }
    });
    assert.deepEqual(watchdogs, [], "no watchdog of this run was running yet");
    const alive = () =>
      Promise.resolve(
        agents.filter((pid) => {
          try {
            const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
            return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
          } catch {
            return false;
          }
        }),
      );
    const left = await until(async () => {
      const running = await alive();
      return running.length === 0 ? running : undefined;
    }, 30_000) ?? await alive();
    assert.deepEqual(left, [], "Claude Code ended with the run");
  });
}
