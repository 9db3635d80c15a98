/**
 * The repository's checks as a run uses them: detected when the definition
 * configures none, described for `--dry-run` and the report, and run once
 * by the `checks` command.
 *
 * @module
 */

import {
  type CheckRun,
  describeCheckEnvironment,
  describeRun,
  runRepoCheck,
} from "../../evidence/run/check_run.ts";
import { detectChecks, type Detection, formatDetection } from "../../evidence/detect/detect.ts";
import { rankChecks } from "../../evidence/detect/check_tier.ts";
import { RepoChecksChecker } from "../../evidence/repo_checks.ts";
import type { AgentDefinition } from "../../definition/definition_types.ts";

/** The repository's checks as a run uses them. */
export interface RunChecks {
  /** What detection found, when it ran. */
  detection?: Detection;
  /** The gate, when there is at least one check. */
  gate?: RepoChecksChecker;
}

/**
 * Detect the repository's checks when the definition configures none
 * (`verify.checks` empty and `verify.detect` on) and build the gate.
 *
 * @param definition The agent definition.
 * @param root The repository root (or working directory).
 * @returns The detection and the gate.
 */
export async function prepareChecks(
  definition: AgentDefinition,
  root: string,
): Promise<RunChecks> {
  const verify = definition.verify;
  if (verify.checks.length > 0 || !verify.detect) return {};
  const detection = await detectChecks(root);
  // Per-claim checks first, slow CI variants once before the run ends, repeats dropped.
  rankChecks(detection);
  if (detection.checks.length === 0) return { detection };
  const gate = new RepoChecksChecker({
    checks: detection.checks.map((check) => ({
      name: check.name,
      command: check.command,
      ...(check.runner ? { runner: check.runner } : {}),
      ...(check.buildFolder ? { buildFolder: check.buildFolder } : {}),
      ...(check.buildOnly ? { buildOnly: check.buildOnly } : {}),
    })),
    timeoutMs: verify.checkTimeoutSeconds * 1000,
    protect: verify.protect,
    configFiles: detection.configFiles,
    finalChecks: detection.checks.filter((check) => check.tier === "final").map((check) =>
      check.name
    ),
    changedLines: verify.changedLines,
  });
  return { detection, gate };
}

/**
 * What `--dry-run` and the report say about the checks.
 *
 * @param definition The agent definition.
 * @param checks The detection, when it ran.
 * @returns Lines of text.
 */
export function describeChecks(definition: AgentDefinition, checks: RunChecks): string {
  const verify = definition.verify;
  if (verify.checks.length > 0) {
    return `Configured in "verify.checks" (detection is off): ${
      verify.checks.map((check) => check.name ?? check.type).join(", ")
    }`;
  }
  if (!verify.detect) return `Detection is off ("verify.detect": false); no checks gate the run`;
  if (!checks.detection) return "No checks";
  const lines = [formatDetection(checks.detection)];
  const tiers = describeTiers(checks.detection);
  if (tiers !== "") lines.push(tiers);
  if (checks.gate) {
    lines.push(
      verify.baseline
        ? "Baseline: each check runs on the starting commit in a detached worktree beside the first session"
        : `Baseline: off ("verify.baseline": false)`,
    );
  }
  return lines.join("\n");
}

/**
 * `checks`: print every candidate with why it was chosen or skipped, then
 * run each check once on the working tree, in order.
 *
 * @param root The repository root.
 * @param definition The agent definition (for `verify`).
 * @param write Output.
 * @returns 0 when every check passed, 1 otherwise.
 */
export async function listAndRunChecks(
  root: string,
  definition: AgentDefinition,
  write: (text: string) => void,
): Promise<number> {
  const checks = await prepareChecks(definition, root);
  write(`${describeChecks(definition, checks)}\n`);
  if (!checks.gate) return 0;
  const all = checks.gate.checks;
  // Detected checks carry their kind and source; configured ones are shown by name only.
  const detected = new Map(checks.detection?.checks.map((check) => [check.name, check]) ?? []);
  write(`${describeCheckEnvironment()}\n`);
  let failed = 0;
  for (const [index, check] of all.entries()) {
    const found = detected.get(check.name);
    const tier = found?.tier === "final" ? "once before the run ends" : "every claim";
    const about = found ? ` (${found.kind}, from ${found.source}; ${tier})` : "";
    write(`\n[${index + 1}/${all.length}] running ${check.command}${about} ...\n`);
    const run = await runRepoCheck(check, {
      cwd: root,
      timeoutMs: definition.verify.checkTimeoutSeconds * 1000,
    });
    if (run.green) {
      write(
        `green  ${check.name} (${(run.durationMs / 1000).toFixed(1)} s${
          run.testsRun !== undefined ? `, ${run.testsRun} tests` : ""
        }${setAside(run)})\n`,
      );
    } else {
      failed++;
      write(`red    ${check.name}${describeRun(run)}\n`);
    }
  }
  const notRun = [
    plural(checks.detection?.skipped.length ?? 0, "candidate skipped", "candidates skipped"),
    plural(checks.detection?.hints.length ?? 0, "CI command not run", "CI commands not run"),
  ].filter((part) => part !== "");
  write(
    `\n${all.length - failed} green, ${failed} red${
      notRun.length > 0 ? `; ${notRun.join(", ")} (listed above with why)` : ""
    }\n`,
  );
  return failed === 0 ? 0 : 1;
}

/**
 * When each check runs, and why: at every claim, or once before the run ends.
 *
 * @param detection A ranked detection.
 * @returns Lines of text, or "" when no check has a tier.
 */
export function describeTiers(detection: Detection): string {
  const lines: string[] = [];
  for (
    const [tier, title] of [["claim", "At every claim:"], ["final", "Once, before the run ends:"]]
  ) {
    const checks = detection.checks.filter((check) => check.tier === tier);
    if (checks.length === 0) continue;
    lines.push(title);
    for (const check of checks) lines.push(`  ${check.name}  (${check.tierWhy ?? tier})`);
  }
  return lines.join("\n");
}

function plural(count: number, one: string, many: string): string {
  return count === 0 ? "" : `${count} ${count === 1 ? one : many}`;
}

/** ", 2 skipped, 1 todo": the tests a green run did not run, so they are not mistaken for passes. */
function setAside(run: CheckRun): string {
  return (["skipped", "ignored", "todo"] as const).map((kind) => {
    const count = run.counts?.[kind] ?? 0;
    return count > 0 ? `, ${count} ${kind}` : "";
  }).join("");
}
