/**
 * `deno task bench:finish`: what the finish workflow's model steps add to a
 * run, on the real Claude Code binary and a scripted Messages-API server
 * whose finish answers take `--latency` ms (a real API takes a second or
 * more). For each iteration count, alternating within each round: the run
 * with the finish model off (`finish.maxCostUsd: 0`) and on; with
 * `--before DIR`, the same two from another checkout (the version before a
 * change). Reports, per run: the finish model's requests, and its wall time
 * beyond their latency: the time from the last iteration's end to the
 * `next_actions` checkpoint, finish on minus finish off, minus the requests'
 * latency (the off run pays the same git and store work). The whole run's
 * wall time is given too. Prints a Markdown table of medians and the
 * machine's load before and after.
 *
 *     deno task bench:finish [--rounds 5] [--iterations 1,3] [--latency 1000] [--before DIR] [--json FILE]
 *
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { textTurn, type TurnContext } from "../agents/testing/mod.ts";
import type { ScriptedModelServer } from "../agents/testing/mod.ts";
import { bundledClaude, runLoop } from "./loop_bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    iterations: { type: "string", default: "1,3" },
    latency: { type: "string", default: "1000" },
    before: { type: "string" },
    json: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const latencyMs = Number(values.latency);
const counts = values.iterations!.split(",").map(Number);
if (
  !Number.isInteger(rounds) || rounds < 1 || !(latencyMs >= 0) ||
  counts.some((n) => !Number.isInteger(n) || n < 1)
) {
  console.error(
    "bench:finish: --rounds and --iterations expect positive integers (1,3), --latency milliseconds",
  );
  Deno.exit(2);
}
const beforeMain = values.before ? join(values.before, "agents", "iterator", "main.ts") : undefined;

/** The markers of the finish questions: the one question, and the four of the steps before it. */
const MARKERS = {
  finish: "FINISHLINE FINISH",
  summary: "FINISHLINE SUMMARY",
  learnings: "FINISHLINE LEARNINGS",
  skills: "FINISHLINE SKILLS",
  next_actions: "FINISHLINE NEXT ACTIONS",
};
const SUMMARY = {
  task: "Append a line to work.txt and commit it",
  done: ["Appended and committed"],
  files: ["work.txt"],
  remaining: [],
  approaches_tried: [],
  lessons: [],
  challenges: [],
};
const LEARNINGS = [{ learning: "Commit each step on its own", tags: ["git"] }];
const SKILLS = { used: [{ name: "git", description: "committed" }], missing: [], update: [] };
const ACTIONS = ["Review the commits"];

/** The finish model: the one question's JSON, or (before it) each step's, after `latencyMs`. */
function finishReply(ctx: TurnContext) {
  const text = ctx.lastUserText;
  let reply: unknown;
  if (text.includes(MARKERS.finish)) {
    reply = { summary: SUMMARY, learnings: LEARNINGS, skills: SKILLS, next_actions: ACTIONS };
  } else if (text.includes(MARKERS.summary)) reply = SUMMARY;
  else if (text.includes(MARKERS.learnings)) reply = { learnings: LEARNINGS };
  else if (text.includes(MARKERS.skills)) reply = SKILLS;
  else if (text.includes(MARKERS.next_actions)) reply = { next_actions: ACTIONS };
  else return textTurn("OK.");
  return { text: JSON.stringify(reply), delayMs: latencyMs };
}

/** What one run's finish did. */
interface FinishSample {
  wallMs: number;
  /** The finish model's requests. */
  requests: number;
  /** From the last iteration's end to the next_actions checkpoint, ms. */
  spanMs: number;
  /** Whether the finish model's process was opened ahead and used. */
  opened: boolean;
  /** From the last iteration's end to the first finish request reaching the server, ms. */
  toRequestMs: number;
  /** From the last finish reply (its latency past the request) to the next_actions checkpoint, ms. */
  afterReplyMs: number;
}

/** The run's log: the one `.jsonl` file under the repository (wherever the agent logs). */
async function logOf(repo: string): Promise<Array<Record<string, unknown>>> {
  const walk = async (dir: string): Promise<string | undefined> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isFile && entry.name.endsWith(".jsonl")) return path;
      if (entry.isDirectory && entry.name !== ".git") {
        const found = await walk(path);
        if (found) return found;
      }
    }
    return undefined;
  };
  const file = await walk(repo);
  if (!file) throw new Error(`no run log under ${repo}`);
  const text = await Deno.readTextFile(file);
  return text.split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

