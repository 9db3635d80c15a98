/**
 * Per-iteration overhead of the ACP backend against the SDK backend on
 * Claude Code, in one alternating run: each round runs the same `iterate`
 * task once through the Agent SDK and once through claude-agent-acp, against
 * the scripted model server, in fresh temp repositories. Both drive the same
 * Claude Code binary (the SDK's bundled one; claude-agent-acp gets it through
 * CLAUDE_CODE_EXECUTABLE), so the difference is the backend.
 *
 *     deno run -A bench/acp_bench.ts [--rounds 5] [--iterations 5]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { ScriptedModelServer, textTurn, toolTurn } from "../agents/testing/mod.ts";
import { commitAgent, runCli, tempRepo } from "../tests/_helpers.ts";
import { bundledClaude } from "./loop_bench.ts";
import { toolCommand } from "../tests/pinned/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    iterations: { type: "string", default: "5" },
  },
});
const rounds = Number(values.rounds);
const iterations = Number(values.iterations);
const claude = await bundledClaude();
const CLAUDE_ACP = toolCommand("@zed-industries/claude-agent-acp");

type Kind = "sdk" | "acp";

/** One run of `iterations` iterations; returns wall milliseconds per iteration. */
async function runOnce(kind: Kind): Promise<number> {
  await using repo = await tempRepo();
  const backend = kind === "sdk"
    ? "claude"
    : { acp: { command: CLAUDE_ACP, env: { IS_SANDBOX: "1", CLAUDE_CODE_EXECUTABLE: claude } } };
  await commitAgent(repo.path, {
    name: "bench",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: iterations },
      // Both backends run the same bare loop, as in bench/main.ts: the stop hook would add turns.
      requireCompleteTask: false,
      prewarm: false,
      backend,
    },
    probe: { enabled: false },
  });
  await using server = await ScriptedModelServer.start({
    scripts: ({ sessionIndex }) => [
      toolTurn("Bash", {
        command:
          `echo ${sessionIndex} >> n.txt && git add n.txt && git commit -qm "docs: ${sessionIndex}"`,
      }),
      textTurn("done"),
    ],
  });
  const started = performance.now();
  const run = await runCli(["--agent", "bench", "--json", "--task", "count"], {
    cwd: repo.path,
    server,
  });
  const wall = performance.now() - started;
  if (run.code !== 0) throw new Error(`${kind} run failed: ${run.stderr}`);
  return wall / iterations;
}

function median(list: number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const samples: Record<Kind, number[]> = { sdk: [], acp: [] };
await runOnce("sdk"); // warm caches
await runOnce("acp");
for (let round = 0; round < rounds; round++) {
  for (const kind of round % 2 === 0 ? ["sdk", "acp"] as const : ["acp", "sdk"] as const) {
    samples[kind].push(await runOnce(kind));
  }
  console.error(
    `round ${round + 1}: sdk ${Math.round(samples.sdk.at(-1)!)} ms/it, acp ${
      Math.round(samples.acp.at(-1)!)
    } ms/it`,
  );
}
const sdk = median(samples.sdk);
const acp = median(samples.acp);
console.log(
  `${rounds} alternating rounds of ${iterations} iterations (prewarm off for both): ` +
    `SDK ${Math.round(sdk)} ms/iteration, ACP ${Math.round(acp)} ms/iteration (median), ` +
    `ACP overhead ${Math.round(acp - sdk)} ms/iteration`,
);
