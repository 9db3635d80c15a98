/**
 * The build seed on real releases: inih r59 (Meson), GNU Hello 2.10
 * (autotools, its shipped configure) and cJSON 1.7.15 (CMake), with the
 * checks as detection makes them. The baseline's build folder starts each
 * claim's: a claim of the release configures and compiles nothing, the
 * injected bug is compiled and its tests named, the release after it is
 * back to nothing compiled, and a claim that changes a build definition
 * (the configure script, `meson.build`, `CMakeLists.txt`) is configured
 * and built once by finishline, the claim and a later one with the same
 * file building on that. inih runs in CI; GNU Hello and cJSON, whose first configure and
 * build take most of a minute here, under FINISHLINE_REALWORLD=all.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { RepoChecksChecker } from "../../agents/evidence/repo_checks.ts";
import { detectChecks } from "../../agents/evidence/detect/detect.ts";
import type { RepoCheck } from "../../agents/evidence/run/check_run.ts";
import { git, tempDir } from "../_helpers.ts";
import { CORPUS } from "./_corpus.ts";
import { prepareRepo } from "./_prepare.ts";
import { checkoutOf, claimContext, commitLike } from "./_verify.ts";

interface Seeded {
  id: string;
  /** The file a build-definition claim appends a comment to, and the comment. */
  definition: { file: string; comment: string };
  /** What the check's output shows when it compiles a C file. */
  compiles: RegExp;
  /** What it shows when it configures from nothing. */
  configures: RegExp;
  slow: boolean;
}

const SEEDED: Seeded[] = [
  {
    id: "inih",
    definition: { file: "meson.build", comment: "# finishline" },
    compiles: /Compiling C object/,
    configures: /The Meson build system/,
    slow: false,
  },
  {
    id: "hello",
    definition: { file: "configure", comment: "# finishline" },
    compiles: / -c -o \S+\.o|^\s+CC\s/m,
    configures: /^checking for /m,
    slow: true,
  },
  {
    id: "cjson",
    definition: { file: "CMakeLists.txt", comment: "# finishline" },
    compiles: /Building C object/,
    configures: /The C compiler identification/,
    slow: true,
  },
];

const all = Deno.env.get("FINISHLINE_REALWORLD") === "all";

/** Puts the variables `names` back as they are now, when disposed. */
function restoring(names: string[]): AsyncDisposable {
  const before = new Map(names.map((name) => [name, Deno.env.get(name)]));
  return {
    [Symbol.asyncDispose]: () => {
      for (const [name, value] of before) {
        if (value === undefined) Deno.env.delete(name);
        else Deno.env.set(name, value);
      }
      return Promise.resolve();
    },
  };
}

/** The check as detected, noting in `log` whether it configured, compiled, or neither. */
function noting(check: RepoCheck, spec: Seeded, log: string): RepoCheck {
  const out = `"$TMPDIR/build.out"`;
  const quoted = check.command.replaceAll("'", "'\\''");
  const grep = (pattern: RegExp) => `grep -Eq '${pattern.source.replaceAll("'", "'\\''")}' ${out}`;
  return {
    ...check,
    command: `sh -c '${quoted}' >${out} 2>&1; code=$?; cat ${out}; if ${
      grep(spec.configures)
    }; then echo configured >>'${log}'; elif ${
      grep(spec.compiles)
    }; then echo built >>'${log}'; else echo fresh >>'${log}'; fi; exit $code`,
  };
}