async function measure(
  version: "after" | "before",
  finish: boolean,
  iterations: number,
): Promise<FinishSample> {
  let found: Omit<FinishSample, "wallMs"> | undefined;
  const inspect = async (repo: string, server: ScriptedModelServer) => {
    const log = await logOf(repo);
    const at = (record: Record<string, unknown> | undefined) => Date.parse(String(record?.ts));
    const ended = log.findLast((record) => record.kind === "iteration_finished");
    const actions = log.find((record) =>
      record.kind === "finish_step" && record.step === "next_actions"
    );
    const asked = server.requests.filter((request) => {
      if (!request.side) return false;
      const text = JSON.stringify(request.body.messages);
      return Object.values(MARKERS).some((marker) => text.includes(marker));
    });
    const requests = asked.length;
    found = {
      requests,
      spanMs: at(actions) - at(ended),
      toRequestMs: asked.length ? asked[0].receivedAt - at(ended) : NaN,
      afterReplyMs: asked.length ? at(actions) - asked.at(-1)!.receivedAt - latencyMs : NaN,
      opened: log.some((record) => record.kind === "finish_model" && record.opened === true),
    };
  };
  const sample = await runLoop("fresh", iterations, claude, undefined, {
    finishModel: finish,
    sideReply: finishReply,
    main: version === "before" ? beforeMain : undefined,
    inspect,
  });
  return { wallMs: sample.wallMs, ...found! };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const load = () => Deno.loadavg().map((value) => value.toFixed(2)).join(" ");
const claude = await bundledClaude();
const loadBefore = load();
console.error(`Claude Code: ${claude}; load average ${loadBefore}; finish latency ${latencyMs} ms`);

const versions: Array<"after" | "before"> = beforeMain ? ["before", "after"] : ["after"];
const samples = new Map<string, FinishSample[]>();
const key = (version: string, finish: boolean, n: number) =>
  `${version}:${finish ? "on" : "off"}:${n}`;
// One warm-up run of each, not counted.
for (const version of versions) {
  for (const finish of [false, true]) await measure(version, finish, 1);
}
for (let round = 1; round <= rounds; round++) {
  for (const n of counts) {
    for (const version of versions) {
      for (const finish of [false, true]) {
        const sample = await measure(version, finish, n);
        samples.set(key(version, finish, n), [
          ...samples.get(key(version, finish, n)) ?? [],
          sample,
        ]);
        console.error(
          `round ${round} ${String(n).padStart(2)} it ${version} finish ${finish ? "on " : "off"} ${
            Math.round(sample.wallMs)
          } ms, span ${sample.spanMs} ms, ${sample.requests} finish requests${
            sample.requests
              ? ` (first after ${sample.toRequestMs} ms, next_actions ${sample.afterReplyMs} ms after the last reply)`
              : ""
          }${sample.opened ? ", opened ahead" : ""}`,
        );
      }
    }
  }
}
const loadAfter = load();

const of = (
  version: string,
  finish: boolean,
  n: number,
  field: "wallMs" | "spanMs" | "requests" | "toRequestMs" | "afterReplyMs",
) => median(samples.get(key(version, finish, n))!.map((sample) => sample[field]));
const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/^model name\s*:\s*(.+)$/m)?.[1] ??
  "unknown CPU";
const lines = [
  `Median of ${rounds} alternating rounds, finish answers after ${latencyMs} ms; ${cpu}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}; load average ${loadBefore} before, ${loadAfter} after.`,
  "",
  "| version | iterations | finish requests / run | finish wall time beyond the requests' latency | to the first request | after the last reply | run wall time, finish off | run wall time, finish on |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...versions.flatMap((version) =>
    counts.map((n) => {
      const requests = of(version, true, n, "requests");
      const beyond = of(version, true, n, "spanMs") - of(version, false, n, "spanMs") -
        requests * latencyMs;
      return `| ${version} | ${n} | ${requests} | ${Math.round(beyond)} ms | ${
        Math.round(of(version, true, n, "toRequestMs"))
      } ms | ${Math.round(of(version, true, n, "afterReplyMs"))} ms | ${
        Math.round(of(version, false, n, "wallMs"))
      } ms | ${Math.round(of(version, true, n, "wallMs"))} ms |`;
    })
  ),
];
console.log(lines.join("\n"));
if (values.json) {
  await Deno.writeTextFile(
    values.json,
    JSON.stringify(
      { latencyMs, loadBefore, loadAfter, samples: Object.fromEntries(samples) },
      null,
      2,
    ),
  );
}
