/**
 * The run history's overhead: time to record an iteration (median and p95
 * over many), and the database size after 100 iterations.
 *
 *     deno run -A bench/store_bench.ts [iterations]
 *
 * @module
 */

import { SqliteStore } from "../agents/store/mod.ts";
import { emptySummary } from "../agents/record/iteration.ts";

/** What recording iterations costs. */
export interface StoreBench {
  iterations: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  /** state.db plus its WAL after the run. */
  sizeKiB: number;
}

/**
 * Record `iterations` realistic iterations in a new store and time each.
 *
 * @param iterations How many.
 * @returns Median, p95 and max time per iteration, and the file size.
 */
export async function storeBench(iterations: number): Promise<StoreBench> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-store-bench-" });
  try {
    return measure(dir, iterations);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function measure(dir: string, iterations: number): StoreBench {
  const path = `${dir}/state.db`;
  const store = SqliteStore.open(path);
  const runId = crypto.randomUUID();
  store.createRun({
    id: runId,
    agent: "bench",
    handler: "iterate",
    argv: ["--iterate-max", String(iterations)],
    cwd: dir,
    startedAt: new Date().toISOString(),
    baseline: null,
    branch: null,
    maxIterations: iterations,
    cleanup: {},
  });
  const times: number[] = [];
  for (let number = 1; number <= iterations; number++) {
    // A realistic summary: a few responses, tool calls with inputs, git evidence.
    const summary = {
      ...emptySummary(number),
      sessionId: crypto.randomUUID(),
      assistantResponses: [
        "I read the failing test and found the off-by-one in the pagination helper.",
        "Fixed it, added a regression test, and all 214 tests pass now. ".repeat(3),
      ],
      toolsUsed: ["Read", "Read", "Edit", "Bash", "Bash"],
      toolCalls: [
        { name: "Read", input: { file_path: "src/pagination.ts" } },
        { name: "Read", input: { file_path: "tests/pagination_test.ts" } },
        {
          name: "Edit",
          input: { file_path: "src/pagination.ts", old_string: "i <= n", new_string: "i < n" },
        },
        { name: "Bash", input: { command: "deno task test" } },
        { name: "Bash", input: { command: "git commit -am 'fix: pagination off-by-one'" } },
      ],
      costUsd: 0.0421,
      tokens: { input: 18_000, output: 1_200, cacheRead: 9_000, cacheCreation: 2_000 },
      turns: 7,
      durationMs: 41_000,
      stopReason: "end_turn",
      git: {
        baseline: "a".repeat(40),
        head: "b".repeat(40),
        newCommits: 1,
        staged: [],
        unstaged: [],
      },
    };
    const started = performance.now();
    store.recordIteration({
      runId,
      number,
      sessionId: summary.sessionId,
      promptDigest: "c".repeat(64),
      summary,
      verdict: "continue",
    });
    times.push(performance.now() - started);
  }
  store.setRunStatus(runId, "completed", "bench");
  store.close();
  let size = 0;
  for (const entry of Deno.readDirSync(dir)) size += Deno.statSync(`${dir}/${entry.name}`).size;
  const sorted = [...times].sort((a, b) => a - b);
  return {
    iterations,
    medianMs: sorted[Math.floor(sorted.length / 2)],
    p95Ms: sorted[Math.floor(sorted.length * 0.95)],
    maxMs: sorted.at(-1)!,
    sizeKiB: size / 1024,
  };
}

if (import.meta.main) {
  const result = await storeBench(Number(Deno.args[0] ?? 100));
  console.log(`iterations recorded:      ${result.iterations}`);
  console.log(
    `record time per iteration: median ${result.medianMs.toFixed(3)} ms, p95 ${
      result.p95Ms.toFixed(3)
    } ms, max ${result.maxMs.toFixed(3)} ms`,
  );
  console.log(`database size:             ${result.sizeKiB.toFixed(1)} KiB (state.db + WAL)`);
}
