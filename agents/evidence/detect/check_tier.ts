/**
 * When each detected check runs: at every claim (the test, lint and type
 * check commands a contributor runs in the inner loop: `go test ./...`,
 * `pnpm test`, `cargo test`), or once before the run ends (slow variants CI
 * runs besides them: `-race`, coverage, full builds, release workflows).
 * A final check runs at a claim only when the per-claim checks leave it
 * nothing else to refuse, so it runs once at the claim that completes the
 * run (again only if it fails there). Duplicates across workflows are
 * dropped.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rankChecks } from "./check_tier.ts";
 * import type { Detection } from "./detected.ts";
 *
 * const ci = ".github/workflows/ci.yml";
 * const detection: Detection = {
 *   checks: [
 *     { name: "go test ./...", command: "go test ./...", source: "go.mod", why: "", executable: "go", kind: "test" as const },
 *     { name: "go test -race ./...", command: "go test -race ./...", source: `${ci} job "t" step "race"`, why: "", executable: "go", kind: "test" as const },
 *   ],
 *   hints: [], skipped: [], configFiles: [],
 * };
 * rankChecks(detection);
 * assert.deepEqual(detection.checks.map((check) => check.tier), ["claim", "final"]);
 * assert.match(detection.checks[1].tierWhy!, /-race/);
 * ```
 *
 * @module
 */

import type { DetectedCheck, Detection } from "./detected.ts";

/** When a check runs: at every claim, or once before the run ends. */
export type CheckTier = "claim" | "final";

/** Flags and words that make a command a slow variant of the inner loop's, with why. */
const SLOW: ReadonlyArray<readonly [RegExp, string]> = [
  [/(?:^|\s)--?race\b/, "-race runs the code under the race detector, several times slower"],
  [
    /(?:^|\s)(?:-cover\w*|--coverage\b|--cov\b|--cov=)|\b(?:nyc|c8|coverage|tarpaulin|llvm-cov)\b/,
    "it measures coverage",
  ],
  [/(?:^|\s)(?:-bench|--bench)\b|\bcargo bench\b|\bbenchmark/, "it runs benchmarks"],
  [/(?:^|\s)--release\b/, "it builds in release mode"],
  [/(?:^|\s)(?:-r|--recursive|--workspaces|-ws)\s+(?:run\s+)?build\b/, "it builds every package"],
  [/(?:^|\s)(?:e2e|integration)(?:\s|$|:)|test:e2e|test:integration/, "it runs end-to-end tests"],
];

/** A workflow that releases, publishes or deploys: its checks are the release's. */
const RELEASE_WORKFLOW = /\.github\/workflows\/[^/]*(?:release|publish|deploy)[^/]*\.ya?ml\b/i;

function fromCi(check: DetectedCheck): boolean {
  return /\.github\/workflows\/|\bCONTRIBUTING|contributing\.md/i.test(check.source);
}

/** The command as a duplicate compares: `pnpm -r build` and `pnpm run build` are `pnpm build`. */
function sameKey(command: string): string {
  return command.replace(/\s+/g, " ").trim().split(" ").filter((word) =>
    !["-r", "--recursive", "run", "--if-present", "--workspaces", "-ws", "--silent", "-s"]
      .includes(word)
  ).join(" ");
}

/** The folder a command runs in: `cd web && npm test` runs in `web`. */
function folderOf(command: string): string {
  return /^cd (\S+) && /.exec(command)?.[1] ?? ".";
}

