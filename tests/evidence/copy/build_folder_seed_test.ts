/**
 * The clean copy starts from the baseline's Meson and CMake build folders,
 * on real projects built by the machine's meson, ninja, cmake and C
 * compiler, with the checks as detection makes them: a claim of the
 * starting code compiles nothing; a changed source or header is compiled
 * again and its bug found; a deleted source is not stood in for by its
 * object; a changed build definition configures from nothing (a kept folder
 * would keep the old option's value and pass); a seed changed after it was
 * taken is not used.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { detectChecks } from "../../../agents/evidence/detect/detect.ts";
import type { RepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";

const MATH_H = (scale: number) =>
  `#define SCALE ${scale}\nint add(int a, int b);\nint twice(int a);\n`;
const MATH_C = (sum: string) =>
  `#include "math.h"\n#ifndef OFFSET\n#define OFFSET 0\n#endif\nint add(int a, int b) { return ${sum}; }\n`;
const EXTRA_C = `#include "math.h"\nint twice(int a) { return add(a, a); }\n`;
const TEST_C =
  `#include <stdio.h>\n#include "../src/math.h"\nint main(void) {\n  if (add(1, 2) != 3) { puts("add(1, 2) != 3"); return 1; }\n  return 0;\n}\n`;

interface Project {
  name: string;
  tools: string[];
  /**
   * The build file, with the sum's offset its configure step sets, and with
   * a second test (`tests/t_more.c`) when `more` is on.
   */
  build: (offset: number, more?: boolean) => Record<string, string>;
  /** The line its build prints for each C file it compiles. */
  compiles: RegExp;
  /** What it prints when it configures a folder from nothing. */
  configures: RegExp;
  /** The failing test, as the check's output names it. */
  failing: string;
}

const PROJECTS: Project[] = [
  {
    name: "Meson",
    tools: ["meson", "ninja", "cc"],
    // A default option: a kept build folder keeps the first set-up's value when it changes.
    build: (offset, more) => ({
      "meson.build": [
        `project('seedy', 'c', default_options: ['c_args=-DOFFSET=${offset}'])`,
        "math = static_library('math', 'src/math.c', 'src/extra.c')",
        "test('adds', executable('t_add', 'tests/t_add.c', link_with: math))",
        ...(more ? ["test('more', executable('t_more', 'tests/t_more.c', link_with: math))"] : []),
        "",
      ].join("\n"),
    }),
    compiles: /Compiling C object/,
    configures: /The Meson build system/,
    failing: "adds",
  },
  {
    name: "CMake",
    tools: ["cmake", "cc"],
    // A cache variable: a kept cache keeps the first configure's value when its default changes.
    build: (offset, more) => ({
      "CMakeLists.txt": [
        "cmake_minimum_required(VERSION 3.13)",
        "project(seedy C)",
        `set(SEEDY_OFFSET ${offset} CACHE STRING "added to every sum")`,
        "enable_testing()",
        "add_library(math src/math.c src/extra.c)",
        "target_compile_definitions(math PRIVATE OFFSET=${SEEDY_OFFSET})",
        "add_executable(t_add tests/t_add.c)",
        "target_link_libraries(t_add math)",
        "add_test(NAME adds COMMAND t_add)",
        ...(more
          ? [
            "add_executable(t_more tests/t_more.c)",
            "target_link_libraries(t_more math)",
            "add_test(NAME more COMMAND t_more)",
          ]
          : []),
        "",
      ].join("\n"),
    }),
    compiles: /Building C object/,
    configures: /The C compiler identification/,
    failing: "adds",
  },
];

async function installed(tool: string): Promise<boolean> {
  return await new Deno.Command("sh", { args: ["-c", `command -v ${tool}`] }).output().then(
    (out) => out.success,
    () => false,
  );
}

async function project(spec: Project, sum = "(a + b) * SCALE + OFFSET") {
  const repo = await tempRepo();
  const files: Record<string, string> = {
    ...spec.build(0),
    "src/math.h": MATH_H(1),
    "src/math.c": MATH_C(sum),
    "src/extra.c": EXTRA_C,
    "tests/t_add.c": TEST_C,
  };
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(join(repo.path, file, ".."), { recursive: true });
    await Deno.writeTextFile(join(repo.path, file), text);
  }
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  return { repo, gitRepo, base: (await gitRepo.head())! };
}

