/**
 * finishline against the loop people write by hand, on the real Claude Code
 * binary and a scripted local Messages-API server. The scenario: N
 * iterations, each one session of two model turns with one Bash tool call
 * (the agent appends a line and commits it).
 *
 * - `bare`: a shell loop of N `claude -p --output-format stream-json --verbose`
 *   calls with the SDK's bundled binary;
 * - `fresh`: finishline, `session: "fresh"` (a new Claude Code session per iteration);
 * - `continue`: finishline, `session: "continue"` (one Claude Code process for
 *   the whole run, fed each prompt through the SDK's streaming input).
 *
 * The finishline agent is set up like the bare loop: the iterate handler, no
 * required complete_task call (its stop hook would add turns), no status
 * probe, no checks, no finish model steps (unless `finishModel` is asked for).
 *
 * @module
 */

import { join } from "node:path";
import { ScriptedModelServer, textTurn, toolTurn } from "../agents/testing/mod.ts";
import type { ScriptStep } from "../agents/testing/mod.ts";
import { SqliteStore } from "../agents/store/mod.ts";
import { denoDir, MAIN, tempDir, tempRepo } from "../tests/_helpers.ts";

/** The Claude Code binary the SDK ships (kept here for the other benchmarks). */
export { bundledClaude } from "../tests/_helpers.ts";
import { TreeSampler } from "./proc.ts";

/** The three ways of running the scenario. */
export type LoopKind = "bare" | "fresh" | "continue";

/** One measured run. */
export interface LoopSample {
  kind: LoopKind;
  /** Wall time from spawn to exit, ms. */
  wallMs: number;
  /** Peak resident set of the whole process tree, MiB (sampled every 10 ms). */
  peakMiB: number;
  /** From spawn to the first main-loop model request, ms. */
  firstRequestMs: number;
  /** finishline's time outside the agent (wall minus time waiting for it), per iteration, ms. */
  overheadPerIterationMs?: number;
  /** Of that, the runner's own work between sessions, per iteration, ms. */
  loopWorkPerIterationMs?: number;
  /** Main-loop model requests served. */
  requests: number;
}

function iterationSteps(iteration: number): ScriptStep[] {
  return [
    toolTurn(
      "Bash",
      {
        command:
          `echo "step ${iteration}" >> work.txt && git add work.txt && git commit -q -m "step ${iteration}"`,
      },
      `Step ${iteration}: appending a line and committing it.`,
    ),
    textTurn(`Step ${iteration} is done and committed.`),
  ];
}

/**
 * Run the scenario once.
 *
 * @param kind Which loop.
 * @param iterations How many iterations (sessions).
 * @param claude The Claude Code binary for the bare loop.
 * @param onRootSample Sees the root process's resident set (KiB) and the
 * iteration in progress, at every sample.
 * @param options `finishModel`: run the finish workflow's model steps (the
 * default setting; off, the run does the bare loop's model work only);
 * `sideReply`: the scripted server's answer to side requests (the finish
 * model's questions); `main`: another checkout's `agents/iterator/main.ts` (to measure a
 * version before a change); `inspect`: sees the repository and the server
 * after the run, before they are removed.
 * @returns The measurements.
 */
export async function runLoop(
  kind: LoopKind,
  iterations: number,
  claude: string,
  onRootSample?: (rootKiB: number, iteration: number) => void,
  options: {
    finishModel?: boolean;
    sideReply?: ScriptStep;
    main?: string;
    inspect?: (repo: string, server: ScriptedModelServer) => Promise<void>;
  } = {},
): Promise<LoopSample> {
  await using repo = await tempRepo();
  await using home = await tempDir("finishline-bench-home-");
  const perSession = Array.from({ length: iterations }, (_, index) => iterationSteps(index + 1));
  await using server = await ScriptedModelServer.start({
    scripts: kind === "continue" ? [perSession.flat()] : perSession,
    ...(options.sideReply ? { sideReply: options.sideReply } : {}),
  });
  const env = { ...server.env(home.path), DENO_DIR: await denoDir() };
  let command: Deno.Command;
  if (kind === "bare") {
    const script = `for i in $(seq 1 ${iterations}); do
  "$CLAUDE" -p "Do step $i of the task: append a line to work.txt and commit it." \\
    --output-format stream-json --verbose --allowedTools Bash > /dev/null || exit 1
done`;
    command = new Deno.Command("bash", {
      args: ["-c", script],
      cwd: repo.path,
      env: { ...env, CLAUDE: claude },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    });
  } else {
    await Deno.mkdir(join(repo.path, ".agent", "bench"), { recursive: true });
    await Deno.writeTextFile(
      join(repo.path, ".agent", "bench", "agent.json"),
      JSON.stringify({
        name: "bench",
        behavior: {
          completionType: "iterate",
          completionConfig: { maxIterations: iterations },
          session: kind,
          requireCompleteTask: false,
          allowedTools: ["Bash"],
          permissionMode: "default",
        },
        probe: { enabled: false },
        // Equal work with the bare loop: no finish model steps unless asked for.
        ...(options.finishModel ? {} : { finish: { maxCostUsd: 0 } }),
      }),
    );
    command = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        options.main ?? MAIN,
        "--agent",
        "bench",
        "--task",
        "Append a line to work.txt and commit it, once per step.",
        "--quiet",
      ],
      cwd: repo.path,
      env,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    });
  }
  const started = Date.now();
  const clock = performance.now();
  const child = command.spawn();
  const mainRequests = () => server.requests.filter((request) => !request.side).length;
  const sampler = new TreeSampler(child.pid, 10, (_tree, rootKiB) => {
    // Two requests per iteration: the one in flight says which iteration it is.
    onRootSample?.(rootKiB, Math.max(1, Math.ceil(mainRequests() / 2)));
  });
  const output = await child.output();
  const wallMs = performance.now() - clock;
  sampler.stop();
  const stderr = new TextDecoder().decode(output.stderr);
  if (output.code !== 0) {
    throw new Error(`${kind} loop exited ${output.code}:\n${stderr}`);
  }
  const served = server.requests.filter((request) => !request.side);
  if (served.length !== 2 * iterations) {
    throw new Error(
      `${kind} loop made ${served.length} model requests, expected ${2 * iterations}`,
    );
  }
  await options.inspect?.(repo.path, server);
  const sample: LoopSample = {
    kind,
    wallMs,
    peakMiB: sampler.peakKiB / 1024,
    firstRequestMs: served[0].receivedAt - started,
    requests: served.length,
  };
  if (kind !== "bare") {
    const store = SqliteStore.open(join(repo.path, ".agent", ".finishline", "state.db"));
    try {
      const run = store.listRuns({ limit: 1 })[0];
      const rows = store.iterations(run.id);
      const agentMs = rows.reduce((total, row) => total + (row.summary.agentMs ?? 0), 0);
      const loopMs = rows.reduce(
        (total, row) => total + row.summary.durationMs - (row.summary.agentMs ?? 0),
        0,
      );
      sample.overheadPerIterationMs = (wallMs - agentMs) / rows.length;
      sample.loopWorkPerIterationMs = loopMs / rows.length;
    } finally {
      store.close();
    }
  }
  return sample;
}
