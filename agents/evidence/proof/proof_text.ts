/**
 * The proof of a change in words: one line of figures for the report and
 * the final line, and lines of feedback for the worker and the reviewer.
 *
 * @module
 */

import type { ChangeProof } from "../../record/iteration.ts";

/**
 * The proof as lines of feedback: changed lines no test runs, and the
 * mutants every test passed with.
 *
 * @param proof The proof.
 * @param most Most lines of each kind. @default 10
 * @returns The lines (none when the tests ran every changed line and noticed every mutant).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { proofFindings } from "./proof_text.ts";
 *
 * const lines = proofFindings({
 *   files: [{ path: "calc.js", changed: 3, run: 2, neverRun: [14], measuredBy: "node" }],
 *   coverage: 2 / 3,
 *   mutationScore: 0.5,
 *   mutants: {
 *     generated: 2, tried: 2, killed: 1, invalid: 0, untried: 0,
 *     survived: [{ path: "calc.js", line: 12, change: "replacing `+` by `-`" }],
 *   },
 *   measuredBy: ["node"], suiteMs: 100, durationMs: 400,
 * });
 * assert.deepEqual(lines, [
 *   "line 14 of calc.js: no test runs it",
 *   "line 12 of calc.js: replacing `+` by `-` leaves every test passing",
 * ]);
 * ```
 */
export function proofFindings(proof: ChangeProof, most = 10): string[] {
  const unrun = proof.files.flatMap((file) =>
    file.neverRun.map((line) => `line ${line} of ${file.path}: no test runs it`)
  );
  const survivors = proof.mutants.survived.map((mutant) =>
    `line ${mutant.line} of ${mutant.path}: ${mutant.change} leaves every test passing`
  );
  const clip = (lines: string[]) =>
    lines.length > most ? [...lines.slice(0, most), `… and ${lines.length - most} more`] : lines;
  return [...clip(unrun), ...clip(survivors)];
}

/**
 * The proof's figures in one line, for the report and the final line.
 *
 * @param proof The proof.
 * @returns Such as `changed lines run by the tests: 5 of 6 (83%); mutants killed: 4 of 5 (80%), 2 untried`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { proofSummary } from "./proof_text.ts";
 *
 * assert.equal(
 *   proofSummary({
 *     files: [{ path: "a.py", changed: 6, run: 5, neverRun: [3], measuredBy: "python" }],
 *     coverage: 5 / 6, mutationScore: 0.8,
 *     mutants: { generated: 7, tried: 5, killed: 4, survived: [], invalid: 0, untried: 2 },
 *     measuredBy: ["python"], suiteMs: 10, durationMs: 50,
 *   }),
 *   "changed lines run by the tests: 5 of 6 (83%); mutants killed: 4 of 5 (80%), 2 untried",
 * );
 * ```
 */
export function proofSummary(proof: ChangeProof): string {
  const measured = proof.files.filter((file) => file.run !== undefined);
  const changed = measured.reduce((sum, file) => sum + file.changed, 0);
  const run = measured.reduce((sum, file) => sum + (file.run ?? 0), 0);
  const percent = (value: number) => `${Math.round(value * 100)}%`;
  const parts = [
    measured.length === 0
      ? "changed lines: not measured (no coverage tool recorded the changed files)"
      : `changed lines run by the tests: ${run} of ${changed}${
        changed > 0 ? ` (${percent(run / changed)})` : ""
      }`,
  ];
  const { tried, killed, untried } = proof.mutants;
  parts.push(
    tried === 0
      ? `mutants: none tried${untried > 0 ? `, ${untried} untried` : ""}`
      : `mutants killed: ${killed} of ${tried} (${percent(killed / tried)})${
        untried > 0 ? `, ${untried} untried` : ""
      }`,
  );
  const unmeasured = proof.files.filter((file) => file.run === undefined).map((file) => file.path);
  if (measured.length > 0 && unmeasured.length > 0) {
    parts.push(`not measured: ${unmeasured.join(", ")}`);
  }
  return parts.join("; ");
}
