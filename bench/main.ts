/**
 * `deno task bench`: finishline's cost against a bare `claude -p` loop, its
 * runner's memory over a long run, the run history's cost, and where
 * finishline's own time goes. Everything runs locally against a scripted
 * Messages-API server and the SDK's bundled Claude Code binary.
 *
 *     deno task bench [--rounds 5] [--iterations 5] [--memory-iterations 100] [--json FILE]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { RunLog } from "../agents/support/log.ts";
import { GitRepo } from "../agents/git/repo.ts";
import { MAIN, tempDir, tempRepo } from "../tests/_helpers.ts";
import { bundledClaude, type LoopKind, type LoopSample, runLoop } from "./loop_bench.ts";
import { storeBench } from "./store_bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    iterations: { type: "string", default: "5" },
    "memory-iterations": { type: "string", default: "100" },
    json: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const iterations = Number(values.iterations);
const memoryIterations = Number(values["memory-iterations"]);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const ms = (value: number) => `${Math.round(value)} ms`;
const log = (line: string) => console.error(line);

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const meanX = points.reduce((total, [x]) => total + x, 0) / n;
  const meanY = points.reduce((total, [, y]) => total + y, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const [x, y] of points) {
    numerator += (x - meanX) * (y - meanY);
    denominator += (x - meanX) ** 2;
  }
  return denominator === 0 ? 0 : numerator / denominator;
}

/** Median wall time of a short command, ms. */
async function timeCommand(args: string[], repeat = 5): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < repeat; run++) {
    const started = performance.now();
    const output = await new Deno.Command(Deno.execPath(), {
      args,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(`deno ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`);
    }
    times.push(performance.now() - started);
  }
  return median(times);
}

const claude = await bundledClaude();
log(`Claude Code: ${claude}`);

// 1. The three loops, alternating, after one warm-up round that is not counted.
const kinds: LoopKind[] = ["bare", "fresh", "continue"];
const samples: Record<LoopKind, LoopSample[]> = { bare: [], fresh: [], continue: [] };
for (let round = 0; round <= rounds; round++) {
  for (const kind of kinds) {
    const sample = await runLoop(kind, iterations, claude);
    log(
      `${round === 0 ? "warm-up" : `round ${round}`} ${kind.padEnd(8)} ${ms(sample.wallMs)}, peak ${
        sample.peakMiB.toFixed(0)
      } MiB, first request ${ms(sample.firstRequestMs)}`,
    );
    if (round > 0) samples[kind].push(sample);
  }
}
const summary = Object.fromEntries(kinds.map((kind) => {
  const runs = samples[kind];
  const pick = (field: keyof LoopSample) =>
    median(
      runs.map((run) => run[field] as number | undefined).filter((value) =>
        value !== undefined
      ) as number[],
    );
  return [kind, {
    wallMs: pick("wallMs"),
    peakMiB: pick("peakMiB"),
    firstRequestMs: pick("firstRequestMs"),
    overheadPerIterationMs: kind === "bare" ? 0 : pick("overheadPerIterationMs"),
    loopWorkPerIterationMs: kind === "bare" ? 0 : pick("loopWorkPerIterationMs"),
  }];
})) as Record<LoopKind, {
  wallMs: number;
  peakMiB: number;
  firstRequestMs: number;
  overheadPerIterationMs: number;
  loopWorkPerIterationMs: number;
}>;
const freshRatio = summary.fresh.wallMs / summary.bare.wallMs;
const continueRatio = summary.continue.wallMs / summary.bare.wallMs;

// 2. The runner's own memory over a long run (the agent's processes not counted):
// its resident set at iterations 10 and 50, and the growth per iteration over the
// second half of the run, once V8 has sized its heap.
const memory: Record<string, { at10: number; at50: number; atEnd: number; slopeKiB: number }> = {};
for (const kind of ["fresh", "continue"] as const) {
  const byIteration = new Map<number, number>();
  await runLoop(kind, memoryIterations, claude, (rootKiB, iteration) => {
    if (rootKiB > 0) byIteration.set(iteration, rootKiB);
  });
  const half = Math.floor(memoryIterations / 2);
  const points = [...byIteration].filter(([iteration]) => iteration >= half);
  const at = (iteration: number) => (byIteration.get(iteration) ?? 0) / 1024;
  memory[kind] = {
    at10: at(10),
    at50: at(50),
    atEnd: at(memoryIterations),
    slopeKiB: slope(points),
  };
  log(
    `memory ${kind}: runner ${memory[kind].at10.toFixed(1)} MiB at iteration 10, ${
      memory[kind].at50.toFixed(1)
    } MiB at 50, ${memory[kind].atEnd.toFixed(1)} MiB at ${memoryIterations}, ${
      memory[kind].slopeKiB.toFixed(1)
    } KiB per iteration from ${half} on`,
  );
}

