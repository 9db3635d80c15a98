/**
 * Nothing a run starts outlives it: a guarded process SIGKILLed, or ending
 * without stopping what it started, leaves no process with its tag (a tree
 * that ignores SIGTERM, leaves its session and keeps forking). The bound is
 * generous; `deno task bench:kill9` measures the time under load.
 */

import assert from "node:assert/strict";
import { RUN_TAG, stopTagged, taggedProcesses } from "../../agents/support/process_tags.ts";

const GUARDED = new URL("./_guarded_process.ts", import.meta.url).pathname;

async function startGuarded(id: string): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", GUARDED, id],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read();
  reader.releaseLock();
  await child.stdout.cancel();
  return child;
}

async function gone(id: string, boundMs: number): Promise<number> {
  const started = performance.now();
  let left = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
  while (left.length > 0 && performance.now() - started < boundMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
  }
  // Whatever is left is stopped here, so the test leaves nothing running.
  for (const process of left) Deno.kill(process.pid, "SIGKILL");
  return left.length;
}

Deno.test("kill -9 of a guarded process: every process it started is gone", async () => {
  const id = crypto.randomUUID();
  const child = await startGuarded(id);
  const tagged = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
  assert.ok(tagged.length >= 5, `the tree runs, tagged: ${tagged.length}`);
  child.kill("SIGKILL");
  await child.status;
  assert.equal(await gone(id, 30_000), 0, "no tagged process is left");
});

Deno.test("without its watchdog (SIGKILLed too) the tree lives on: the watchdog is what stops it", async () => {
  // The watchdog runs under no tag; it is found by its name and its argument, the tag.
  const id = crypto.randomUUID();
  const child = await startGuarded(id);
  const watchdogs: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (cmdline.includes("finishline-watchdog") && cmdline.includes(id)) {
      watchdogs.push(Number(entry.name));
    }
  }
  assert.equal(watchdogs.length, 1, "one watchdog, outside the tree");
  Deno.kill(watchdogs[0], "SIGKILL");
  child.kill("SIGKILL");
  await child.status;
  await new Promise((resolve) => setTimeout(resolve, 500));
  const left = await taggedProcesses(RUN_TAG, `${id}/`, { prefix: true });
  assert.ok(left.length > 0, "with no watchdog, the tree lives on (the next run stops it)");
  await stopTagged(RUN_TAG, `${id}/`, { prefix: true, graceMs: 100 });
  assert.equal(await gone(id, 10_000), 0);
});
