/**
 * `deno task faults`: run the fault catalogue end to end (the CLI, the real
 * Claude Code binary with its default retries, the scripted model server
 * and gh) and print one table row per case: the outcome, the time it took
 * to reach it, and the iterations the history holds. The tests assert the
 * outcomes; the times are reported here, never asserted.
 *
 *     deno task faults [--rounds 3]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { CATALOGUE_PREFIX } from "../tests/e2e/_fault_catalogue.ts";

const FILES = [
  "tests/e2e/faults_e2e_test.ts",
  "tests/e2e/github_e2e_test.ts",
  "tests/e2e/run_lock_e2e_test.ts",
  "tests/e2e/finish_faults_e2e_test.ts",
  "tests/e2e/orphans_e2e_test.ts",
  "tests/e2e/fleet_e2e_test.ts",
];

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "1" } },
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`Flag "--rounds" expects a whole number of at least 1, got "${values.rounds}"`);
  Deno.exit(2);
}

type Row = { outcome: string; seconds: number[]; iterations: string; left: string[] };
const rows = new Map<string, Row>();
let failed = false;
for (let round = 1; round <= rounds; round++) {
  console.error(`round ${round}/${rounds}: deno test ${FILES.join(" ")}`);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", ...FILES],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!output.success) failed = true;
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    if (!line.startsWith(CATALOGUE_PREFIX)) continue;
    const [name, outcome, seconds, iterations, ...left] = line.slice(CATALOGUE_PREFIX.length)
      .split(" | ").map((cell) => cell.trim());
    const row = rows.get(name) ?? { outcome, seconds: [], iterations, left };
    row.seconds.push(Number.parseFloat(seconds));
    rows.set(name, row);
  }
}

const range = (values: number[]) => {
  const low = Math.min(...values).toFixed(1);
  const high = Math.max(...values).toFixed(1);
  return low === high ? `${low} s` : `${low}–${high} s`;
};
console.log(
  "| case | outcome | time to the outcome | iterations recorded | processes left | stale worktrees | iterations lost | peak memory |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const [name, row] of rows) {
  const left = [0, 1, 2, 3].map((index) => row.left[index] ?? "–").join(" | ");
  console.log(`| ${name} | ${row.outcome} | ${range(row.seconds)} | ${row.iterations} | ${left} |`);
}
if (failed) {
  console.error("Some catalogue tests failed: the table lacks their rows");
  Deno.exit(1);
}
