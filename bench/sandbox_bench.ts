/**
 * `deno task bench:sandbox`: what the sandbox adds to one agent session's
 * start. It times, in a temp repository, (1) preparing a session's world
 * ({@linkcode AgentSandbox.wrap}: git's places, the tools, the private home
 * seeded the first time; a later session in the same folder reuses it), (2)
 * starting a program through `bwrap` against starting it directly, and (3)
 * the real Claude Code binary's `--version` both ways, and (4) starting
 * through `bwrap` with the default network allowlist (`verify.network`:
 * its own network namespace, socat's bridges up before the program). The
 * per-session cost is (1) + the difference in (2), and with the allowlist
 * (1) + the difference in (4).
 *
 *     deno task bench:sandbox [--rounds 30]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { AgentSandbox } from "../agents/sandbox/agent_sandbox.ts";
import { bubblewrapAvailability } from "../agents/sandbox/bubblewrap.ts";
import { modelHosts } from "../agents/sandbox/network.ts";
import { bundledClaude, tempRepo } from "../tests/_helpers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "30" } },
});
const rounds = Number(values.rounds);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timed(command: string, args: string[], env?: Record<string, string>) {
  const started = performance.now();
  const output = await new Deno.Command(command, {
    args,
    env,
    clearEnv: env !== undefined,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`${command} failed: ${new TextDecoder().decode(output.stderr).trim()}`);
  }
  return performance.now() - started;
}

const found = bubblewrapAvailability();
if (!found.available) {
  console.log(`no sandbox here: ${found.reason}`);
  Deno.exit(0);
}
await using repo = await tempRepo();
const claude = await bundledClaude();
const env = Deno.env.toObject();
const prepare: number[] = [];
const later: number[] = [];
const direct: number[] = [];
const boxed: number[] = [];
const claudeDirect: number[] = [];
const claudeBoxed: number[] = [];
const netBoxed: number[] = [];
const network = { open: false as const, allow: modelHosts("claude", env, repo.path) };
for (let round = 0; round < rounds; round++) {
  // A fresh sandbox each round: the first session's cost, home seeding included.
  await using sandbox = new AgentSandbox();
  const started = performance.now();
  const wrapped = sandbox.wrap("/bin/true", [], { cwd: repo.path, env })!;
  prepare.push(performance.now() - started);
  const again = performance.now();
  sandbox.wrap("/bin/true", [], { cwd: repo.path, env });
  later.push(performance.now() - again);
  direct.push(await timed("/bin/true", []));
  boxed.push(await timed(wrapped.command, wrapped.args, wrapped.env));
  const limited = sandbox.wrap("/bin/true", [], { cwd: repo.path, env, network })!;
  netBoxed.push(await timed(limited.command, limited.args, limited.env));
  if (round < Math.min(rounds, 10)) {
    const version = sandbox.wrap(claude, ["--version"], { cwd: repo.path, env })!;
    claudeDirect.push(await timed(claude, ["--version"]));
    claudeBoxed.push(await timed(version.command, version.args, version.env));
  }
}
const cost = median(prepare) + median(boxed) - median(direct);
const laterCost = median(later) + median(boxed) - median(direct);
const netCost = median(prepare) + median(netBoxed) - median(direct);
console.log(`rounds: ${rounds}`);
console.log(`prepare a session's world (wrap):   ${median(prepare).toFixed(1)} ms (median)`);
console.log(`a later session in the same folder: ${median(later).toFixed(2)} ms`);
console.log(`start /bin/true directly:           ${median(direct).toFixed(1)} ms`);
console.log(`start /bin/true through bwrap:      ${median(boxed).toFixed(1)} ms`);
console.log(`start /bin/true, network allowlist: ${median(netBoxed).toFixed(1)} ms`);
console.log(`claude --version directly:          ${median(claudeDirect).toFixed(1)} ms`);
console.log(`claude --version through bwrap:     ${median(claudeBoxed).toFixed(1)} ms`);
console.log(`sandbox cost, a folder's first session: ${cost.toFixed(1)} ms (target <= 50 ms)`);
console.log(`sandbox cost, each later session:       ${laterCost.toFixed(1)} ms`);
console.log(`sandbox cost with the network allowlist: ${netCost.toFixed(1)} ms (a folder's first)`);
console.log(`load average: ${Deno.loadavg().map((n) => n.toFixed(1)).join(" ")}`);
