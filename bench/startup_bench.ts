/**
 * `deno task bench:startup`: how quickly the commands that do no run start,
 * against Deno's own start (`deno eval 0`). Alternating within each round:
 * `deno eval 0`, `--version`, `--help`, `completions bash` and `runs` (in an
 * empty temporary git repository, with a temporary run history). Prints a
 * Markdown table of medians and the machine's load before and after.
 *
 *     deno task bench:startup [--rounds 20] [--before DIR]
 *
 * `--before DIR` adds each command from another checkout (`git worktree add DIR
 * <commit>`), so that before and after are measured alternating, in one sitting.
 *
 * @module
 */

import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "20" },
    before: { type: "string" },
  },
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("bench:startup: --rounds expects a positive integer");
  Deno.exit(2);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const load = () => Deno.loadavg().map((value) => value.toFixed(2)).join(" ");

interface Case {
  /** The row's name. */
  name: string;
  /** Deno's arguments. */
  args: string[];
  /** Where Deno runs: the checkout, so that its `deno.json` and lockfile are the ones used. */
  cwd: string;
}

const after = new URL("../", import.meta.url).pathname;
const before = values.before ? `${await Deno.realPath(values.before)}/` : undefined;
const repo = await Deno.makeTempDir({ prefix: "finishline-startup-" });
try {
  const git = await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
  if (!git.success) throw new Error("bench:startup: git init failed");
  const store = `${repo}/state.db`;
  const commands: [string, string[]][] = [
    ["`--version`", ["--version"]],
    ["`--help`", ["--help"]],
    ["`completions bash`", ["completions", "bash"]],
    ["`runs`", ["runs", "--cwd", repo, "--store", store]],
  ];
  const cliCases = (root: string, label: string): Case[] =>
    commands.map(([name, args]) => ({
      name: `${name}${label}`,
      args: ["run", "-A", `${root}agents/iterator/main.ts`, ...args],
      cwd: root,
    }));
  const cases: Case[] = [
    { name: "`deno eval 0`", args: ["eval", "0"], cwd: after },
    ...cliCases(after, ""),
    ...(before ? cliCases(before, ", before") : []),
  ];

  const loadBefore = load();
  console.error(`load average ${loadBefore}`);
  // One warm-up run of each case (the page cache, the store's creation), not counted.
  for (const item of cases) await time(item);
  const samples = new Map<string, number[]>(cases.map((item) => [item.name, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const item of cases) samples.get(item.name)!.push(await time(item));
    console.error(
      `round ${round}: ${
        cases.map((item) => Math.round(samples.get(item.name)!.at(-1)!)).join(" ")
      }`,
    );
  }
  const loadAfter = load();

  const base = samples.get(cases[0].name)!;
  // The median of each round's ratio to that round's `deno eval 0`: the machine's
  // drift between rounds cancels out.
  const ratio = (name: string) =>
    median(samples.get(name)!.map((ms, round) => ms / base[round])).toFixed(2);
  const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/^model name\s*:\s*(.+)$/m)?.[1] ??
    "unknown CPU";
  console.log([
    `Median of ${rounds} alternating rounds ("vs \`deno eval 0\`": the median of each round's ratio); ${cpu}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}; load average ${loadBefore} before, ${loadAfter} after.`,
    "",
    "| command | median | vs `deno eval 0` |",
    "| --- | ---: | ---: |",
    ...cases.map((item) =>
      `| ${item.name} | ${Math.round(median(samples.get(item.name)!))} ms | ${ratio(item.name)} |`
    ),
  ].join("\n"));
} finally {
  await Deno.remove(repo, { recursive: true });
}

/** The wall time of one case, in milliseconds; a failing command stops the benchmark. */
async function time(item: Case): Promise<number> {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: item.args,
    cwd: item.cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - started;
  if (!out.success) {
    throw new Error(`${item.name}: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
  }
  return ms;
}
