/**
 * Fast feedback on real repositories: on each corpus repository whose
 * toolchain is here, the gate rejects a claim of the injected bug with the
 * full suite, then answers the next claim of the same bug from the failing
 * tests alone, run by the project's own command narrowed with its runner's
 * filter (or, where the command cannot be narrowed, from the full suite
 * again); a claim of the fix then passes only after the full suite.
 *
 * The test suite plays the repositories CI plays (`inCi`) and arg (jest
 * through pnpm); `FINISHLINE_REALWORLD=all` plays every one (commander's
 * suite alone takes minutes).
 */

import assert from "node:assert/strict";
import { RepoChecksChecker } from "../../agents/evidence/repo_checks.ts";
import { CORPUS } from "./_corpus.ts";
import { prepareRepo } from "./_prepare.ts";
import { checkoutOf, claimContext, commitLike } from "./_verify.ts";
import { join } from "node:path";
import { tmpdir } from "node:os";

/**
 * Why each repository's test check can or cannot be narrowed: its command
 * runs one runner (`pytest`, `cargo test`, a script that is only `vitest`
 * or `jest`), or its script chains several commands, where arguments would
 * reach the last one, or it is make.
 */
const NARROWED: Record<string, boolean> = {
  "hash.js": false,
  "fastify-error": false,
  "headers-polyfill": true,
  commander: false,
  arg: true,
  toolz: true,
  sortedcontainers: true,
  "go-cmp": true,
  semver: true,
  cjson: false,
};

const all = Deno.env.get("FINISHLINE_REALWORLD") === "all";

/**
 * jest keeps a cache in the system temp folder (`jest_<uid>`): removed at the
 * end when the test made it. TMPDIR is not moved for that: the test files run
 * side by side in one process, and their folders would go with this test's.
 */
async function jestCacheRemover(): Promise<AsyncDisposable> {
  const tmp = tmpdir();
  const jest = async () => {
    const found: string[] = [];
    for await (const entry of Deno.readDir(tmp)) {
      if (entry.name.startsWith("jest_")) found.push(join(tmp, entry.name));
    }
    return found;
  };
  const before = new Set(await jest());
  return {
    [Symbol.asyncDispose]: async () => {
      for (const dir of await jest()) {
        if (!before.has(dir)) await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  };
}

for (const corpus of CORPUS.filter((repo) => all || repo.inCi || repo.id === "arg")) {
  Deno.test(`corpus ${corpus.id}: the failing tests run first, the full suite decides`, async () => {
    await using _jest = await jestCacheRemover();
    const prepared = await prepareRepo(corpus);
    if (!prepared.ok || prepared.missing.length > 0) {
      console.log(`skipped: ${prepared.ok ? prepared.missing.join(", ") : prepared.unavailable}`);
      return;
    }
    const checkout = await checkoutOf(prepared);
    assert.ok(typeof checkout !== "string", checkout as string);
    await using _ = checkout;
    const gate = new RepoChecksChecker({ checks: [checkout.check], timeoutMs: 600_000 });
    try {
      await gate.startBaseline(checkout.repo, checkout.base);
      await commitLike(checkout, checkout.bug);
      const first = await gate.check(claimContext(checkout));
      assert.equal(first.complete, false);
      const failing = gate.evidence!.checks[0].failing;
      if (corpus.failing.length > 0) {
        assert.ok(
          corpus.failing.every((name) => failing.some((found) => found.includes(name))),
          `${failing}`,
        );
      }
      const fullRun = gate.evidence!.checks[0].counts?.run;

      await commitLike(checkout, checkout.bug);
      const second = await gate.check(claimContext(checkout));
      assert.equal(second.complete, false);
      const rerun = gate.evidence!.rerun?.[0];
      if (failing.length === 0) {
        // Nothing named: nothing to re-run (a Makefile's test program).
        assert.equal(rerun, undefined);
      } else if (NARROWED[corpus.id]) {
        assert.equal(rerun?.outcome, "still failing", JSON.stringify(rerun));
        assert.deepEqual(rerun?.stillFailing, failing);
        assert.match(second.feedback!, /still fails in/);
        const ran = gate.evidence!.checks[0].counts?.run;
        if (fullRun !== undefined) assert.ok(ran !== undefined && ran < fullRun, `${ran}`);
      } else {
        assert.equal(rerun?.outcome, "not run", JSON.stringify(rerun));
        assert.equal(gate.evidence!.checks[0].counts?.run, fullRun, "the full suite ran");
      }

      await commitLike(checkout, checkout.base);
      const fixed = await gate.check(claimContext(checkout));
      assert.equal(fixed.complete, true, fixed.feedback);
      // As many tests as at the start (cargo stops at the first failing test binary: fewer on the bug).
      const atStart = (await gate.baseline())?.runs[0].counts?.run;
      assert.equal(gate.evidence!.checks[0].counts?.run, atStart, "the full suite decided");
      if (failing.length > 0 && NARROWED[corpus.id]) {
        assert.equal(gate.evidence!.rerun?.[0].outcome, "passed");
      }
    } finally {
      await gate.close();
    }
  });
}
