/**
 * The real-repository corpus in CI: detection on every repository (pinned
 * releases downloaded from npm and Debian), and every scenario on the fast
 * ones (`inCi`), with the real Claude Code binary against the scripted
 * model server and the projects' own test runners. `deno task realworld`
 * plays every scenario on every repository.
 *
 * Under `CI=true` a repository that cannot be downloaded, or an `inCi`
 * repository whose toolchain is missing, fails: `.ci/run` installs what
 * they need. Elsewhere they are skipped with a line saying why.
 */

import assert from "node:assert/strict";
import { CORPUS } from "./_corpus.ts";
import { prepareRepo } from "./_prepare.ts";
import { playScenario, SCENARIOS, scenariosOf, scoreDetection } from "./_play.ts";

const inCi = Deno.env.get("CI") === "true";

for (const repo of CORPUS) {
  Deno.test(`corpus ${repo.id} (${repo.ecosystem})`, async (t) => {
    const prepared = await prepareRepo(repo);
    if (!prepared.ok) {
      assert.ok(!inCi, `${repo.id} is unavailable: ${prepared.unavailable}`);
      console.log(`skipped: ${prepared.unavailable}`);
      return;
    }

    await t.step("detection matches the maintainers' CI", async () => {
      const score = await scoreDetection(prepared);
      assert.deepEqual(
        [...score.detected].sort(),
        [...repo.ci].sort(),
        `${repo.id}: detected ${score.detected.join(", ")}; CI runs ${repo.ci.join(", ")}`,
      );
    });

    if (!repo.inCi) return;
    if (prepared.missing.length > 0) {
      assert.ok(!inCi, `${repo.id} needs ${prepared.missing.join(", ")}`);
      console.log(`scenarios skipped: ${prepared.missing.join(", ")} failed here`);
      return;
    }
    for (const scenario of scenariosOf(repo)) {
      const { label, completes } = SCENARIOS[scenario];
      await t.step(
        `${scenario}: ${label}: ${completes ? "completes" : "does not complete"}`,
        async () => {
          const outcome = await playScenario(prepared, scenario);
          assert.ok(
            outcome.right,
            `${repo.id}/${scenario} ended ${outcome.status}; checks: ${
              JSON.stringify(outcome.checks)
            }`,
          );
          assert.equal(outcome.worktrees, 1, "only the checkout is left in git worktree list");
          if (scenario === "bug" && repo.failing.length > 0) {
            assert.deepEqual(outcome.namesTold, repo.failing, "the failing tests were named");
          }
          if (scenario === "fix") {
            assert.ok(outcome.checks?.passed, "the checks passed on the clean copy");
            assert.match(outcome.checks?.commit ?? "", /^[0-9a-f]{40}$/);
          }
        },
      );
    }
  });
}
