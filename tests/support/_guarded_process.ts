/**
 * The process the kill -9 test and bench kill: it guards itself as a run does, then
 * starts a tree that is hard to stop (a shell that ignores SIGTERM, a daemon
 * that leaves the session, a grandchild that ignores SIGTERM and keeps
 * forking), prints the pids, and waits.
 *
 * @module
 */

import { guardProcesses, RUN_TAG } from "../../agents/support/process_tags.ts";

const quiet = { stdin: "null", stdout: "null", stderr: "null" } as const;
await guardProcesses(RUN_TAG, Deno.args[0]);
const children = [
  new Deno.Command("sh", { args: ["-c", "trap '' TERM; sleep 300"], ...quiet }).spawn(),
  new Deno.Command("setsid", { args: ["sh", "-c", "sleep 300 & sleep 300"], ...quiet }).spawn(),
  new Deno.Command("sh", {
    args: ["-c", "sh -c 'trap \"\" TERM; while :; do sleep 0.05; done' & wait"],
    ...quiet,
  }).spawn(),
];
await new Promise((resolve) => setTimeout(resolve, 300));
console.log(JSON.stringify(children.map((child) => child.pid)));
await new Promise(() => {});