async function commit(dir: string, files: Record<string, string | null>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    if (text === null) await Deno.remove(join(dir, file));
    else await Deno.writeTextFile(join(dir, file), text);
  }
  await git(dir, "add", "-A");
  await git(dir, "commit", "-qm", "work", "--allow-empty");
}

/**
 * The detected check, run as detected, noting in `log` (outside the copy)
 * whether it configured a folder from nothing ("configured"), compiled a C
 * file in a configured one ("built"), or neither ("fresh").
 */
function noting(check: RepoCheck, spec: Project, log: string): RepoCheck {
  const out = `"$TMPDIR/build.out"`;
  const found = (pattern: RegExp) => `grep -Eq '${pattern.source}' ${out}`;
  const noted = (command: string, prefix: string) =>
    `sh -c '${command.replaceAll("'", "'\\''")}' >${out} 2>&1; code=$?; cat ${out}; if ${
      found(spec.configures)
    }; then echo ${prefix}configured >>'${log}'; elif ${
      found(spec.compiles)
    }; then echo ${prefix}built >>'${log}'; else echo ${prefix}fresh >>'${log}'; fi; exit $code`;
  return {
    ...check,
    command: noted(check.command, ""),
    // The seed of a claim's build definitions, built by finishline: "seed configured".
    ...(check.buildOnly ? { buildOnly: noted(check.buildOnly, "seed ") } : {}),
  };
}

/** The lines of `log` since the last call. */
function builds(log: string): () => Promise<string[]> {
  let seen = 0;
  return async () => {
    const lines = (await Deno.readTextFile(log)).trim().split("\n");
    const fresh = lines.slice(seen);
    seen = lines.length;
    return fresh;
  };
}

async function seedsOf(owner: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(tmpdir())) {
    if (entry.name.startsWith("finishline-build-") && entry.name.includes(owner)) {
      found.push(join(tmpdir(), entry.name));
    }
  }
  return found;
}

/** Every regular file below `dir`, by path. */
async function filesBelow(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const file = join(dir, entry.name);
    if (entry.isDirectory) found.push(...await filesBelow(file));
    else if (entry.isFile) found.push(file);
  }
  return found;
}

/**
 * The gate on the project's one detected check (noted in `log`), and a claim:
 * commit `files`, then check.
 */
function seededGate(
  setup: { repo: string; gitRepo: GitRepo; base: string; owner: string },
  found: RepoCheck,
  spec: Project,
  log: string,
  extra: Partial<ConstructorParameters<typeof RepoChecksChecker>[0]> = {},
) {
  const check: RepoCheck = {
    name: found.name,
    command: found.command,
    ...(found.runner ? { runner: found.runner } : {}),
    buildFolder: found.buildFolder,
    buildOnly: found.buildOnly,
  };
  const gate = new RepoChecksChecker({
    checks: [noting(check, spec, log)],
    timeoutMs: 300_000,
    owner: setup.owner,
    ...extra,
  });
  const claim = async (files: Record<string, string | null>) => {
    await gate.ready();
    await commit(setup.repo, files);
    return await gate.check(
      { cwd: setup.repo, git: { repo: setup.gitRepo, baseline: setup.base } } as never,
    );
  };
  return { gate, claim };
}

