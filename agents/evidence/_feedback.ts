/**
 * The gate's wording shared by its phases: how it lists paths and changed
 * test files, what a passing claim is told, and what a stopped one is.
 *
 * @module
 */

import type { ChecksEvidence } from "../record/iteration.ts";

/** What a claim stopped by the end of the run is told. */
export const STOPPED: string = "The checks were stopped before they finished: the run is ending";

/** Paths as the feedback lists them: the first eight, quoted, and how many more. */
export function listPaths(paths: string[]): string {
  const shown = paths.slice(0, 8).map((file) => `"${file}"`).join(", ");
  return paths.length > 8 ? `${shown} and ${paths.length - 8} more` : shown;
}

/** Changed protected files as the feedback lists them: each with its change and why it is protected. */
export function listChanges(changes: ChecksEvidence["testsChanged"]): string {
  return changes.map((entry) =>
    `"${entry.path}" (${entry.change}${entry.from ? ` from "${entry.from}"` : ""}${
      entry.why ? `, ${entry.why}` : ""
    })`
  ).join(", ");
}

/** What a passing gate tells the agent. */
export function passedText(evidence: ChecksEvidence): string {
  const passed = evidence.checks.filter((check) => check.now === "green").map((check) =>
    `"${check.name}"${check.flaky ? " (after a retry: it failed once)" : ""}`
  );
  const parts = passed.length > 0 ? [`${passed.join(", ")} passed`] : [];
  for (const entry of evidence.outOfScope) {
    parts.push(`"${entry.check}" still fails, declared out of scope: ${entry.reason}`);
  }
  return parts.join("; ") || "no checks ran";
}