/** Decide one check's tier, given the repository's own (non-CI) test commands. */
function tierOf(
  check: DetectedCheck,
  inner: DetectedCheck[],
  beforeTests: boolean,
): { tier: CheckTier; why: string } {
  const release = RELEASE_WORKFLOW.exec(check.source);
  if (release !== null) {
    return { tier: "final", why: "from a release workflow: run once, before the run ends" };
  }
  const slow = SLOW.find(([pattern]) => pattern.test(check.command));
  if (slow !== undefined) {
    const peers = inner.filter((other) => other !== check && other.executable === check.executable);
    // The same folder's check first: a workspace has one per module.
    const base = peers.find((other) => folderOf(other.command) === folderOf(check.command)) ??
      peers[0];
    return {
      tier: "final",
      why: `${slow[1]}${
        base !== undefined ? `; ${base.command} runs at every claim` : ""
      }: run once, before the run ends`,
    };
  }
  if (check.name.startsWith("CI job ")) {
    return {
      tier: "final",
      why: "a CI job of commands finishline does not know: once, before the run ends",
    };
  }
  if (check.kind === "build") {
    return beforeTests
      ? { tier: "claim", why: "a build CI runs before the tests, which may need what it makes" }
      : { tier: "final", why: "a build CI runs after the tests: once, before the run ends" };
  }
  if (!fromCi(check)) {
    return {
      tier: "claim",
      why: `the ${check.kind === "gate" ? "check" : check.kind} command a contributor runs`,
    };
  }
  if (check.kind === "test") return { tier: "claim", why: "a test command CI runs" };
  if (check.kind === "gate") return { tier: "claim", why: "the gate CI runs" };
  return { tier: "claim", why: `a ${check.kind} command CI runs, cheap enough for every claim` };
}

/**
 * Give every check its tier and why, put the per-claim checks first (each
 * tier in the order detection found), and drop a check that repeats
 * another (`pnpm -r build` in a release workflow beside CI's `pnpm build`),
 * recording it as skipped. At least one check runs at every claim: when
 * every check is a slow one, the first runs per claim.
 *
 * @param detection What detection found; changed in place.
 */
export function rankChecks(detection: Detection): void {
  const kept: DetectedCheck[] = [];
  const seen = new Map<string, DetectedCheck>();
  for (const check of detection.checks) {
    const key = sameKey(check.command);
    const first = seen.get(key);
    if (first !== undefined) {
      detection.skipped.push({
        source: check.source,
        why: `${JSON.stringify(check.command)} repeats ${
          JSON.stringify(first.command)
        } (${first.source})`,
      });
      continue;
    }
    seen.set(key, check);
    kept.push(check);
  }
  const inner = kept.filter((check) =>
    check.kind === "test" && !SLOW.some(([p]) => p.test(check.command))
  );
  for (const [index, check] of kept.entries()) {
    const beforeTests = kept.slice(index + 1).some((later) => later.kind === "test");
    const { tier, why } = tierOf(check, inner, beforeTests);
    check.tier = tier;
    check.tierWhy = why;
  }
  if (!kept.some((check) => check.tier === "claim") && kept.length > 0) {
    kept[0].tier = "claim";
    kept[0].tierWhy = `${kept[0].tierWhy}; yet every check is slow, and one must gate each claim`;
  }
  detection.checks = [
    ...kept.filter((check) => check.tier === "claim"),
    ...kept.filter((check) => check.tier === "final"),
  ];
}

/**
 * The checks of a gate in the order they run, split by tier.
 *
 * @param checks The gate's checks.
 * @param final Names of the checks that run once, before the run ends.
 * @returns The per-claim checks, then the final ones.
 */
export function splitTiers<T extends { name: string }>(
  checks: readonly T[],
  final: ReadonlySet<string>,
): { perClaim: T[]; final: T[] } {
  return {
    perClaim: checks.filter((check) => !final.has(check.name)),
    final: checks.filter((check) => final.has(check.name)),
  };
}

/**
 * Whether a claim's final checks run: only when none of its per-claim
 * checks is red, except those the agent declared out of scope (which the
 * judge may accept). A claim refused anyway does not pay for them.
 *
 * @param runs The per-claim checks' runs.
 * @param outOfScope Names of the checks the agent declared out of scope.
 * @returns True when they run.
 */
export function finalDue(
  runs: ReadonlyArray<{ name: string; green: boolean }>,
  outOfScope: ReadonlyMap<string, string> | ReadonlySet<string>,
): boolean {
  return runs.every((run) => run.green || outOfScope.has(run.name));
}
