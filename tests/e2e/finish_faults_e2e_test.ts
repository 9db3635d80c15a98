/**
 * End to end for a finish that is interrupted and a history that stops
 * taking writes: a second SIGTERM during a slow finish exits 130 with the
 * outcome recorded and the steps left named, `finish RUN_ID` is refused
 * while the run is still going and completes the steps afterwards, and a
 * history locked by another process never crashes the run. The CLI as a
 * subprocess, the real Claude Code binary against the scripted model, real git.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { EXTRACT_MARKER } from "../../agents/store/learnings_text.ts";
import { ScriptedModelServer, textTurn } from "../../agents/testing/mod.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { RUN_TAG, taggedProcesses } from "../../agents/support/process_tags.ts";
import { denoDir, runCli, tempDir, tempRepo } from "../_helpers.ts";
import { catalogueLine } from "./_fault_catalogue.ts";

const STORE = ".agent/.finishline/state.db";

/** An agent that completes after one iteration; its finish asks the model for learnings. */
async function writeAgent(root: string): Promise<void> {
  await Deno.mkdir(`${root}/.agent/slow`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/.agent/slow/agent.json`,
    JSON.stringify({
      name: "slow",
      behavior: { completionType: "iterate", completionConfig: { maxIterations: 1 } },
    }),
  );
}

/**
 * Start a process that holds a write transaction on a store until killed.
 *
 * @param scratch A folder for its script.
 * @param store The database file.
 * @returns The process, once it holds the lock.
 */
async function holdWriteLock(scratch: string, store: string): Promise<Deno.ChildProcess> {
  const script = `${scratch}/locker.ts`;
  await Deno.writeTextFile(
    script,
    `import { DatabaseSync } from "node:sqlite";
const db = new DatabaseSync(Deno.args[0]);
db.exec("BEGIN IMMEDIATE");
console.log("locked");
setInterval(() => {}, 60_000);
`,
  );
  const locker = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, store],
    env: { DENO_DIR: await denoDir() },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = locker.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  assert.equal(new TextDecoder().decode(value).trim(), "locked");
  return locker;
}

/** The numbers of the iterations in the history. */
function storedIterations(root: string): number[] {
  const db = new DatabaseSync(`${root}/${STORE}`, { readOnly: true });
  try {
    return db.prepare("SELECT number FROM iterations ORDER BY number").all()
      .map((row) => Number(row.number));
  } finally {
    db.close();
  }
}

/** The run's row, read straight from the history. */
function storedRun(root: string): { id: string; status: string; reason: string | null } {
  const db = new DatabaseSync(`${root}/${STORE}`, { readOnly: true });
  try {
    return db.prepare("SELECT id, status, reason FROM runs").get() as {
      id: string;
      status: string;
      reason: string | null;
    };
  } finally {
    db.close();
  }
}

Deno.test({
  name:
    "a second SIGTERM during a slow finish exits 130 with the outcome recorded, and finish RUN_ID completes it",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using repo = await tempRepo();
    await writeAgent(repo.path);
    let extracting: () => void;
    const extraction = new Promise<void>((resolve) => extracting = resolve);
    let extractions = 0;
    // The tool-less finish question (with its learnings part) reaches the server as a side request.
    await using server = await ScriptedModelServer.start({
      scripts: [[textTurn("Looked around.")]],
      sideReply: ({ lastUserText }) => {
        if (!lastUserText.includes(EXTRACT_MARKER)) return textTurn("OK.");
        // The live run's extraction hangs; the one of `finish RUN_ID` answers.
        if (extractions++ > 0) {
          return textTurn('{"learnings": [{"learning": "Finish steps are checkpointed"}]}');
        }
        extracting();
        return { text: "[]", delayMs: 120_000 };
      },
    });
    let refused: Awaited<ReturnType<typeof runCli>> | undefined;
    let sentAt = 0;
    const run = await runCli(["--agent", "slow"], {
      cwd: repo.path,
      server,
      onSpawn: async (child) => {
        const ended = await Promise.race([extraction, child.status.then(() => "ended")]);
        if (ended === "ended") return;
        const { id } = storedRun(repo.path);
        refused = await runCli(["finish", id], { cwd: repo.path });
        sentAt = performance.now();
        child.kill("SIGTERM");
        await new Promise((resolve) => setTimeout(resolve, 300));
        child.kill("SIGTERM");
        await child.status;
        catalogueLine(
          "SIGTERM twice during the finish workflow",
          "exit 130, outcome recorded, steps left named",
          sentAt,
          storedIterations(repo.path),
        );
      },
    });
    assert.equal(run.code, 130, run.stderr);
    const { id, status } = storedRun(repo.path);
    assert.equal(status, "completed", "the outcome was recorded before the finish began");
    assert.match(
      run.stderr,
      new RegExp(
        `second interrupt: exiting now; the outcome \\(completed\\) is recorded; finish steps left: summary, learnings, skills, next_actions, persist, cleanup; run "finish ${id}" to complete them\\n`,
      ),
    );

    assert.ok(refused);
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(
      refused.stderr,
      `finishline: Run ${id} is still going (another finishline process holds its lock): wait for it, or stop it first\n`,
    );

    const finished = await runCli(["finish", id], { cwd: repo.path, server });
    assert.equal(finished.code, 0, finished.stderr);
    assert.equal(
      finished.stdout,
      `Finished run ${id}: summary, learnings, skills, next_actions, persist, cleanup\n`,
    );
    assert.equal(extractions, 2, "finish RUN_ID asked for the learnings again");
    assert.equal(storedRun(repo.path).status, "completed");
  },
});

Deno.test({
  name:
    "a history locked by another process never crashes the run: right exit code, one line, the log has it",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using repo = await tempRepo();
    await using scratch = await tempDir("finishline-locker-");
    let started: () => void;
    const iterating = new Promise<void>((resolve) => started = resolve);
    let release: () => void;
    const released = new Promise<void>((resolve) => release = resolve);
    await using server = await ScriptedModelServer.start({
      scripts: [[async () => {
        started();
        await released;
        return { text: "Done." };
      }]],
    });
    let locker: Deno.ChildProcess | undefined;
    let seconds = 0;
    try {
      const run = await runCli(["--iterate-max", "1", "--task", "One step", "--json"], {
        cwd: repo.path,
        server,
        onSpawn: async () => {
          await iterating;
          await new Promise((resolve) => setTimeout(resolve, 1000));
          // Another process holds a write transaction for the rest of the run.
          locker = await holdWriteLock(scratch.path, `${repo.path}/${STORE}`);
          seconds = performance.now();
          release();
        },
      });
      seconds = (performance.now() - seconds) / 1000;
      assert.equal(run.code, 0, run.stderr);
      assert.equal(JSON.parse(run.stdout).status, "completed");
      const lines = run.stderr.split("\n").filter((line) =>
        line.includes("the run history could not be written")
      );
      assert.equal(lines.length, 1, run.stderr);
      const logFile = JSON.parse(run.stdout).logFile as string;
      assert.equal(
        lines[0],
        `[finishline] the run history could not be written (database is locked): this run's outcome is not recorded there; the log has it: ${logFile}`,
      );
      const log = await Deno.readTextFile(logFile);
      assert.match(log, /"run_finished".*"status":"completed"/);
      assert.match(log, /"store_failed"/);
      console.log(
        `a locked history: the run ended (exit 0) ${seconds.toFixed(1)} s after the lock`,
      );
    } finally {
      locker?.kill("SIGKILL");
      await locker?.status;
    }
    // Once the lock is gone, the history has the run as it stood: still "running".
    assert.equal(storedRun(repo.path).status, "running");
  },
});

