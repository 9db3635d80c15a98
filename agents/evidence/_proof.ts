/**
 * The proof of the change, at the claim that completes: once the checks
 * and the findings leave nothing to refuse, the changed lines of the
 * repository's own source are measured in the clean copy (which ones the
 * tests run, which mutants of them they kill; see `proof/change_proof.ts`).
 * The figures join the evidence; under a floor of `verify.changedLines`, the
 * findings send the claim back.
 *
 * @module
 */

import type { TaskCompletionResult } from "../checks/checker_contract.ts";
import type { ChecksEvidence } from "../record/iteration.ts";
import type { ClaimRun } from "./_claim_run.ts";
import type { GateState } from "./_gate_state.ts";
import { protectedRole } from "./judge/protected_files.ts";
import { proveChange } from "./proof/change_proof.ts";
import { proofFindings, proofSummary } from "./proof/proof_text.ts";

/**
 * Measure the claim's change when it is about to pass, and hold it to the
 * floors. The dependency folders the checks may have written are put back.
 *
 * @param state The gate.
 * @param run The claim's run (its evidence and problems get the proof's).
 * @returns A refusal when the dependency folders could not be put back.
 */
export async function proveClaim(
  state: GateState,
  run: ClaimRun,
): Promise<TaskCompletionResult | undefined> {
  const settings = state.changedLines;
  const { claim, copy, signal, base, settled, evidence, problems, facts } = run;
  if (!settings?.measure || problems.length > 0 || !claim || !base || !copy || signal?.aborted) {
    return undefined;
  }
  // The claim's own tree: a run before (the original tests', the worker's test on the
  // starting commit) may have left other files in the copy.
  if (await copy.moveTo(claim.head)) return undefined;
  const green = new Set(settled.filter(({ run }) => run.green).map(({ run }) => run.name));
  const checks = state.checks.filter((check) => green.has(check.name));
  const proof = await proveChange({
    root: copy.dir,
    git: copy.objects,
    base,
    head: claim.head,
    checks,
    isSource: (file) =>
      protectedRole(file, { protect: state.protect, configFiles: state.configFiles }) ===
        undefined,
    timeoutMs: state.timeoutMs,
    budgetFactor: settings.budget,
    suiteMs: settled.filter(({ run }) => green.has(run.name))
      .reduce((sum, { run }) => sum + run.durationMs, 0),
    signal,
    buildFolder: (check) => copy.buildFolder(check),
  }).catch(() => undefined);
  // What the mutants' runs wrote into the copy's dependency folders goes.
  const planted = await state.undoWrites(facts);
  if (planted) return planted;
  if (!proof || signal?.aborted) return undefined;
  evidence.changeProof = proof;
  const short: string[] = [];
  if (settings.coverage !== undefined && proof.coverage !== undefined) {
    if (proof.coverage < settings.coverage) {
      short.push(
        `the tests run ${percent(proof.coverage)} of the lines you changed, under the floor of ${
          percent(settings.coverage)
        } ("verify.changedLines.coverage")`,
      );
    }
  }
  if (settings.mutants !== undefined && proof.mutationScore !== undefined) {
    if (proof.mutationScore < settings.mutants) {
      short.push(
        `the tests notice ${
          percent(proof.mutationScore)
        } of the small wrong versions of the lines you changed, under the floor of ${
          percent(settings.mutants)
        } ("verify.changedLines.mutants")`,
      );
    }
  }
  if (short.length > 0) {
    problems.push(
      `The checks pass, but ${
        short.join(", and ")
      }. Make the tests pin what the change does (a test that fails without it), or make the code do what its tests say:\n${
        proofFindings(proof).map((line) => `- ${line}`).join("\n")
      }`,
    );
  }
  return undefined;
}

const percent = (value: number) => `${Math.round(value * 100)}%`;

/**
 * The proof, as the passing verdict tells it to the agent: its figures and
 * findings, when it was measured.
 *
 * @param evidence The claim's evidence.
 * @returns Text starting with a blank line, or "".
 */
export function proofNote(evidence: ChecksEvidence): string {
  const proof = evidence.changeProof;
  if (!proof) return "";
  const findings = proofFindings(proof);
  return `\n\nProof of the change: ${proofSummary(proof)}${
    findings.length > 0 ? `\n${findings.map((line) => `- ${line}`).join("\n")}` : ""
  }`;
}
