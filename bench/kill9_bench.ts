/**
 * How long the processes of a run live after kill -9 of the runner, under
 * load: `deno task bench:kill9 [ROUNDS] [BURNERS]`. Each round starts a
 * guarded process (tests/support/_guarded_process.ts: its watchdog and a tree that
 * ignores SIGTERM, leaves its session and forks), SIGKILLs it, and times
 * until no process carrying its tag runs. BURNERS busy loops (default 8, on
 * a 2-core machine) load the CPU meanwhile. The bench fails when a round
 * takes 2 s or more: the watchdog wakes at once (a pipe only the runner
 * holds reaches end of file when it dies), gives SIGTERM half a second, then
 * SIGKILLs what is left, again until nothing is.
 *
 * @module
 */

import { RUN_TAG, taggedProcesses } from "../agents/support/process_tags.ts";

const rounds = Number(Deno.args[0] ?? 10);
const burners = Number(Deno.args[1] ?? 8);
const GUARDED = new URL("../tests/support/_guarded_process.ts", import.meta.url).pathname;

const load = Array.from({ length: burners }, () =>
  new Deno.Command("sh", {
    args: ["-c", "while :; do :; done"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn());
const times: number[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    const id = crypto.randomUUID();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", GUARDED, id],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.getReader();
    await reader.read();
    reader.releaseLock();
    const tagged = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
    const started = performance.now();
    child.kill("SIGKILL");
    await child.status;
    // Poll the known pids (cheap), then make sure no other process carries the tag.
    let left = tagged;
    for (;;) {
      left = left.filter((process) => running(process.pid, process.start));
      if (left.length === 0) {
        left = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
        if (left.length === 0) break;
      }
      if (performance.now() - started > 30_000) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    times.push(seconds);
    console.log(
      `round ${round + 1}: ${tagged.length} processes tagged, gone after ${seconds.toFixed(2)} s${
        left.length ? `, ${left.length} LEFT` : ""
      }`,
    );
  }
} finally {
  for (const burner of load) burner.kill("SIGKILL");
}
const sorted = [...times].sort((a, b) => a - b);
const load1 = Deno.readTextFileSync("/proc/loadavg").split(" ")[0];
console.log(
  `kill -9 to nothing left, ${rounds} rounds, ${burners} busy loops (load ${load1}): min ${
    sorted[0].toFixed(2)
  } s, median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} s, max ${
    sorted.at(-1)!.toFixed(2)
  } s`,
);
if (sorted.at(-1)! >= 2) {
  console.error("FAIL: a run's processes outlived it by 2 s or more");
  Deno.exit(1);
}

/** Whether the process with this pid and start time still runs (not a zombie). */
function running(pid: number, start: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] !== "Z" && fields[0] !== "X" && Number(fields[19]) === start;
  } catch {
    return false;
  }
}
