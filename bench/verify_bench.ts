/**
 * `deno task bench:verify`: what verification costs on the real-repository
 * corpus, per repository whose toolchain is here. In each round, one after
 * the other (so that load spreads over both sides alike):
 *
 * - **direct**: the repository's test check run in its checkout, as a
 *   developer would run it;
 * - **claim**: the gate verifying a passing claim (a new commit): the clean
 *   copy moved to the commit, the same check, the gate's rules;
 * - **failed, full**: the first claim of the injected bug: the full suite
 *   (twice when the check was green at the start: the gate asks a red check
 *   again before it calls it red), the time the agent waits before it hears
 *   which test failed;
 * - **failed, re-run**: the next claim of the same bug: the failing tests
 *   first, alone, where the check's command can be narrowed;
 * - **pass after failed**: a claim of the fix after a failed one: the
 *   failing tests first, then the full suite;
 * - **direct, changed** and **claim, changed**: a claim that changes a line
 *   (a comment at the end of the file the bug goes in, new each round), as a
 *   real claim does; the same change is made in the checkout first and the
 *   check run there, as a developer would after pulling it. A build (make,
 *   Cargo) compiles the changed file on both sides.
 *
 * Where the check's command builds from nothing in a temp folder (Meson,
 * autotools) the direct runs are the maintainers' inner loop instead
 * (`innerLoop` in the corpus): a build folder set up once in the checkout,
 * then its test command after each change, incremental.
 *
 * Each claim is timed once the clean copy is ready for it: between two
 * claims the agent works, and the gate removes what the last checks wrote
 * and copies the build seed in then ({@linkcode RepoChecksChecker.ready}).
 *
 * Prints medians, the ratios, and `uptime` before and after: the machine's
 * load decides how far the numbers can be trusted.
 *
 * With `--seed`, on the repositories whose check keeps a build folder
 * (Meson, CMake, autotools), the build seed's cases instead, each a claim
 * timed as above:
 *
 * - **red start**: the gate started at the injected bug (a red baseline, as
 *   a bug-fix task starts), then a claim that changes a comment and keeps
 *   the bug, then the fix;
 * - **build file**: the gate started at the release, a claim that appends a
 *   comment to the build file (`meson.build`, `configure`), then the bug
 *   with that build file, then the release with it.
 *
 *     deno task bench:verify [--rounds 3] [--repo ID ...] [--json FILE] [--seed]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { RepoChecksChecker } from "../agents/evidence/repo_checks.ts";
import { runRepoCheck } from "../agents/evidence/run/check_run.ts";
import type { RepoCheck } from "../agents/evidence/run/check_run.ts";
import { CORPUS } from "../tests/realworld/_corpus.ts";
import { prepareRepo } from "../tests/realworld/_prepare.ts";
import { type Checkout, checkoutOf, claimContext, commitLike } from "../tests/realworld/_verify.ts";
import { git } from "../tests/_helpers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "3" },
    repo: { type: "string", multiple: true },
    json: { type: "string" },
    seed: { type: "boolean", default: false },
  },
});
const rounds = Number(values.rounds);
const known = new Set(CORPUS.map((repo) => repo.id));
for (const id of values.repo ?? []) {
  if (!known.has(id)) {
    console.error(`verify_bench: --repo ${id}: expected one of ${[...known].join(", ")}`);
    Deno.exit(2);
  }
}
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`verify_bench: --rounds ${values.rounds}: expected a whole number above 0`);
  Deno.exit(2);
}

const SIDES = [
  "direct",
  "claim",
  "failedFull",
  "failedRerun",
  "passAfterFailed",
  "directChanged",
  "claimChanged",
] as const;
type Side = typeof SIDES[number];

interface Row {
  repo: string;
  command: string;
  /** How the second failed claim was answered (the re-run's outcome, or why it did not run). */
  rerun: string;
  samples: Record<Side, number[]>;
}

function worst(list: number[]): number {
  return Math.max(...list);
}

function median(list: number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function uptime(): Promise<string> {
  const out = await new Deno.Command("uptime").output().catch(() => undefined);
  return out ? new TextDecoder().decode(out.stdout).trim() : "(uptime unavailable)";
}

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const result = await work();
  return [performance.now() - started, result];
}

// Ctrl-C stops the checks; the gate and the checkout are removed on the way out.
const stop = new AbortController();
Deno.addSignalListener("SIGINT", () => stop.abort());
const signal = stop.signal;

/** A comment line in the syntax of `file`'s language. */
function commentLine(file: string, text: string): string {
  if (/\.(c|h|cc|cpp|hpp)$/.test(file)) return `/* ${text} */`;
  if (/\.(py|rb|sh|pl|toml|ya?ml)$/.test(file) || /(^|\/)(Rakefile|Makefile)$/.test(file)) {
    return `# ${text}`;
  }
  return `// ${text}`;
}

/** The repository's inner-loop command, by checkout (its build folder set up once). */
const innerLoops = new Map<Checkout, RepoCheck>();

/** What a developer runs after a change: the inner loop where the corpus names one, else the check. */
function inner(checkout: Checkout): RepoCheck {
  return innerLoops.get(checkout) ?? checkout.check;
}