for (const spec of PROJECTS) {
  const missing = (await Promise.all(spec.tools.map(async (tool) => [tool, await installed(tool)])))
    .filter(([, found]) => !found);
  Deno.test({
    name: `the clean copy starts from the baseline's ${spec.name} build folder, and nothing else`,
    ignore: missing.length > 0 && Deno.env.get("CI") !== "true",
    async fn(t) {
      const owner = crypto.randomUUID();
      const { repo, gitRepo, base } = await project(spec);
      await using _repo = repo;
      await using logs = await tempDir("finishline-build-folder-log-");
      const log = join(logs.path, "builds.log");
      const since = builds(log);
      const detected = (await detectChecks(repo.path)).checks;
      assert.equal(detected.length, 1, JSON.stringify(detected));
      const [found] = detected;
      assert.equal(found.buildFolder, spec.name.toLowerCase());
      const { gate, claim } = seededGate(
        { repo: repo.path, gitRepo, base, owner },
        found,
        spec,
        log,
        // The proof of a passing change, with room for several mutants.
        { changedLines: { measure: true, budget: 50 } },
      );
      try {
        await gate.startBaseline(gitRepo, base);
        assert.deepEqual(await since(), ["configured"], "the baseline built the project");
        const [baselineSeed] = await seedsOf(owner);
        assert.ok(baselineSeed, "its build folder was taken");

        await t.step("a claim of the starting code compiles nothing", async () => {
          const result = await claim({});
          assert.equal(result.complete, true, result.feedback);
          assert.deepEqual(await since(), ["fresh"]);
        });

        await t.step("a changed source file is compiled again, and its bug found", async () => {
          const result = await claim({ "src/math.c": MATH_C("(a + b) * SCALE + OFFSET + 1") });
          assert.equal(result.complete, false);
          assert.match(result.feedback ?? "", new RegExp(`"${spec.failing}"`));
          // Red where the baseline was green: run again before it is called red, in the copy
          // made anew (the seed again): nothing the first run wrote in its build reaches it.
          assert.deepEqual(await since(), ["built", "built"]);
        });

        await t.step("back to the starting code: the bug's objects are gone", async () => {
          const result = await claim({ "src/math.c": MATH_C("(a + b) * SCALE + OFFSET") });
          assert.equal(result.complete, true, result.feedback);
          assert.deepEqual(await since(), ["fresh"]);
        });

        await t.step("a changed header recompiles what includes it", async () => {
          const result = await claim({ "src/math.h": MATH_H(2) });
          assert.equal(result.complete, false);
          assert.deepEqual((await since())[0], "built");
          await claim({ "src/math.h": MATH_H(1) });
          await since();
        });

        await t.step("a deleted source file is not stood in for by its object", async () => {
          const result = await claim({ "src/extra.c": null });
          assert.equal(result.complete, false, "the build refuses a missing source");
          await claim({ "src/extra.c": EXTRA_C });
          await since();
        });

        await t.step(
          "a changed build definition is configured once, from nothing: the kept folder would pass",
          async () => {
            const [file, text] = Object.entries(spec.build(1))[0];
            const result = await claim({ [file]: text });
            assert.equal(result.complete, false, "the new offset breaks add");
            assert.match(result.feedback ?? "", new RegExp(`"${spec.failing}"`));
            assert.match(
              (gate.evidence!.dependencyNotes ?? []).join("\n"),
              new RegExp(`You changed "${file}": finishline configured and built .* once`),
            );
            // Built by finishline from the new build file; the claim's own runs compile nothing.
            const runs = await since();
            assert.equal(runs[0], "seed configured", `${runs}`);
            assert.ok(runs.slice(1).every((run) => run === "fresh"), `${runs}`);
            // Put back: the baseline's seed serves again, nothing compiled.
            const back = await claim({ [file]: spec.build(0)[file] });
            assert.equal(back.complete, true, back.feedback);
            assert.deepEqual(await since(), ["fresh"]);
            // The same build file again, and a source changed: its seed serves, no configure.
            const again = await claim({
              [file]: text,
              "src/extra.c": `${EXTRA_C}/* again */\n`,
            });
            assert.equal(again.complete, false, "the new offset still breaks add");
            const rebuilt = await since();
            assert.equal(rebuilt[0], "built", `${rebuilt}`);
            assert.ok(!rebuilt.some((run) => run.includes("configured")), `${rebuilt}`);
            assert.match(
              (gate.evidence!.dependencyNotes ?? []).join("\n"),
              /built on finishline's build of your changed build definitions/,
            );
            await claim({ [file]: spec.build(0)[file], "src/extra.c": EXTRA_C });
            await since();
          },
        );

        await t.step(
          "a passing change's proof builds its mutants from the claim's build, not from nothing",
          async () => {
            const result = await claim({ "src/math.c": MATH_C("(b + a) * SCALE + OFFSET") });
            assert.equal(result.complete, true, result.feedback);
            const proof = gate.evidence!.changeProof!;
            assert.ok(proof.mutants.tried >= 1, JSON.stringify(proof.mutants));
            assert.ok(proof.mutants.killed >= 1, JSON.stringify(proof.mutants));
            // The claim's run, the proof's suite run, then one run per mutant: none configures.
            const runs = await since();
            assert.ok(runs.length >= 3, `${runs}`);
            assert.ok(!runs.includes("configured"), `${runs}`);
            await claim({ "src/math.c": MATH_C("(a + b) * SCALE + OFFSET") });
            await since();
          },
        );

        await t.step("a seed changed after it was taken is dropped", async () => {
          const seed = baselineSeed;
          // A forged test program would go here; any change at all drops the seed.
          const [file] = (await filesBelow(join(seed, "build"))).filter((path) =>
            /t_add$/.test(path)
          );
          assert.ok(file, "the seed holds the test program");
          await Deno.writeTextFile(file, "#!/bin/sh\nexit 0\n");
          const result = await claim({ "src/math.c": MATH_C("(a + b) * SCALE + OFFSET + 1") });
          assert.equal(result.complete, false, "built from nothing, the bug is found");
          assert.equal((await since())[0], "configured");
          assert.match(
            (gate.evidence!.dependencyNotes ?? []).join("\n"),
            /build folder\) changed after it was taken/,
          );
          assert.ok(!(await seedsOf(owner)).includes(seed), "the seed is removed");
        });
      } finally {
        await gate.close();
      }
      assert.deepEqual(await seedsOf(owner), []);
    },
  });
}

