/**
 * Per-iteration wall time of the ACP backends against the SDK backend on
 * Claude Code, in one alternating run: each round runs the same `iterate`
 * task once per backend, against its scripted model server, in fresh temp
 * repositories. The SDK backend and claude-agent-acp drive the same Claude
 * Code binary (the SDK's bundled one; claude-agent-acp gets it through
 * CLAUDE_CODE_EXECUTABLE), so their difference is the backend. Codex, opencode
 * and Gemini CLI have no SDK twin: their figures are for before and after.
 *
 *     deno run -A bench/acp_bench.ts [--rounds 5] [--iterations 5]
 *       [--backends sdk,claude-acp,codex,opencode,gemini] [--prewarm]
 *
 * `--prewarm` runs every backend with `behavior.prewarm` on (the default of
 * a run); without it, off for all (the figure of issue 31). `--before DIR`
 * also runs each ACP backend with the CLI of another checkout (`git worktree
 * add DIR main`), alternating with this one: before and after in one sitting.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { textTurn } from "../agents/testing/mod.ts";
import { commitAgent, denoDir, MAIN, tempRepo } from "../tests/_helpers.ts";
import { bundledClaude } from "./loop_bench.ts";
import {
  BACKENDS,
  type BackendUnderTest,
  CLAUDE_ACP_BACKEND,
  CLAUDE_SDK,
} from "../tests/e2e/_backends.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    iterations: { type: "string", default: "5" },
    backends: { type: "string", default: "sdk,claude-acp" },
    prewarm: { type: "boolean", default: false },
    before: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const iterations = Number(values.iterations);
const claude = await bundledClaude();

const byName: Record<string, BackendUnderTest> = {
  sdk: CLAUDE_SDK,
  ...Object.fromEntries(BACKENDS.filter((b) => b !== CLAUDE_SDK).map((b) => [b.name, b])),
};
const names = values.backends.split(",").map((name) => {
  if (!byName[name]) {
    throw new Error(`--backends: unknown "${name}"; expected ${Object.keys(byName)}`);
  }
  return name;
});
const BEFORE = "@before";
const beforeMain = values.before
  ? `${values.before.replace(/\/$/, "")}/agents/iterator/main.ts`
  : undefined;
const kinds = beforeMain
  ? names.flatMap((name) => name === "sdk" ? [name] : [`${name}${BEFORE}`, name])
  : names;

/** One run of `iterations` iterations; returns wall milliseconds per iteration. */
async function runOnce(kind: string): Promise<number> {
  const backend = byName[kind.replace(BEFORE, "")];
  const main = kind.endsWith(BEFORE) ? beforeMain! : MAIN;
  await using repo = await tempRepo();
  await using harness = await backend.start(
    Array.from({ length: iterations }, (_, n) => [
      backend.shell(`echo ${n} >> n.txt && git add n.txt && git commit -qm "docs: ${n}"`),
      textTurn("done"),
    ]),
  );
  let setting = harness.backend;
  if (backend === CLAUDE_ACP_BACKEND && setting && typeof setting !== "string") {
    setting = {
      acp: { ...setting.acp, env: { ...setting.acp.env, CLAUDE_CODE_EXECUTABLE: claude } },
    };
  }
  await commitAgent(repo.path, {
    name: "bench",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: iterations },
      // Every backend runs the same bare loop, as in bench/main.ts: the stop hook would add turns.
      requireCompleteTask: false,
      prewarm: values.prewarm,
      ...(setting ? { backend: setting } : {}),
    },
    probe: { enabled: false },
    // Per iteration only: the finish's model steps come once a run, after the loop.
    finish: { maxCostUsd: 0 },
  });
  const started = performance.now();
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", main, "--agent", "bench", "--json", "--task", "count"],
    cwd: repo.path,
    env: { NO_COLOR: "1", DENO_DIR: await denoDir(), ...harness.server?.env(harness.home) },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const wall = performance.now() - started;
  if (run.code !== 0) {
    throw new Error(`${kind} run failed: ${new TextDecoder().decode(run.stderr)}`);
  }
  return wall / iterations;
}

function median(list: number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const load = async () =>
  new TextDecoder().decode((await new Deno.Command("uptime").output()).stdout).trim();
console.error(`before: ${await load()}`);
const samples: Record<string, number[]> = Object.fromEntries(kinds.map((kind) => [kind, []]));
for (const kind of kinds) await runOnce(kind); // warm caches
for (let round = 0; round < rounds; round++) {
  // Alternating: each round runs the backends in the other order.
  const order = round % 2 === 0 ? kinds : [...kinds].reverse();
  for (const kind of order) samples[kind].push(await runOnce(kind));
  console.error(
    `round ${round + 1}: ${
      kinds.map((k) => `${k} ${Math.round(samples[k].at(-1)!)}`).join(", ")
    } ms/it`,
  );
}
console.error(`after: ${await load()}`);
const sdk = samples.sdk ? median(samples.sdk) : undefined;
console.log(
  `${rounds} alternating rounds of ${iterations} iterations (prewarm ${
    values.prewarm ? "on" : "off"
  } for all), median ms/iteration:`,
);
for (const kind of kinds) {
  const ms = median(samples[kind]);
  const against = sdk !== undefined && kind !== "sdk"
    ? ` (${ms - sdk >= 0 ? "+" : ""}${Math.round(ms - sdk)} against the SDK)`
    : "";
  console.log(`  ${kind.padEnd(17)} ${Math.round(ms)}${against}`);
}