for (const spec of SEEDED) {
  const corpus = CORPUS.find((repo) => repo.id === spec.id)!;
  Deno.test({
    name: `build seed on ${corpus.project}: claims start from the baseline's build`,
    ignore: spec.slow && !all,
    async fn(t) {
      const prepared = await prepareRepo(corpus);
      if (!prepared.ok || prepared.missing.length > 0) {
        console.log(`skipped: ${prepared.ok ? prepared.missing.join(", ") : prepared.unavailable}`);
        return;
      }
      // checkoutOf sets the corpus's variables (GOFLAGS) in this process, for the gate's checks;
      // these C projects need none of them, and a go.work fixture run beside refuses -mod=mod.
      const checkout = await (async () => {
        await using _env = restoring(Object.keys(prepared.env));
        return await checkoutOf(prepared);
      })();
      assert.ok(typeof checkout !== "string", checkout as string);
      await using _ = checkout;
      await using logs = await tempDir("finishline-seed-log-");
      const log = join(logs.path, "builds.log");
      let seen = 0;
      const since = async () => {
        const lines = (await Deno.readTextFile(log)).trim().split("\n");
        const fresh = lines.slice(seen);
        seen = lines.length;
        return fresh;
      };
      const found = (await detectChecks(checkout.dir.path)).checks.find((check) =>
        check.buildFolder
      );
      assert.ok(found, "a check that keeps a build folder");
      const check: RepoCheck = {
        name: found.name,
        command: found.command,
        ...(found.runner ? { runner: found.runner } : {}),
        buildFolder: found.buildFolder,
        buildOnly: found.buildOnly,
      };
      const gate = new RepoChecksChecker({
        checks: [noting(check, spec, log)],
        timeoutMs: 600_000,
      });
      const claim = async (commit: string) => {
        await gate.ready();
        await commitLike(checkout, commit);
        const started = performance.now();
        const result = await gate.check(claimContext(checkout));
        console.log(`${spec.id}: claim ${((performance.now() - started) / 1000).toFixed(1)} s`);
        return result;
      };
      try {
        await gate.startBaseline(checkout.repo, checkout.base);
        assert.deepEqual(await since(), ["configured"]);

        await t.step("a claim of the release configures and compiles nothing", async () => {
          const result = await claim(checkout.base);
          assert.equal(result.complete, true, result.feedback);
          assert.deepEqual(await since(), ["fresh"]);
        });

        await t.step("the injected bug is compiled and its tests named", async () => {
          const result = await claim(checkout.bug);
          assert.equal(result.complete, false);
          for (const name of corpus.failing) {
            assert.ok(result.feedback?.includes(name), result.feedback);
          }
          assert.equal((await since())[0], "built");
        });

        await t.step("the release after it: nothing compiled", async () => {
          const result = await claim(checkout.base);
          assert.equal(result.complete, true, result.feedback);
          assert.deepEqual(await since(), ["fresh"]);
        });

        const define = async (from: string, message: string) => {
          await git(checkout.dir.path, "reset", "-q", "--hard", from);
          const file = join(checkout.dir.path, spec.definition.file);
          await Deno.writeTextFile(file, `\n${spec.definition.comment}\n`, { append: true });
          await git(checkout.dir.path, "commit", "-qam", message);
          return (await checkout.repo.head())!;
        };

        await t.step("a changed build definition is configured once, by finishline", async () => {
          const result = await claim(await define(checkout.base, "a build definition"));
          assert.equal(result.complete, true, result.feedback);
          assert.match(
            (gate.evidence!.dependencyNotes ?? []).join("\n"),
            new RegExp(`You changed "${spec.definition.file}": finishline configured and built`),
          );
          // The claim's run builds on finishline's build of the new file: nothing compiled.
          // Then again with the original build file put back (a protected file changed): that
          // run builds on the baseline's folder.
          const runs = await since();
          assert.equal(runs[0], "fresh", `${runs}`);
          assert.ok(!runs.includes("configured") || spec.id === "hello", `${runs}`);
        });

        await t.step("the bug with the same build definition: only the bug compiled", async () => {
          const result = await claim(await define(checkout.bug, "the bug and a build definition"));
          assert.equal(result.complete, false);
          for (const name of corpus.failing) {
            assert.ok(result.feedback?.includes(name), result.feedback);
          }
          assert.equal((await since())[0], "built");
        });
      } finally {
        await gate.close();
      }
    },
  });
}
