/**
 * `deno run -A bench/fleet_bench.ts [--rounds 1] [--delay-ms 2000] [--issues 3]`:
 * the wall time of a fleet of issues at --parallel 1, 2 and 3, and the peak
 * memory of the fleet's process tree (the fleet, each run's finishline
 * process and its Claude Code processes), sampled from /proc every 100 ms.
 * The model is the scripted server with a delay on every turn, so that the
 * model's time dominates as it does in real use; each issue is one
 * iteration of three turns (commit a file, complete_task, a last word),
 * then the pull request and the closed issue, through the scripted gh.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { ScriptedModelServer, scriptsByPrompt, textTurn } from "../agents/testing/mod.ts";
import { runCli, tempDir } from "../tests/_helpers.ts";
import { fixIssue, fleetRepo, goIssue, issueKey } from "../tests/e2e/_fleet.ts";
import { TreeSampler } from "./proc.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "1" },
    "delay-ms": { type: "string", default: "2000" },
    issues: { type: "string", default: "3" },
  },
});
const rounds = Number(values.rounds);
const delayMs = Number(values["delay-ms"]);
const issueCount = Number(values.issues);

interface Sample {
  parallel: number;
  wallMs: number;
  peakMiB: number;
  fleetMiB: number;
}

/** One fleet of `issueCount` issues at a parallelism: its wall time and peak memory. */
async function fleetOnce(parallel: number): Promise<Sample> {
  const numbers = Array.from({ length: issueCount }, (_, i) => i + 1);
  await using fleet = await fleetRepo(numbers.map((n) => goIssue(n)));
  await using home = await tempDir("finishline-home-");
  await using server = await ScriptedModelServer.start({
    scripts: scriptsByPrompt(
      Object.fromEntries(numbers.map((n) => [issueKey(n), [fixIssue(n, delayMs)]])),
      [textTurn("Not expected.")],
    ),
  });
  let sampler: TreeSampler | undefined;
  let fleetPeakKiB = 0;
  const started = performance.now();
  const args = ["fleet", "--label", "agent:go", "--parallel", String(parallel), "--json"];
  const run = await runCli(args, {
    cwd: fleet.repo.path,
    server,
    home: home.path,
    env: fleet.gh.env(),
    onSpawn: (child) => {
      sampler = new TreeSampler(child.pid, 100, (_tree, root) => {
        fleetPeakKiB = Math.max(fleetPeakKiB, root);
      });
    },
  });
  const wallMs = performance.now() - started;
  sampler?.stop();
  if (run.code !== 0) throw new Error(`fleet failed (exit ${run.code}):\n${run.stderr}`);
  const result = JSON.parse(run.stdout);
  const done = result.issues.filter((issue: { pullRequest?: string }) => issue.pullRequest).length;
  if (done !== issueCount) throw new Error(`only ${done} pull requests:\n${run.stderr}`);
  return {
    parallel,
    wallMs,
    peakMiB: (sampler?.peakKiB ?? 0) / 1024,
    fleetMiB: fleetPeakKiB / 1024,
  };
}

function median(numbers: number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const log = (line: string) => console.error(line);
log(`fleet bench: ${issueCount} issues, ${delayMs} ms per model turn, ${rounds} round(s)`);
const samples: Sample[] = [];
for (let round = 0; round < rounds; round++) {
  for (const parallel of [1, 2, 3]) {
    const sample = await fleetOnce(parallel);
    samples.push(sample);
    log(
      `  round ${round + 1}, --parallel ${parallel}: ${(sample.wallMs / 1000).toFixed(1)} s, ` +
        `peak ${sample.peakMiB.toFixed(0)} MiB (the fleet process ${
          sample.fleetMiB.toFixed(0)
        } MiB)`,
    );
  }
}
const by = (parallel: number) => samples.filter((sample) => sample.parallel === parallel);
const wall = (parallel: number) => median(by(parallel).map((sample) => sample.wallMs));
console.log("| --parallel | wall time | vs --parallel 1 | peak memory of the tree |");
console.log("| ---------- | --------- | --------------- | ----------------------- |");
for (const parallel of [1, 2, 3]) {
  const peak = Math.max(...by(parallel).map((sample) => sample.peakMiB));
  console.log(
    `| ${parallel} | ${(wall(parallel) / 1000).toFixed(1)} s | ${
      (wall(parallel) / wall(1)).toFixed(2)
    }× | ${peak.toFixed(0)} MiB |`,
  );
}
const ratio = wall(3) / wall(1);
console.log(
  `\n--parallel 3 takes ${ratio.toFixed(2)}× the time of --parallel 1 (target: under 0.6×)`,
);
