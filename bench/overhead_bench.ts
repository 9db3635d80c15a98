/**
 * `deno task bench:overhead`: finishline's wall time against a bare
 * `claude -p` loop at 1, 3, 5 and 10 iterations, on the real Claude Code
 * binary and a scripted Messages-API server. Three loops, alternating within
 * each round: the bare loop, finishline doing the same model work (`session:
 * "fresh"`, no status probe, no checks, no finish model steps), and finishline
 * with the finish workflow's model steps on (its default). Prints a Markdown
 * table of medians and the machine's load before and after.
 *
 *     deno task bench:overhead [--rounds 5] [--iterations 1,3,5,10] [--before DIR] [--json FILE]
 *
 * `--before DIR` adds a fourth loop: the same-work run with the CLI of another
 * checkout (`git worktree add DIR <commit>`), so that before and after are
 * measured alternating, in one sitting.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { bundledClaude, type LoopSample, runLoop } from "./loop_bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    iterations: { type: "string", default: "1,3,5,10" },
    json: { type: "string" },
    before: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const counts = values.iterations!.split(",").map(Number);
if (!Number.isInteger(rounds) || rounds < 1 || counts.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error("bench:overhead: --rounds and --iterations expect positive integers (1,3,5,10)");
  Deno.exit(2);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const load = () => Deno.loadavg().map((value) => value.toFixed(2)).join(" ");
const claude = await bundledClaude();
const loadBefore = load();
console.error(`Claude Code: ${claude}; load average ${loadBefore}`);

type Loop = "bare" | "equal" | "finish" | "before";
const beforeMain = values.before
  ? new URL(`file://${await Deno.realPath(values.before)}/agents/iterator/main.ts`).pathname
  : undefined;
const LOOPS: Loop[] = ["bare", "equal", "finish", ...(beforeMain ? ["before" as const] : [])];
const samples = new Map<string, LoopSample[]>();
// One warm-up run of each loop (caches, the page cache), not counted.
for (const loop of LOOPS) await run(loop, 1);
for (let round = 1; round <= rounds; round++) {
  for (const iterations of counts) {
    for (const loop of LOOPS) {
      const sample = await run(loop, iterations);
      const key = `${loop}:${iterations}`;
      samples.set(key, [...samples.get(key) ?? [], sample]);
      console.error(
        `round ${round} ${String(iterations).padStart(2)} it ${loop.padEnd(6)} ${
          Math.round(sample.wallMs)
        } ms, first request ${Math.round(sample.firstRequestMs)} ms`,
      );
    }
  }
}
const loadAfter = load();

function run(loop: Loop, iterations: number): Promise<LoopSample> {
  return loop === "bare"
    ? runLoop("bare", iterations, claude)
    : runLoop("fresh", iterations, claude, undefined, {
      finishModel: loop === "finish",
      main: loop === "before" ? beforeMain : undefined,
    });
}

const wall = (loop: Loop, iterations: number) =>
  median(samples.get(`${loop}:${iterations}`)!.map((sample) => sample.wallMs));
/**
 * The median of the per-round ratios against the bare loop of the same round:
 * the machine's drift between rounds (a VM's neighbours) cancels out.
 */
const ratio = (loop: Loop, iterations: number) => {
  const bare = samples.get(`bare:${iterations}`)!;
  return median(
    samples.get(`${loop}:${iterations}`)!.map((sample, round) =>
      sample.wallMs / bare[round].wallMs
    ),
  ).toFixed(2);
};
const first = (loop: Loop, iterations: number) =>
  median(samples.get(`${loop}:${iterations}`)!.map((sample) => sample.firstRequestMs));
const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/^model name\s*:\s*(.+)$/m)?.[1] ??
  "unknown CPU";
const lines = [
  `Median of ${rounds} alternating rounds ("vs bare": the median of each round's ratio to that round's bare loop); ${cpu}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}; load average ${loadBefore} before, ${loadAfter} after.`,
  "",
  `| iterations | bare loop | finishline, same work | vs bare | finishline, finish model on | vs bare | first request (bare / finishline) |${
    beforeMain ? " before, same work | vs bare |" : ""
  }`,
  `| ---: | ---: | ---: | ---: | ---: | ---: | ---: |${beforeMain ? " ---: | ---: |" : ""}`,
  ...counts.map((n) =>
    `| ${n} | ${Math.round(wall("bare", n))} ms | ${Math.round(wall("equal", n))} ms | ${
      ratio("equal", n)
    } | ${Math.round(wall("finish", n))} ms | ${ratio("finish", n)} | ${
      Math.round(first("bare", n))
    } / ${Math.round(first("equal", n))} ms |${
      beforeMain ? ` ${Math.round(wall("before", n))} ms | ${ratio("before", n)} |` : ""
    }`
  ),
];
console.log(lines.join("\n"));
if (values.json) {
  await Deno.writeTextFile(
    values.json,
    JSON.stringify({ loadBefore, loadAfter, samples: Object.fromEntries(samples) }, null, 2),
  );
}