for (const spec of PROJECTS) {
  const missing = (await Promise.all(spec.tools.map(async (tool) => [tool, await installed(tool)])))
    .filter(([, found]) => !found);
  Deno.test({
    name:
      `a red baseline keeps its ${spec.name} build folder: a bug fix's claims compile what changed`,
    ignore: missing.length > 0 && Deno.env.get("CI") !== "true",
    async fn(t) {
      const owner = crypto.randomUUID();
      // The bug the task is about: the starting commit's test fails.
      const { repo, gitRepo, base } = await project(spec, "(a + b) * SCALE + OFFSET + 1");
      await using _repo = repo;
      await using logs = await tempDir("finishline-build-folder-log-");
      const log = join(logs.path, "builds.log");
      const since = builds(log);
      const [found] = (await detectChecks(repo.path)).checks;
      const { gate, claim } = seededGate(
        { repo: repo.path, gitRepo, base, owner },
        found,
        spec,
        log,
      );
      try {
        const baseline = await gate.startBaseline(gitRepo, base);
        assert.equal(baseline.runs[0].green, false, "the starting commit's test fails");
        assert.deepEqual(await since(), ["configured"]);
        assert.equal((await seedsOf(owner)).length, 1, "its build folder was taken all the same");
        // The red check's second run builds from nothing in a copy of its own.
        await gate.confirmBaseline();
        assert.deepEqual(await since(), ["configured"]);
        assert.equal((await gate.baseline())!.retries?.[0]?.green, false);

        await t.step(
          "a claim that changes no code compiles nothing, and is still red",
          async () => {
            const result = await claim({ "NOTES.md": "looked at it\n" });
            assert.equal(result.complete, false);
            assert.match(result.feedback ?? "", new RegExp(`"${spec.failing}"`));
            const runs = await since();
            assert.ok(!runs.includes("configured") && !runs.includes("built"), `${runs}`);
          },
        );

        await t.step(
          "a claim that changes another file compiles it, and the bug is found",
          async () => {
            const result = await claim({ "src/extra.c": `${EXTRA_C}/* tidied */\n` });
            assert.equal(result.complete, false);
            assert.match(result.feedback ?? "", new RegExp(`"${spec.failing}"`));
            const runs = await since();
            assert.equal(runs[0], "built", `${runs}`);
            assert.ok(!runs.includes("configured"), `${runs}`);
          },
        );

        await t.step("the fix compiles the changed file alone and passes", async () => {
          const result = await claim({ "src/math.c": MATH_C("(a + b) * SCALE + OFFSET") });
          assert.equal(result.complete, true, result.feedback);
          const runs = await since();
          assert.equal(runs[0], "built", `${runs}`);
          assert.ok(!runs.includes("configured"), `${runs}`);
        });
      } finally {
        await gate.close();
      }
      assert.deepEqual(await seedsOf(owner), []);
    },
  });
}

/**
 * A test program that plants, where a kept build folder would carry it to
 * the next claim's build, an object of `add` that passes, dated in the
 * future (make and ninja would take it as newer than any change), and
 * notes in `log` that it did.
 */
