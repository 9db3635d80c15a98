/**
 * A full disk loses nothing already done. The repository, its run history and
 * its log live on a small tmpfs; the disk fills in iteration 1, in iteration
 * 2, or while the finish workflow runs (just before the report). The real CLI
 * and Claude Code binary against the scripted model, real git. Each time the
 * run ends with its own outcome (never exit 2, "nothing was run"), the failed
 * log writes are said once, and the run history holds every iteration that
 * finished and the run's outcome: its reserve (`state.db-reserve`) is freed
 * for them.
 *
 * Mounting a tmpfs needs root; the test is skipped otherwise, and says so in
 * its name.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import {
  ScriptedModelServer,
  type ScriptStep,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { git, processesGone, runCli, tempDir } from "../_helpers.ts";

const ROOT = Deno.uid() === 0;

/** Fill the file system at `dir` up to the last byte. */
function fill(dir: string): void {
  const file = Deno.openSync(`${dir}/filler`, { write: true, create: true, append: true });
  const chunk = new Uint8Array(64 * 1024).fill(120);
  try {
    for (;;) file.writeSync(chunk);
  } catch {
    // ENOSPC: full
  } finally {
    file.close();
  }
  // The last bytes too, one at a time.
  const last = Deno.openSync(`${dir}/filler`, { write: true, append: true });
  try {
    for (;;) last.writeSync(new Uint8Array(1));
  } catch {
    // full
  } finally {
    last.close();
  }
}

async function mountTmpfs(dir: string, size: string): Promise<void> {
  const mounted = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir],
    stderr: "piped",
  }).output();
  if (!mounted.success) {
    throw new Error(`mount failed: ${new TextDecoder().decode(mounted.stderr)}`);
  }
}

async function unmount(dir: string): Promise<void> {
  await processesGone(dir);
  const done = await new Deno.Command("umount", { args: [dir] }).output();
  if (!done.success) await new Deno.Command("umount", { args: ["-l", dir] }).output();
}

const commit = (n: number) =>
  toolTurn("Bash", {
    command:
      `printf '${n}' > step${n}.txt && git add step${n}.txt && git commit -qm 'feat: step ${n}'`,
  });
const claim = toolTurn(COMPLETE_TASK_TOOL, {
  status: "success",
  original_request_summary: "Write the steps",
  summary: "Wrote them.",
});

interface Phase {
  name: string;
  iterations: number;
  /** The script of each iteration's session, given a filler. */
  script: (sessionIndex: number, fillNow: ScriptStep) => ScriptStep[];
  /** Fill at the first side request after the last step of every script: the finish model's. */
  atFinish?: boolean;
  /** The iterations the history must hold. */
  recorded: number[];
}

const PHASES: Phase[] = [
  {
    name: "in iteration 1, before its work",
    iterations: 1,
    script: (index, fillNow) => index === 0 ? [fillNow, commit(1), claim, textTurn("Done.")] : [],
    recorded: [1],
  },
  {
    name: "in iteration 2, mid-way",
    iterations: 2,
    script: (index, fillNow) =>
      index === 0
        ? [commit(1), claim, textTurn("Done.")]
        : index === 1
        ? [commit(2), fillNow, claim, textTurn("Done.")]
        : [],
    recorded: [1, 2],
  },
  {
    name: "after the last iteration, before the report",
    iterations: 1,
    script: (index) => index === 0 ? [commit(1), claim, textTurn("Done.")] : [],
    atFinish: true,
    recorded: [1],
  },
];

for (const phase of PHASES) {
  Deno.test({
    name: ROOT
      ? `a disk that fills ${phase.name}: the run ends with its own outcome, every finished iteration recorded`
      : `a disk that fills ${phase.name} (skipped: mounting a tmpfs needs root)`,
    ignore: !ROOT,
    fn: async () => {
      await using mount = await tempDir("finishline-tmpfs-");
      await mountTmpfs(mount.path, "24m");
      try {
        const repo = `${mount.path}/repo`;
        await Deno.mkdir(repo);
        await git(repo, "init", "-q", "-b", "main");
        await git(repo, "config", "user.name", "Test");
        await git(repo, "config", "user.email", "test@example.invalid");
        await Deno.writeTextFile(`${repo}/README.md`, "# test repo\n");
        await git(repo, "add", "README.md");
        await git(repo, "commit", "-qm", "initial commit");
        let filled = false;
        const fillNow: ScriptStep = () => {
          fill(mount.path);
          filled = true;
          return toolTurn("Bash", { command: "echo the disk is full" });
        };
        let workDone = false;
        await using server = await ScriptedModelServer.start({
          scripts: ({ sessionIndex }) => {
            const steps = phase.script(sessionIndex, fillNow);
            const last = steps.at(-1);
            if (!last || typeof last === "function") return steps;
            return [...steps.slice(0, -1), () => {
              if (sessionIndex === phase.iterations - 1) workDone = true;
              return last;
            }];
          },
          sideReply: () => {
            if (phase.atFinish && workDone && !filled) {
              fill(mount.path);
              filled = true;
            }
            return textTurn("OK.");
          },
        });
        const run = await runCli(
          ["--iterate-max", String(phase.iterations), "--task", "Write the steps", "--json"],
          { cwd: repo, server },
        );
        assert.ok(filled, `the disk was filled: ${run.stderr}`);
        assert.notEqual(run.code, 2, `never "nothing was run": ${run.stderr}`);
        assert.doesNotMatch(run.stderr, /unexpected error|^\s+at /m, run.stderr);
        const said = run.stderr.match(/the log could not be written/g) ?? [];
        assert.ok(said.length <= 1, `said once: ${run.stderr}`);
        const result = JSON.parse(run.stdout);
        // The report is written whole (into room the history's reserve left), or said not to be.
        const reported = await Deno.readTextFile(result.report).catch(() => undefined);
        if (reported === undefined) {
          assert.match(run.stderr, /the report could not be written \(/, run.stderr);
          assert.match(run.stderr, /no report was written; the log: /);
        } else {
          assert.match(reported, /^# Write the steps$/m);
          assert.match(run.stderr, /details in the report: /);
        }

        const db = new DatabaseSync(`${repo}/.agent/.finishline/state.db`, { readOnly: true });
        try {
          const row = db.prepare("SELECT status FROM runs WHERE id = ?").get(result.runId) as
            | { status: string }
            | undefined;
          assert.equal(row?.status, result.status, "the outcome is recorded");
          assert.notEqual(row?.status, "running");
          const numbers = (db.prepare(
            "SELECT number FROM iterations WHERE run_id = ? ORDER BY number",
          ).all(result.runId) as Array<{ number: number }>).map((entry) => entry.number);
          assert.deepEqual(numbers, phase.recorded, "every finished iteration is recorded");
        } finally {
          db.close();
        }
      } finally {
        await unmount(mount.path);
      }
    },
  });
}