// 3. The run history.
const store = await storeBench(100);

// 4. Where finishline's own time goes.
await using scratch = await tempDir("finishline-bench-profile-");
const empty = join(scratch.path, "empty.ts");
await Deno.writeTextFile(empty, "");
const config = new URL("../deno.json", import.meta.url).pathname;
const sdkImport = join(scratch.path, "sdk.ts");
await Deno.writeTextFile(sdkImport, 'await import("@anthropic-ai/claude-agent-sdk/core");\n');
const denoStart = await timeCommand(["run", "--no-config", empty]);
const cliLoad = await timeCommand(["run", "-A", MAIN, "--version"]);
const sdkLoad = await timeCommand(["run", "-A", "--config", config, sdkImport]);
await using repo = await tempRepo();
const gitRepo = (await GitRepo.open(repo.path))!;
const observeTimes: number[] = [];
for (let run = 0; run < 20; run++) {
  const started = performance.now();
  await gitRepo.observe(null);
  observeTimes.push(performance.now() - started);
}
const runLog = RunLog.open(join(scratch.path, "run.jsonl"));
const message = {
  type: "assistant",
  session_id: crypto.randomUUID(),
  message: {
    role: "assistant",
    content: [
      { type: "text", text: "I'll run the tests now. ".repeat(20) },
      { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "deno task test" } },
    ],
  },
};
const logStarted = performance.now();
for (let run = 0; run < 1000; run++) runLog.message(1, message);
const logPerMessage = (performance.now() - logStarted) / 1000;
runLog.close();

const rows = [
  ["bare `claude -p` loop", summary.bare, "1.00"],
  ['finishline, `session: "fresh"`', summary.fresh, freshRatio.toFixed(2)],
  ['finishline, `session: "continue"`', summary.continue, continueRatio.toFixed(2)],
] as const;
const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/^model name\s*:\s*(.+)$/m)?.[1] ??
  "unknown CPU";
const table = [
  `${iterations} iterations, each one session of two model turns with one Bash call; median of ${rounds} alternating rounds.`,
  `Machine: ${cpu}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}.`,
  "",
  "| loop | wall time | vs bare | peak memory (tree) | first model request | finishline overhead / iteration |",
  "|---|---|---|---|---|---|",
  ...rows.map(([name, row, ratio]) =>
    `| ${name} | ${ms(row.wallMs)} | ${ratio} | ${row.peakMiB.toFixed(0)} MiB | ${
      ms(row.firstRequestMs)
    } | ${
      name.startsWith("bare")
        ? "–"
        : `${ms(row.overheadPerIterationMs)} (${ms(row.loopWorkPerIterationMs)} between sessions)`
    } |`
  ),
  "",
  `Targets: fresh/bare ${freshRatio.toFixed(2)} (target <= 1.05) ${
    freshRatio <= 1.05 ? "met" : "MISSED"
  }; continue/bare ${continueRatio.toFixed(2)} (target < 1.00) ${
    continueRatio < 1 ? "met" : "MISSED"
  }.`,
  "",
  `Runner process alone (resident set, the agent's processes not counted), ${memoryIterations} iterations:`,
  ...Object.entries(memory).map(([kind, row]) =>
    `- ${kind}: ${row.at10.toFixed(1)} MiB at iteration 10, ${
      row.at50.toFixed(1)
    } MiB at 50 (target < 120 MiB ${row.at50 < 120 ? "met" : "MISSED"}), ${
      row.atEnd.toFixed(1)
    } MiB at ${memoryIterations}; ${row.slopeKiB.toFixed(1)} KiB per iteration from ${
      Math.floor(memoryIterations / 2)
    } on`
  ),
  "",
  `Run history: ${store.medianMs.toFixed(2)} ms per recorded iteration (p95 ${
    store.p95Ms.toFixed(2)
  } ms), ${store.sizeKiB.toFixed(0)} KiB after ${store.iterations} iterations.`,
  "",
  "Where finishline's own time goes:",
  `- Deno start (empty script): ${ms(denoStart)}`,
  `- CLI start (\`main.ts --version\`, its static imports): ${ms(cliLoad)}`,
  `- Claude Agent SDK import (\`/core\`): ${ms(sdkLoad)}`,
  `- git state per observation (HEAD, commits, status, diff at once): ${
    median(observeTimes).toFixed(1)
  } ms`,
  `- JSONL log, per agent message (redacted, written at once): ${
    (logPerMessage * 1000).toFixed(0)
  } µs`,
].join("\n");
console.log(table);
if (values.json) {
  await Deno.writeTextFile(
    values.json,
    JSON.stringify({ iterations, rounds, samples, summary, memory, store }, null, 2),
  );
}