/** How many changed claims were made: each adds a comment of its own. */
let changes = 0;

/** One round on one repository: every side once, in order. */
async function round(checkout: Checkout, row: Row): Promise<void> {
  const claim = async () => {
    // Between two claims the agent works: the clean copy is made ready then (RepoChecksChecker.ready).
    await gate.ready();
    const [ms, result] = await timed(() => gate.check(claimContext(checkout, signal)));
    return { ms, result };
  };
  const [direct] = await timed(() =>
    runRepoCheck(inner(checkout), { cwd: checkout.dir.path, timeoutMs: 600_000, signal })
  );
  row.samples.direct.push(direct);
  const gate = new RepoChecksChecker({ checks: [checkout.check], timeoutMs: 600_000 });
  try {
    await gate.startBaseline(checkout.repo, checkout.base);
    // The clean copy is made at the first claim: a passing one, as the steady state after it.
    await commitLike(checkout, checkout.base);
    await claim();
    await commitLike(checkout, checkout.base);
    const passed = await claim();
    if (signal.aborted) return;
    if (!passed.result.complete) {
      throw new Error(`${row.repo}: the release does not pass: ${passed.result.feedback}`);
    }
    row.samples.claim.push(passed.ms);
    await commitLike(checkout, checkout.bug);
    row.samples.failedFull.push((await claim()).ms);
    await commitLike(checkout, checkout.bug);
    row.samples.failedRerun.push((await claim()).ms);
    const rerun = gate.evidence?.rerun?.[0];
    row.rerun = rerun ? rerun.why ? `${rerun.outcome}: ${rerun.why}` : rerun.outcome : "none";
    await commitLike(checkout, checkout.base);
    row.samples.passAfterFailed.push((await claim()).ms);
    // A claim that changes a line: first in the checkout, run directly, then committed and claimed.
    const file = `${checkout.dir.path}/${checkout.bugFile}`;
    await Deno.writeTextFile(
      file,
      `\n${commentLine(checkout.bugFile, `finishline bench ${++changes}`)}\n`,
      { append: true },
    );
    const [directChanged] = await timed(() =>
      runRepoCheck(inner(checkout), { cwd: checkout.dir.path, timeoutMs: 600_000, signal })
    );
    row.samples.directChanged.push(directChanged);
    await git(checkout.dir.path, "commit", "-qam", `change ${changes}`);
    const changed = await claim();
    if (!changed.result.complete) {
      throw new Error(`${row.repo}: a changed comment does not pass: ${changed.result.feedback}`);
    }
    row.samples.claimChanged.push(changed.ms);
    await git(checkout.dir.path, "reset", "-q", "--hard", checkout.base);
  } finally {
    await gate.close();
  }
}

const SEED_SIDES = [
  "redClaim",
  "redFix",
  "buildFile",
  "buildFileBug",
  "buildFileFix",
] as const;
type SeedSide = typeof SEED_SIDES[number];

/** The build file a claim of the build-file case changes, by build system. */
const BUILD_FILES = { meson: "meson.build", cmake: "CMakeLists.txt", autotools: "configure" };

/** The build seed's cases (`--seed`): one round, each claim timed once the copy is ready. */
async function seedRound(checkout: Checkout, samples: Record<SeedSide, number[]>): Promise<void> {
  const system = checkout.check.buildFolder!;
  const append = async (file: string, line: string) => {
    await Deno.writeTextFile(`${checkout.dir.path}/${file}`, `\n${line}\n`, { append: true });
  };
  const claimOn = async (
    gate: RepoChecksChecker,
    from: string,
    baseline: string,
    change: (() => Promise<void>)[],
  ) => {
    await gate.ready();
    await git(checkout.dir.path, "reset", "-q", "--hard", from);
    for (const step of change) await step();
    await git(checkout.dir.path, "commit", "-q", "--allow-empty", "-am", `seed ${++changes}`);
    const context = {
      ...claimContext(checkout, signal) as object,
      git: { repo: checkout.repo, baseline },
    };
    return await timed(() => gate.check(context as never));
  };
  const comment = () =>
    append(checkout.bugFile, commentLine(checkout.bugFile, `finishline ${++changes}`));
  const red = new RepoChecksChecker({ checks: [checkout.check], timeoutMs: 600_000 });
  try {
    await red.startBaseline(checkout.repo, checkout.bug);
    await red.confirmBaseline();
    const [still, stillResult] = await claimOn(red, checkout.bug, checkout.bug, [comment]);
    if (stillResult.complete) throw new Error(`${checkout.check.name}: the bug passes`);
    samples.redClaim.push(still);
    const [fix, fixResult] = await claimOn(red, checkout.base, checkout.bug, [comment]);
    if (!fixResult.complete) throw new Error(`the fix does not pass: ${fixResult.feedback}`);
    samples.redFix.push(fix);
  } finally {
    await red.close();
  }
  const file = BUILD_FILES[system];
  const define = () => append(file, "# finishline bench");
  const gate = new RepoChecksChecker({ checks: [checkout.check], timeoutMs: 600_000 });
  try {
    await gate.startBaseline(checkout.repo, checkout.base);
    const [changed, changedResult] = await claimOn(gate, checkout.base, checkout.base, [define]);
    if (!changedResult.complete) throw new Error(`the build file fails: ${changedResult.feedback}`);
    samples.buildFile.push(changed);
    const [bug, bugResult] = await claimOn(gate, checkout.bug, checkout.base, [define]);
    if (bugResult.complete) throw new Error("the bug passes with the build file");
    samples.buildFileBug.push(bug);
    const [fix, fixResult] = await claimOn(gate, checkout.base, checkout.base, [define, comment]);
    if (!fixResult.complete) throw new Error(`the fix fails: ${fixResult.feedback}`);
    samples.buildFileFix.push(fix);
  } finally {
    await gate.close();
    await git(checkout.dir.path, "reset", "-q", "--hard", checkout.base);
  }
}