Deno.test({
  name:
    "a history locked before the run starts is refused: exit 2, one line, nothing written, no session",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using repo = await tempRepo();
    await using scratch = await tempDir("finishline-locker-");
    await using server = await ScriptedModelServer.start({ scripts: [[textTurn("Done.")]] });
    SqliteStore.open(`${repo.path}/${STORE}`).close();
    const locker = await holdWriteLock(scratch.path, `${repo.path}/${STORE}`);
    try {
      const run = await runCli(["--iterate-max", "1", "--task", "One step"], {
        cwd: repo.path,
        server,
      });
      assert.equal(run.code, 2, run.stderr);
      assert.equal(
        run.stderr,
        `finishline: The run history "${repo.path}/${STORE}" does not take writes (database is locked): another process holds its write lock; wait for it, or choose another file with --store PATH\n`,
      );
      assert.equal(server.requests.length, 0, "no agent session started");
      assert.deepEqual(await logsUnder(`${repo.path}/.agent`), [], "no log written");
    } finally {
      locker.kill("SIGKILL");
      await locker.status;
    }
    const db = new DatabaseSync(`${repo.path}/${STORE}`, { readOnly: true });
    assert.equal(db.prepare("SELECT count(*) AS n FROM runs").get()?.n, 0);
    db.close();
  },
});