function poisoner(log: string): string {
  return [
    "#include <stdio.h>",
    "#include <stdlib.h>",
    "#include <string.h>",
    "int main(int argc, char **argv) {",
    "  char dir[4096], command[9000];",
    "  (void)argc;",
    '  snprintf(dir, sizeof dir, "%s", argv[0]);',
    "  char *slash = strrchr(dir, '/');",
    '  if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");',
    "  snprintf(command, sizeof command, \"cd '%s' && f=$(find . -name '*math.c.o' | head -n 1)" +
    " && echo 'int add(int a, int b) { return a + b; }' > poison.c && cc -c poison.c -o ${f:?}" +
    ` && touch -d 2099-01-01 $f && echo poisoned >> '%s'", dir, "${log}");`,
    "  return system(command) == 0 ? 0 : 0;",
    "}",
    "",
  ].join("\n");
}

for (const spec of PROJECTS) {
  const missing = (await Promise.all(spec.tools.map(async (tool) => [tool, await installed(tool)])))
    .filter(([, found]) => !found);
  Deno.test({
    name:
      `a claim's new ${spec.name} build definitions are built once by finishline, and its tests cannot poison later claims`,
    ignore: missing.length > 0 && Deno.env.get("CI") !== "true",
    async fn(t) {
      const owner = crypto.randomUUID();
      // Red at the start, so that no second run of a red claim builds on that claim's own build.
      const { repo, gitRepo, base } = await project(spec, "(a + b) * SCALE + OFFSET + 1");
      await using _repo = repo;
      await using logs = await tempDir("finishline-build-folder-log-");
      const log = join(logs.path, "builds.log");
      const lines = builds(log);
      const since = async () => (await lines()).filter((line) => line !== "poisoned");
      const [found] = (await detectChecks(repo.path)).checks;
      const { gate, claim } = seededGate(
        { repo: repo.path, gitRepo, base, owner },
        found,
        spec,
        log,
      );
      const [file] = Object.keys(spec.build(0));
      const withTest = { [file]: spec.build(0, true)[file], "tests/t_more.c": poisoner(log) };
      try {
        await gate.startBaseline(gitRepo, base);
        await gate.confirmBaseline();
        assert.deepEqual(await since(), ["configured", "configured"]);

        await t.step(
          "a claim that adds a test configures once, in finishline's build",
          async () => {
            const result = await claim(withTest);
            assert.equal(result.complete, false, "the bug is still there");
            assert.match(result.feedback ?? "", new RegExp(`"${spec.failing}"`));
            assert.match(
              (gate.evidence!.dependencyNotes ?? []).join("\n"),
              new RegExp(`You changed "${file}": finishline configured and built .* once`),
            );
            const runs = await since();
            assert.equal(runs[0], "seed configured", `${runs}`);
            assert.ok(!runs.slice(1).some((run) => run.includes("configured")), `${runs}`);
            const text = await Deno.readTextFile(log);
            assert.match(text, /poisoned/, "the claim's test wrote into the claim's build folder");
          },
        );

        await t.step(
          "a later claim with the same build definitions reuses that build, not the poisoned one",
          async () => {
            const result = await claim({
              ...withTest,
              "src/math.c": `${MATH_C("(a + b) * SCALE + OFFSET + 1")}/* looked again */\n`,
            });
            assert.equal(result.complete, false, "the planted object does not stand in for add");
            assert.match(result.feedback ?? "", new RegExp(`"${spec.failing}"`));
            const runs = await since();
            assert.equal(runs[0], "built", `${runs}`);
            assert.ok(!runs.some((run) => run.includes("configured")), `${runs}`);
          },
        );

        await t.step("the fix with the new test passes, built on the same seed", async () => {
          const result = await claim({
            ...withTest,
            "src/math.c": MATH_C("(a + b) * SCALE + OFFSET"),
          });
          assert.equal(result.complete, true, result.feedback);
          // The run with the starting commit's build file put back (it names the red test)
          // builds on the baseline's folder: neither configures.
          const runs = await since();
          assert.equal(runs[0], "built", `${runs}`);
          assert.ok(!runs.some((run) => run.includes("configured")), `${runs}`);
        });
      } finally {
        await gate.close();
      }
      assert.deepEqual(await seedsOf(owner), []);
    },
  });
}
