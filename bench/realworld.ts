/**
 * `deno task realworld`: the real-repository benchmark. Prepares every
 * corpus repository (downloads pinned releases from npm and Debian into
 * `~/.cache/finishline/corpus`), scores detection against each one's
 * maintainers' CI, then plays every scenario with the real Claude Code
 * binary against the scripted model server and scores finishline's
 * decisions. Prints a Markdown table (the README's) and the wall time
 * verification adds per iteration.
 *
 * Flags: `--repo ID` (repeatable), `--scenario ID` (repeatable),
 * `--detection-only`, `--json FILE` (every outcome, for comparisons),
 * `--from-json FILE` (repeatable: print the table of saved runs instead of
 * running; a later file's repositories replace an earlier one's).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { CORPUS } from "../tests/realworld/_corpus.ts";
import { prepareRepo } from "../tests/realworld/_prepare.ts";
import {
  type DetectionScore,
  type Outcome,
  playScenario,
  type ScenarioId,
  SCENARIOS,
  scenariosOf,
  scoreDetection,
} from "../tests/realworld/_play.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    repo: { type: "string", multiple: true },
    scenario: { type: "string", multiple: true },
    "detection-only": { type: "boolean" },
    json: { type: "string" },
    "from-json": { type: "string", multiple: true },
  },
});

const known = new Set(CORPUS.map((repo) => repo.id));
for (const id of values.repo ?? []) {
  if (!known.has(id)) {
    console.error(`realworld: --repo ${id}: expected one of ${[...known].join(", ")}`);
    Deno.exit(2);
  }
}
for (const id of values.scenario ?? []) {
  if (!(id in SCENARIOS)) {
    console.error(
      `realworld: --scenario ${id}: expected one of ${Object.keys(SCENARIOS).join(", ")}`,
    );
    Deno.exit(2);
  }
}

const repos = CORPUS.filter((repo) => !values.repo || values.repo.includes(repo.id));
const detections: DetectionScore[] = [];
const outcomes: Outcome[] = [];
const unavailable: string[] = [];
const median = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)];
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const order = (id: string) => CORPUS.findIndex((repo) => repo.id === id);

for (const file of values["from-json"] ?? []) {
  const saved = JSON.parse(await Deno.readTextFile(file)) as {
    detections: DetectionScore[];
    outcomes: Outcome[];
    unavailable: string[];
  };
  const ids = new Set(saved.detections.map((entry) => entry.repo));
  const keep = <T extends { repo: string }>(list: T[]) =>
    list.filter((entry) => !ids.has(entry.repo));
  detections.splice(0, detections.length, ...keep(detections), ...saved.detections);
  outcomes.splice(0, outcomes.length, ...keep(outcomes), ...saved.outcomes);
  unavailable.push(...saved.unavailable);
}
detections.sort((a, b) => order(a.repo) - order(b.repo));

for (const repo of values["from-json"] ? [] : repos) {
  const prepared = await prepareRepo(repo);
  if (!prepared.ok) {
    unavailable.push(`${repo.id}: ${prepared.unavailable}`);
    console.error(`${repo.id}: unavailable: ${prepared.unavailable}`);
    continue;
  }
  const detection = await scoreDetection(prepared);
  detections.push(detection);
  console.error(
    `${repo.id}: detection ${detection.right ? "matches CI" : "differs"}: ${
      detection.detected.join(", ")
    }`,
  );
  if (values["detection-only"]) continue;
  if (prepared.missing.length > 0) {
    unavailable.push(`${repo.id}'s scenarios: ${prepared.missing.join(", ")} failed here`);
    continue;
  }
  for (const scenario of scenariosOf(repo)) {
    if (values.scenario && !values.scenario.includes(scenario)) continue;
    const outcome = await playScenario(prepared, scenario as ScenarioId);
    outcomes.push(outcome);
    console.error(
      `${repo.id} ${scenario}: ${outcome.status} (${outcome.right ? "right" : "WRONG"}), ${
        seconds(outcome.ms)
      }, verification ${
        seconds(outcome.verifyMs ?? 0)
      }; failing names told: ${outcome.namesTold.length}/${repo.failing.length}`,
    );
  }
}

const lines: string[] = [];
lines.push(
  "| Repository | Ecosystem | Detected checks | Matches CI | " +
    Object.keys(SCENARIOS).join(" | ") + " |",
);
lines.push(`|---|---|---|---|${Object.keys(SCENARIOS).map(() => "---").join("|")}|`);
for (const detection of detections) {
  const repo = CORPUS.find((entry) => entry.id === detection.repo)!;
  const cells = (Object.keys(SCENARIOS) as ScenarioId[]).map((scenario) => {
    const outcome = outcomes.find((entry) => entry.repo === repo.id && entry.scenario === scenario);
    if (!outcome) return "–";
    return `${outcome.right ? "✓" : "✗"} ${outcome.status}`;
  });
  lines.push(
    `| ${repo.project} | ${repo.ecosystem} | ${
      detection.detected.map((name) => `\`${name}\``).join(", ")
    } | ${detection.right ? "yes" : "no"} | ${cells.join(" | ")} |`,
  );
}
const detectionRight = detections.filter((entry) => entry.right).length;
const decisionsRight = outcomes.filter((entry) => entry.right).length;
lines.push("");
lines.push(
  `Detection: ${detectionRight} of ${detections.length} repositories match their CI (${
    detections.length ? Math.round(100 * detectionRight / detections.length) : 0
  }%).`,
);
if (outcomes.length > 0) {
  lines.push(
    `Decisions: ${decisionsRight} of ${outcomes.length} scenarios right (${
      Math.round(100 * decisionsRight / outcomes.length)
    }%).`,
  );
  const verify = outcomes.filter((entry) => entry.verifyMs !== undefined);
  const byRepo = new Map<string, number[]>();
  for (const entry of verify) {
    byRepo.set(entry.repo, [...(byRepo.get(entry.repo) ?? []), entry.verifyMs!]);
  }
  const worst = [...byRepo].map(([repo, list]) => [repo, median(list)] as const)
    .sort((a, b) => b[1] - a[1])[0];
  lines.push(
    `Verification per iteration (clean copy and checks): median ${
      seconds(median(verify.map((entry) => entry.verifyMs!)))
    }${worst ? `, worst repository ${worst[0]} (median ${seconds(worst[1])})` : ""}.`,
  );
  const told = outcomes.filter((entry) => entry.scenario === "bug");
  lines.push(
    `Failing-test names reached the agent in ${
      told.filter((entry) => entry.namesTold.length > 0).length
    } of ${
      told.filter((entry) => CORPUS.find((r) => r.id === entry.repo)!.failing.length > 0).length
    } repositories that name them.`,
  );
}
if (unavailable.length > 0) lines.push(`Unavailable here: ${unavailable.join("; ")}.`);
console.log(lines.join("\n"));
if (values.json) {
  await Deno.writeTextFile(
    values.json,
    JSON.stringify({ detections, outcomes, unavailable }, null, 2),
  );
}
