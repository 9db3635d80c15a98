/**
 * `deno run -A bench/large_repo_bench.ts`: what the clean copy costs per
 * claim on a large repository, against a small one. A repository of
 * `--files` files (20,000 by default: 200 folders of 100 small Python
 * modules) and one of 3 files, each with a quick check (`python3 -c` that
 * imports one module); per round, a one-line change is committed and
 * claimed. Per claim: the gate's wall time, the check's own time, and what
 * finishline adds (the difference: fetch, checkout, the file-by-file check
 * against the blobs, the clean, the diffs). The baseline (the first fetch
 * of every object and the first checkout) is reported apart: it runs
 * beside the agent's first session.
 *
 *     deno run -A bench/large_repo_bench.ts [--files 20000] [--rounds 3]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { RepoChecksChecker } from "../agents/evidence/repo_checks.ts";
import { GitRepo } from "../agents/git/repo.ts";
import { git } from "../tests/_helpers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    files: { type: "string", default: "20000" },
    rounds: { type: "string", default: "3" },
  },
});
const files = Number(values.files);
const rounds = Number(values.rounds);
if (!Number.isInteger(files) || files < 3 || !Number.isInteger(rounds) || rounds < 1) {
  console.error(
    "large_repo_bench: --files (at least 3) and --rounds (at least 1) take whole numbers",
  );
  Deno.exit(2);
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function uptime(): Promise<string> {
  const out = await new Deno.Command("uptime", { stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

/** A repository of `count` files with a quick check; its claims measured. */
async function measure(count: number) {
  const dir = await Deno.makeTempDir({ prefix: "finishline-bench-large-" });
  try {
    await git(dir, "init", "-q", "-b", "main");
    const perFolder = 100;
    for (let index = 0; index < count; index++) {
      const folder = `${dir}/pkg${Math.floor(index / perFolder)}`;
      if (index % perFolder === 0) {
        await Deno.mkdir(folder, { recursive: true });
        await Deno.writeTextFile(`${folder}/__init__.py`, "");
      }
      await Deno.writeTextFile(
        `${folder}/m${index % perFolder}.py`,
        `def value():\n    return ${index}\n`.repeat(3),
      );
    }
    await git(dir, "add", "-A");
    await git(dir, "commit", "-qm", "start");
    const base = await git(dir, "rev-parse", "HEAD");
    const repo = (await GitRepo.open(dir))!;
    const check = { name: "import", command: "python3 -c 'import pkg0.m0'" };
    const gate = new RepoChecksChecker({ checks: [check], timeoutMs: 600_000 });
    const context = { cwd: dir, git: { repo, baseline: base } } as never;
    try {
      await gate.recordStart(repo);
      const baselineStart = performance.now();
      const baseline = await gate.startBaseline(repo, base);
      const baselineMs = performance.now() - baselineStart;
      if (baseline.error) throw new Error(baseline.error);
      const claims: number[] = [];
      const checks: number[] = [];
      const direct: number[] = [];
      for (let round = 1; round <= rounds; round++) {
        await Deno.writeTextFile(`${dir}/pkg0/m0.py`, `# round ${round}\n`, { append: true });
        const started = performance.now();
        const ran = await new Deno.Command("sh", { args: ["-c", check.command], cwd: dir })
          .output();
        direct.push(performance.now() - started);
        if (!ran.success) throw new Error("the check failed in the checkout");
        await git(dir, "commit", "-qam", `round ${round}`);
        await gate.ready();
        const claimStart = performance.now();
        const result = await gate.check(context);
        claims.push(performance.now() - claimStart);
        if (!result.complete) throw new Error(result.feedback);
        checks.push(gate.evidence!.checks[0].durationMs);
      }
      return {
        count,
        baselineMs,
        claimMs: median(claims),
        checkMs: median(checks),
        directMs: median(direct),
        addedMs: median(claims.map((claim, index) => claim - checks[index])),
      };
    } finally {
      await gate.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

console.log(`load before: ${await uptime()}`);
const rows = [];
for (const count of [3, files]) rows.push(await measure(count));
console.log(`load after: ${await uptime()}`);
console.log(
  "| files | baseline (first fetch and checkout, and the check) | claim | the check in it | direct run | added per claim |",
);
console.log("|---:|---:|---:|---:|---:|---:|");
for (const row of rows) {
  console.log(
    `| ${row.count} | ${seconds(row.baselineMs)} | ${seconds(row.claimMs)} | ${
      seconds(row.checkMs)
    } | ${seconds(row.directMs)} | ${seconds(row.addedMs)} |`,
  );
}
console.log(`Medians of ${rounds} rounds.`);
