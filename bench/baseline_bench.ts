/**
 * What evidence by default costs a run: the wall time the baseline adds
 * beyond the longer of the baseline and the first session, and the model
 * requests per iteration of an agent that complies (a Bash commit, a
 * complete_task call, a last text) against a bare loop's (the commit and the
 * text). The repository's check takes about 2 s (`sleep 2 && node --test`).
 *
 *     deno run -A bench/baseline_bench.ts [--rounds 3]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { COMPLETE_TASK_TOOL } from "../agents/record/complete_task_tool.ts";
import {
  ScriptedModelServer,
  type ScriptedTurn,
  textTurn,
  toolTurn,
} from "../agents/testing/mod.ts";
import { git, runCli, tempRepo } from "../tests/_helpers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "3" } },
});
const rounds = Number(values.rounds);

const TEST = `const test = require("node:test");
const assert = require("node:assert");
test("adds", () => assert.equal(1 + 1, 2));
`;

interface Sample {
  wallMs: number;
  baselineMs?: number;
  sessionMs: number;
  requests: number;
}

/** One run of the compliant agent; `sessionDelayMs` stretches its first session. */
async function sample(baseline: boolean, sessionDelayMs: number): Promise<Sample> {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/test`);
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ scripts: { test: "sleep 2 && node --test" } }),
  );
  await Deno.writeTextFile(`${repo.path}/test/a.test.js`, TEST);
  await Deno.mkdir(`${repo.path}/.agent/bench`, { recursive: true });
  await Deno.writeTextFile(
    `${repo.path}/.agent/bench/agent.json`,
    JSON.stringify({
      name: "bench",
      behavior: {
        completionType: "manual",
        completionConfig: { completionKeyword: "BENCH DONE", maxIterations: 2 },
        allowedTools: ["Bash"],
      },
      verify: { baseline },
      probe: { enabled: false },
    }),
  );
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const turns: ScriptedTurn[] = [
    {
      ...toolTurn("Bash", {
        command: "echo x > x.txt && git add x.txt && git commit -qm 'feat: x'",
      }),
      delayMs: sessionDelayMs,
    },
    toolTurn(COMPLETE_TASK_TOOL, {
      status: "success",
      original_request_summary: "Add x",
      summary: "Added x",
    }),
    textTurn("BENCH DONE"),
  ];
  await using server = await ScriptedModelServer.start({ scripts: [turns] });
  const started = performance.now();
  const run = await runCli(["--agent", "bench", "--task", "Add x", "--json"], {
    cwd: repo.path,
    server,
  });
  const wallMs = performance.now() - started;
  if (run.code !== 0) throw new Error(`run failed (${run.code}): ${run.stderr}`);
  const result = JSON.parse(run.stdout);
  const records = (await Deno.readTextFile(result.logFile)).trim().split("\n").map((line) =>
    JSON.parse(line)
  );
  const base = records.find((record) => record.kind === "baseline");
  const finished = records.find((record) => record.kind === "iteration_finished");
  return {
    wallMs,
    baselineMs: base?.durationMs,
    sessionMs: finished.summary.agentMs,
    requests: server.requests.filter((request) => !request.side).length,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

await sample(true, 0); // warm-up: caches, first Claude Code start
for (const delay of [4000, 0]) {
  const on: Sample[] = [];
  const off: Sample[] = [];
  for (let round = 0; round < rounds; round++) {
    on.push(await sample(true, delay));
    off.push(await sample(false, delay));
  }
  const wallOn = median(on.map((s) => s.wallMs));
  const wallOff = median(off.map((s) => s.wallMs));
  const baselineMs = median(on.map((s) => s.baselineMs ?? NaN));
  const sessionMs = median(off.map((s) => s.sessionMs));
  // With the baseline off, the run is the session plus the gate; with it on,
  // the baseline overlaps the session, so what it may add is its excess over the session.
  const excess = Math.max(0, baselineMs - sessionMs);
  console.log(
    `first session ~${(sessionMs / 1000).toFixed(1)} s, baseline ${
      (baselineMs / 1000).toFixed(1)
    } s: ` +
      `run ${(wallOff / 1000).toFixed(2)} s without the baseline, ${
        (wallOn / 1000).toFixed(2)
      } s with it; ` +
      `added ${((wallOn - wallOff) / 1000).toFixed(2)} s, beyond the longer of the two ${
        ((wallOn - wallOff - excess) / 1000).toFixed(2)
      } s; model requests ${median(on.map((s) => s.requests))} (a bare loop: 2)`,
  );
}
