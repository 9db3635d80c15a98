/**
 * `deno task bench:proof`: how the proof of the change decides, and what it
 * costs.
 *
 * 1. The catalogue (`tests/evidence/proof/_catalogue.ts`): per runtime, an
 *    honest fix and two weak claims that pass their own tests. A claim is
 *    flagged when the proof names a changed line no test runs or a surviving
 *    mutant. Weak claims flagged are right; honest ones flagged are wrong.
 * 2. The real-repository corpus: each repository's injected bug as the start
 *    and the release as the claim (the maintainers' own code and tests, an
 *    honest fix). Flagged is wrong here, or a line of the fix the
 *    maintainers' tests do not pin. Then the same fix with the test that
 *    catches the bug weakened (the corpus's own weakening): a weak claim when
 *    the suite so weakened passes on the bug as well.
 *
 * With the default time box (2× the suite). Prints a Markdown table, and the
 * time the proof adds per run (median and worst) against the suite's own.
 *
 * 3. With `--catalogue`: the decision catalogue end to end (the real Claude
 *    Code binary, `tests/e2e/decision_catalogue_e2e_test.ts`); every scenario
 *    finishline completed is an honest claim its gate accepted, and a flag on
 *    one is a wrong flag.
 *
 * Flags: `--repo ID` (repeatable) limits the corpus; `--no-corpus`; `--catalogue`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { proveChange } from "../agents/evidence/proof/change_proof.ts";
import { proofFindings, proofSummary } from "../agents/evidence/proof/proof_text.ts";
import { protectedRole } from "../agents/evidence/judge/protected_files.ts";
import { DEFAULT_PROTECTED_GLOBS } from "../agents/definition/definition_types.ts";
import type { ChangeProof } from "../agents/record/iteration.ts";
import { ECOSYSTEMS, prove } from "../tests/evidence/proof/_catalogue.ts";
import { runRepoCheck } from "../agents/evidence/run/check_run.ts";
import { CORPUS } from "../tests/realworld/_corpus.ts";
import { PROOF_PREFIX } from "../tests/fixtures/scenarios/catalogue_run.ts";
import { applyEdit, prepareRepo } from "../tests/realworld/_prepare.ts";
import { checkoutOf } from "../tests/realworld/_verify.ts";
import { git } from "../tests/_helpers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    repo: { type: "string", multiple: true },
    "no-corpus": { type: "boolean" },
    catalogue: { type: "boolean" },
  },
});

interface Row {
  source: string;
  claim: string;
  weak: boolean;
  proof?: ChangeProof;
  skipped?: string;
}

const rows: Row[] = [];

for (const eco of ECOSYSTEMS) {
  if (!(await eco.available())) {
    rows.push({ source: eco.name, claim: "(all)", weak: false, skipped: "tools missing" });
    continue;
  }
  const cases: Array<[string, boolean, string, string]> = [
    ["honest fix, real test", false, eco.honest, eco.honestTest],
    ["special-cased fix, test of that case", true, eco.gamed, eco.gamedTest],
    ["correct fix, test asserts nothing", true, eco.honest, eco.emptyTest],
  ];
  for (const [claim, weak, code, test] of cases) {
    rows.push({ source: eco.name, claim, weak, proof: await prove(eco, code, test, 2) });
  }
}

if (!values["no-corpus"]) {
  const wanted = values.repo ?? [];
  for (const repo of CORPUS.filter((entry) => wanted.length === 0 || wanted.includes(entry.id))) {
    const prepared = await prepareRepo(repo);
    if (!prepared.ok || prepared.missing.length > 0) {
      rows.push({
        source: repo.id,
        claim: "the release fixes the injected bug",
        weak: false,
        skipped: prepared.ok ? `missing ${prepared.missing.join(", ")}` : prepared.unavailable,
      });
      continue;
    }
    const checkout = await checkoutOf(prepared);
    if (typeof checkout === "string") {
      rows.push({ source: repo.id, claim: "(all)", weak: false, skipped: checkout });
      continue;
    }
    try {
      const proveHead = async (head: string) =>
        await proveChange({
          root: checkout.dir.path,
          git: checkout.repo,
          base: checkout.bug,
          head,
          checks: [checkout.check],
          isSource: (file) =>
            protectedRole(file, { protect: [...DEFAULT_PROTECTED_GLOBS], configFiles: [] }) ===
              undefined,
          timeoutMs: 600_000,
        });
      // HEAD is the release: the claim. The start is the bug.
      const head = (await git(checkout.dir.path, "rev-parse", "HEAD")).trim();
      rows.push({
        source: `${repo.id} (${repo.ecosystem})`,
        claim: "the release fixes the injected bug",
        weak: false,
        proof: await proveHead(head),
      });
      // The same fix, with the test that catches the bug weakened as the corpus's cheat
      // does it. Weak when the suite so weakened passes on the bug too: nothing then pins the
      // fix (other tests may still catch the bug, and then the claim is not weak).
      await git(checkout.dir.path, "checkout", "-q", checkout.bug);
      for (const edit of repo.weaken) await applyEdit(checkout.dir.path, edit);
      const onBug = await runRepoCheck(checkout.check, {
        cwd: checkout.dir.path,
        timeoutMs: 600_000,
      });
      await git(checkout.dir.path, "checkout", "-q", "--", ".");
      await git(checkout.dir.path, "checkout", "-q", head);
      for (const edit of repo.weaken) await applyEdit(checkout.dir.path, edit);
      await git(checkout.dir.path, "commit", "-qam", "the fix, its test weakened");
      rows.push({
        source: `${repo.id} (${repo.ecosystem})`,
        claim: `the same fix, the bug's test weakened (${
          onBug.green ? "the bug passes it" : "other tests still fail on the bug"
        })`,
        weak: onBug.green,
        proof: await proveHead((await git(checkout.dir.path, "rev-parse", "HEAD")).trim()),
      });
    } finally {
      await checkout[Symbol.asyncDispose]();
    }
  }
}

if (values.catalogue) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "tests/e2e/decision_catalogue_e2e_test.ts"],
    cwd: new URL("../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "null",
  }).output();
  const lines = new TextDecoder().decode(output.stdout).split("\n")
    .filter((line) => line.startsWith(PROOF_PREFIX));
  console.log("| catalogue scenario (completed) | decision right | flagged | figures, findings |");
  console.log("|---|---|---|---|");
  // A completion the ground truth calls right is an honest claim: a flag on it is wrong; on
  // a wrong completion (a known limit of the gate) a flag is right.
  const tally = { honest: 0, honestFlagged: 0, wrong: 0, wrongFlagged: 0 };
  for (const line of lines) {
    const [name, right, flag, figures] = line.slice(PROOF_PREFIX.length).split("|");
    if (right === "true") {
      tally.honest++;
      if (flag === "true") tally.honestFlagged++;
    } else {
      tally.wrong++;
      if (flag === "true") tally.wrongFlagged++;
    }
    console.log(`| ${name} | ${right} | ${flag} | ${figures} |`);
  }
  console.log(
    `\ncatalogue: honest completions flagged ${tally.honestFlagged} of ${tally.honest}; wrong completions flagged ${tally.wrongFlagged} of ${tally.wrong}\n`,
  );
}

const flagged = (row: Row) => row.proof !== undefined && proofFindings(row.proof).length > 0;
console.log("| source | claim | weak | flagged | figures | findings | suite | proof |");
console.log("|---|---|---|---|---|---|---|---|");
for (const row of rows) {
  if (!row.proof) {
    console.log(
      `| ${row.source} | ${row.claim} | – | – | ${row.skipped ?? "no source changed"} | | | |`,
    );
    continue;
  }
  const findings = proofFindings(row.proof, 3).join("<br>");
  console.log(
    `| ${row.source} | ${row.claim} | ${row.weak ? "yes" : "no"} | ${
      flagged(row) ? "yes" : "no"
    } | ${proofSummary(row.proof)} | ${findings || "–"} | ${
      (row.proof.suiteMs / 1000).toFixed(1)
    } s | ${(row.proof.durationMs / 1000).toFixed(1)} s |`,
  );
}
const measured = rows.filter((row) => row.proof);
const weak = measured.filter((row) => row.weak);
const honest = measured.filter((row) => !row.weak);
console.log(
  `\nweak claims flagged: ${
    weak.filter(flagged).length
  } of ${weak.length}; honest claims flagged: ${honest.filter(flagged).length} of ${honest.length}`,
);
const added = measured.map((row) => row.proof!.durationMs).sort((a, b) => a - b);
const ratio = measured.map((row) => row.proof!.durationMs / Math.max(1, row.proof!.suiteMs))
  .sort((a, b) => a - b);
if (added.length > 0) {
  const median = (list: number[]) => list[Math.floor(list.length / 2)];
  console.log(
    `time the proof adds per run: median ${(median(added) / 1000).toFixed(1)} s, worst ${
      (added.at(-1)! / 1000).toFixed(1)
    } s; as a multiple of the suite's own time: median ${median(ratio).toFixed(1)}×, worst ${
      ratio.at(-1)!.toFixed(1)
    }×`,
  );
}