/** The run logs (`.jsonl`) anywhere under a folder. */
async function logsUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await logsUnder(path));
    else if (entry.name.endsWith(".jsonl")) found.push(path);
  }
  return found;
}

/** Whether this process may mount a tmpfs (root on Linux with CAP_SYS_ADMIN), for a read-only folder. */
async function canMount(): Promise<boolean> {
  if (Deno.build.os !== "linux") return false;
  const dir = await Deno.makeTempDir({ prefix: "finishline-mount-" });
  try {
    const mounted = await new Deno.Command("mount", { args: ["-t", "tmpfs", "none", dir] })
      .output().catch(() => undefined);
    if (!mounted?.success) return false;
    await new Deno.Command("umount", { args: [dir] }).output();
    return true;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "a history on a read-only file system is refused: exit 2, one line naming it, no session",
  // Root ignores file modes, so read-only takes a read-only mount; without the right to mount, skipped.
  ignore: !(await canMount()),
  fn: async () => {
    await using repo = await tempRepo();
    await using scratch = await tempDir("finishline-readonly-");
    await using server = await ScriptedModelServer.start({ scripts: [[textTurn("Done.")]] });
    const mount = async (...args: string[]) =>
      assert.ok((await new Deno.Command("mount", { args }).output()).success, args.join(" "));
    await mount("-t", "tmpfs", "none", scratch.path);
    try {
      SqliteStore.open(`${scratch.path}/state.db`).close();
      await mount("-o", "remount,ro", scratch.path);
      const run = await runCli(
        ["--iterate-max", "1", "--task", "One step", "--store", `${scratch.path}/state.db`],
        { cwd: repo.path, server },
      );
      assert.equal(run.code, 2, run.stderr);
      assert.match(
        run.stderr,
        /^finishline: Cannot open the run history ".*\/state\.db" \(.+\): is it or its folder read-only\? Choose another file with --store PATH\n$/,
      );
      assert.equal(server.requests.length, 0, "no agent session started");
    } finally {
      await new Deno.Command("umount", { args: [scratch.path] }).output();
    }
  },
});

Deno.test({
  name:
    "SIGKILL during the finish leaves the outcome recorded and nothing running, and finish RUN_ID completes it",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await using repo = await tempRepo();
    await writeAgent(repo.path);
    let extracting: () => void;
    const extraction = new Promise<void>((resolve) => extracting = resolve);
    let extractions = 0;
    await using server = await ScriptedModelServer.start({
      scripts: [[textTurn("Looked around.")]],
      sideReply: ({ lastUserText }) => {
        if (!lastUserText.includes(EXTRACT_MARKER)) return textTurn("OK.");
        if (extractions++ > 0) {
          return textTurn('{"learnings": [{"learning": "Finish steps are checkpointed"}]}');
        }
        extracting();
        return { text: "[]", delayMs: 120_000 };
      },
    });
    // A HOME that outlives the killed run: runCli's own would stop what is left (see tempDir).
    await using home = await tempDir("finishline-home-");
    let sentAt = 0;
    const run = await runCli(["--agent", "slow"], {
      cwd: repo.path,
      server,
      home: home.path,
      onSpawn: async (child) => {
        await Promise.race([extraction, child.status]);
        sentAt = performance.now();
        child.kill("SIGKILL");
      },
    });
    assert.equal(run.code, 137, run.stderr);
    const { id, status } = storedRun(repo.path);
    assert.equal(status, "completed", "the outcome was recorded before the finish began");
    let left = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
    }
    assert.deepEqual(left, [], "the finish's Claude Code process is stopped with the run");
    const worktrees = await runGitList(repo.path);
    assert.deepEqual(worktrees, [], "the gate's worktrees were gone before the finish began");
    catalogueLine(
      "SIGKILL during the finish workflow",
      "outcome recorded; finish RUN_ID completes it",
      sentAt,
      storedIterations(repo.path),
      { orphans: left.length, worktrees: worktrees.length, lost: 0 },
    );
    const finished = await runCli(["finish", id], { cwd: repo.path, server, home: home.path });
    assert.equal(finished.code, 0, finished.stderr);
  },
});

/** The worktrees of a repository besides its checkout. */
async function runGitList(root: string): Promise<string[]> {
  const output = await new Deno.Command("git", {
    args: ["worktree", "list", "--porcelain"],
    cwd: root,
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(output.stdout).trim().split("\n\n").slice(1);
}
