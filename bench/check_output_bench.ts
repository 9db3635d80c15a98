/**
 * `deno task bench:output`: finishline's peak resident memory while a check
 * prints 1, 10 and 100 MB and fails, against the same process idle. Each size
 * runs in a fresh Deno process (peak RSS is the kernel's `VmHWM`), through
 * `runRepoCheck` as the gate runs it, with a failing test named at the end of
 * the output, as a runner's summary names it.
 *
 *     deno task bench:output [--sizes 1,10,100]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { runRepoCheck } from "../agents/evidence/run/check_run.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { sizes: { type: "string", default: "1,10,100" }, child: { type: "string" } },
});

/** Peak resident memory of this process so far, in MB. */
async function peakMb(): Promise<number> {
  const status = await Deno.readTextFile("/proc/self/status");
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

if (values.child !== undefined) {
  const megabytes = Number(values.child);
  const idle = await peakMb();
  const started = performance.now();
  // Lines of 99 characters, then a TAP failure and the summary the parser reads.
  const run = await runRepoCheck({
    name: "noisy",
    command: `head -c ${
      megabytes * 1024 * 1024
    } /dev/zero | tr '\\0' 'x' | fold -w 99; echo; echo 'not ok 1 - adds'; echo '# fail 1'; exit 1`,
  }, { cwd: Deno.cwd(), timeoutMs: 600_000 });
  console.log(JSON.stringify({
    megabytes,
    idleMb: idle,
    peakMb: await peakMb(),
    seconds: (performance.now() - started) / 1000,
    failing: run.failing,
    green: run.green,
  }));
  Deno.exit(0);
}

const rows: string[] = [];
for (const size of values.sizes.split(",").map(Number)) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--child", String(size)],
    stdout: "piped",
  }).output();
  const result = JSON.parse(new TextDecoder().decode(output.stdout));
  rows.push(
    `| ${size} MB | ${result.idleMb.toFixed(0)} MB | ${result.peakMb.toFixed(0)} MB | ${
      result.seconds.toFixed(1)
    } s | ${result.green ? "green" : `red, failing: ${result.failing.join(", ")}`} |`,
  );
  console.error(`${size} MB of output: peak ${result.peakMb.toFixed(0)} MB resident`);
}
console.log(
  [
    "| check output | resident at start | peak resident | time | verdict |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n"),
);