const before = await uptime();
console.error(`load before: ${before}`);
const rows: Row[] = [];
const seedRows: Array<{ repo: string; samples: Record<SeedSide, number[]> }> = [];
for (const corpus of CORPUS.filter((repo) => !values.repo || values.repo.includes(repo.id))) {
  const prepared = await prepareRepo(corpus);
  if (!prepared.ok || prepared.missing.length > 0) {
    console.error(
      `${corpus.id}: skipped (${prepared.ok ? prepared.missing.join(", ") : prepared.unavailable})`,
    );
    continue;
  }
  const checkout = await checkoutOf(prepared);
  if (typeof checkout === "string") {
    console.error(`${corpus.id}: skipped (${checkout})`);
    continue;
  }
  await using _ = checkout;
  if (corpus.innerLoop) {
    const setup = await new Deno.Command("sh", {
      args: ["-c", corpus.innerLoop.setup],
      cwd: checkout.dir.path,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!setup.success) {
      console.error(`${corpus.id}: skipped (${corpus.innerLoop.setup} failed)`);
      continue;
    }
    innerLoops.set(checkout, { ...checkout.check, command: corpus.innerLoop.command });
  }
  if (values.seed) {
    if (!checkout.check.buildFolder) {
      console.error(`${corpus.id}: skipped (its check keeps no build folder)`);
      continue;
    }
    const samples = Object.fromEntries(SEED_SIDES.map((side) => [side, [] as number[]])) as Record<
      SeedSide,
      number[]
    >;
    for (let index = 0; index < rounds && !signal.aborted; index++) {
      await seedRound(checkout, samples);
      console.error(`${corpus.id}: round ${index + 1}/${rounds}`);
    }
    seedRows.push({ repo: corpus.id, samples });
    continue;
  }
  const row: Row = {
    repo: corpus.id,
    command: corpus.innerLoop?.command ?? checkout.check.command,
    rerun: "",
    samples: Object.fromEntries(SIDES.map((side) => [side, [] as number[]])) as Row["samples"],
  };
  for (let index = 0; index < rounds && !signal.aborted; index++) {
    await round(checkout, row);
    console.error(`${corpus.id}: round ${index + 1}/${rounds}`);
  }
  if (signal.aborted) break;
  rows.push(row);
}
if (signal.aborted) {
  console.error("verify_bench: stopped (Ctrl-C); nothing printed");
  Deno.exit(130);
}
const after = await uptime();

const s = (value: number) => `${(value / 1000).toFixed(1)} s`;
console.log(
  "| repository | check | direct | claim | claim / direct | direct, changed | claim, changed | changed: claim / direct | failed claim, full suite | failed claim, re-run first | re-run / full | pass after a failed claim | re-run |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const row of rows) {
  const m = Object.fromEntries(SIDES.map((side) => [side, median(row.samples[side])])) as Record<
    Side,
    number
  >;
  console.log(
    `| ${row.repo} | \`${row.command}\` | ${s(m.direct)} | ${s(m.claim)} (worst ${
      s(worst(row.samples.claim))
    }) | ${(m.claim / m.direct).toFixed(2)}× | ${s(m.directChanged)} | ${
      s(m.claimChanged)
    } (worst ${s(worst(row.samples.claimChanged))}) | ${
      (m.claimChanged / m.directChanged).toFixed(2)
    }× | ${s(m.failedFull)} | ${s(m.failedRerun)} | ${
      (m.failedRerun / m.failedFull).toFixed(2)
    }× | ${s(m.passAfterFailed)} | ${row.rerun} |`,
  );
}
if (seedRows.length > 0) {
  console.log(
    "\n| repository | red start: claim keeping the bug | red start: the fix | build file changed | bug, same build file | fix, same build file |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const row of seedRows) {
    console.log(
      `| ${row.repo} | ${SEED_SIDES.map((side) => s(median(row.samples[side]))).join(" | ")} |`,
    );
  }
}
console.log(`\nMedians of ${rounds} rounds. Load before: ${before}\nLoad after: ${after}`);
if (values.json) {
  await Deno.writeTextFile(values.json, JSON.stringify({ before, after, rounds, rows }, null, 2));
}
