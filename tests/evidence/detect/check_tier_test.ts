import assert from "node:assert/strict";
import { finalDue, rankChecks } from "../../../agents/evidence/detect/check_tier.ts";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";
import { detectIn } from "./_detect_helpers.ts";
import type { Detection } from "../../../agents/evidence/detect/detected.ts";

const GO_CI = `on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: go vet ./...
      - run: go build -race ./...
      - run: go test -race -count=1 ./...
`;

Deno.test("ranking: the inner loop's commands gate every claim, slow CI variants run once", async (t) => {
  await t.step(
    "go test ./... per claim; go test -race and go build -race once, and why",
    async () => {
      const detection = await detectIn({
        "go.mod": "module example.com/m\n",
        ".github/workflows/ci.yml": GO_CI,
      });
      rankChecks(detection);
      assert.deepEqual(
        detection.checks.map((check) => [check.command, check.tier]),
        [
          ["go test ./...", "claim"],
          ["go vet ./...", "claim"],
          ["go build -race ./...", "final"],
          ["go test -race -count=1 ./...", "final"],
        ],
      );
      assert.equal(
        detection.checks[3].tierWhy,
        "-race runs the code under the race detector, several times slower; go test ./... runs at every claim: run once, before the run ends",
      );
    },
  );
  await t.step("in a go.work, a module's -race run names that module's per-claim run", async () => {
    const job = (dir: string) =>
      `  ${dir}:\n    runs-on: ubuntu-latest\n    defaults:\n      run:\n        working-directory: ${dir}\n    steps:\n      - run: go test -race ./...\n`;
    const detection = await detectIn({
      "go.work": "go 1.19\n\nuse (\n\t./a\n\t./b\n)\n",
      "a/go.mod": "module example.com/a\n",
      "b/go.mod": "module example.com/b\n",
      ".github/workflows/ci.yml": `on: [push, pull_request]\njobs:\n${job("b")}`,
    });
    rankChecks(detection);
    const race = detection.checks.find((check) => check.command === "cd b && go test -race ./...");
    assert.match(race?.tierWhy ?? "", /; cd b && go test \.\/\.\.\. runs at every claim/);
  });
  await t.step("a release workflow's pnpm -r build repeats CI's pnpm build: dropped", async () => {
    const workflow = (name: string, run: string) =>
      `name: ${name}\non:\n  push:\n    branches: [main]\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ${run}\n`;
    const detection = await detectIn({
      "package.json": JSON.stringify({ scripts: { test: "vitest run", build: "tsc -b" } }),
      "pnpm-lock.yaml": "",
      "pnpm-workspace.yaml": "packages: []\n",
      ".github/workflows/ci.yml": workflow("ci", "pnpm build"),
      ".github/workflows/release.yml": workflow("release", "pnpm -r build"),
    });
    rankChecks(detection);
    const commands = detection.checks.map((check) => [check.command, check.tier]);
    assert.deepEqual(commands.filter(([command]) => /build/.test(command!)).length, 1);
    assert.deepEqual(commands[0], ["pnpm test", "claim"]);
    assert.ok(
      detection.skipped.some((entry) => /repeats "pnpm (?:run )?build"/.test(entry.why)) ||
        detection.checks.every((check) => !check.source.includes("release.yml")),
      JSON.stringify(detection, null, 1),
    );
  });
  await t.step("a build CI runs before the tests stays per claim: they may need it", async () => {
    const detection = await detectIn({
      "package.json": JSON.stringify({ scripts: { build: "tsc", test: "node --test dist/" } }),
      "package-lock.json": "{}",
      ".github/workflows/ci.yml":
        "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm run build\n      - run: npm test\n",
    });
    rankChecks(detection);
    assert.deepEqual(detection.checks.map((check) => [check.command, check.tier]), [
      ["npm run build", "claim"],
      ["npm test", "claim"],
    ]);
  });
  await t.step("every check slow: the first still gates each claim", () => {
    const detection: Detection = {
      checks: [{
        name: "go test -race ./...",
        command: "go test -race ./...",
        source: '.github/workflows/ci.yml job "t" step "r"',
        why: "",
        executable: "go",
        kind: "test" as const,
      }],
      hints: [],
      skipped: [],
      configFiles: [],
    };
    rankChecks(detection);
    assert.equal(detection.checks[0].tier, "claim");
    assert.match(detection.checks[0].tierWhy!, /one must gate each claim$/);
  });
  await t.step("final checks are due only when no per-claim check is red, unless declared", () => {
    assert.equal(finalDue([{ name: "a", green: true }], new Set()), true);
    assert.equal(finalDue([{ name: "a", green: false }], new Set()), false);
    assert.equal(finalDue([{ name: "a", green: false }], new Set(["a"])), true);
  });
});

Deno.test("the gate runs a final check only at a claim the per-claim checks pass, and its baseline never holds up a claim that does not reach it", async () => {
  await using repo = await tempRepo();
  await using signals = await tempDir("finishline-tier-");
  const release = `${signals.path}/release`;
  const log = `${signals.path}/log`;
  await Deno.writeTextFile(`${repo.path}/value.txt`, "1\n");
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const base = (await gitRepo.head())!;
  const checker = new RepoChecksChecker({
    checks: [
      { name: "fast", command: 'test "$(cat value.txt)" -lt 5' },
      {
        name: "slow",
        // Its baseline waits until the test lets it go: a claim must not wait with it.
        command:
          `echo ran >> '${log}'; while [ ! -e '${release}' ]; do sleep 0.05; done; test "$(cat value.txt)" != 3`,
      },
    ],
    timeoutMs: 600_000,
    finalChecks: ["slow"],
  });
  try {
    const baseline = checker.startBaseline(gitRepo, base);
    const context = { cwd: repo.path, git: { repo: gitRepo, baseline: base } } as never;
    // A claim the fast check refuses: answered while the slow baseline still waits.
    await Deno.writeTextFile(`${repo.path}/value.txt`, "5\n");
    await git(repo.path, "commit", "-qam", "broken");
    const refused = await checker.check(context);
    assert.equal(refused.complete, false);
    assert.deepEqual(checker.evidence?.checks.map((check) => check.name), ["fast"]);
    assert.equal(
      (await Deno.readTextFile(log)).trim().split("\n").length,
      1,
      "the baseline's run only",
    );
    await Deno.writeTextFile(release, "");
    assert.deepEqual((await baseline).runs.map((run) => [run.name, run.green]), [
      ["fast", true],
      ["slow", true],
    ]);
    // The fast check passes, so the slow one runs and decides: it refuses 3.
    await Deno.writeTextFile(`${repo.path}/value.txt`, "3\n");
    await git(repo.path, "commit", "-qam", "wrong");
    const slowRed = await checker.check(context);
    assert.equal(slowRed.complete, false);
    assert.deepEqual(checker.evidence?.checks.map((check) => [check.name, check.now]), [
      ["fast", "green"],
      ["slow", "red"],
    ]);
    await Deno.writeTextFile(`${repo.path}/value.txt`, "2\n");
    await git(repo.path, "commit", "-qam", "fixed");
    const passed = await checker.check(context);
    assert.equal(passed.complete, true, passed.feedback);
  } finally {
    await Deno.writeTextFile(release, "").catch(() => {});
    await checker.close();
  }
});
