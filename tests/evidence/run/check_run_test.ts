import assert from "node:assert/strict";
import {
  type CheckRun,
  describeCheckEnvironment,
  describeRun,
  runRepoCheck,
} from "../../../agents/evidence/run/check_run.ts";
import { listAndRunChecks } from "../../../agents/iterator/run/checks_setup.ts";
import { tempDir, tempRepo } from "../../_helpers.ts";
import { definitionOf } from "../../checks/_helpers.ts";

function red(failing: string[], extra: Partial<CheckRun> = {}): CheckRun {
  return {
    name: "npm test",
    green: false,
    code: 1,
    timedOut: false,
    failing,
    durationMs: 5,
    tail: "",
    ...extra,
  };
}

Deno.test("describeRun names what failed and how", async (t) => {
  await t.step("twenty failing tests, then how many more", () => {
    const names = Array.from({ length: 25 }, (_, i) => `test ${i + 1}`);
    const text = describeRun(red(names));
    assert.match(text, /"test 20" and 5 more\. It printed nothing$/);
    assert.ok(!text.includes('"test 21"'));
  });

  await t.step("an exit of 0 with failures counted says so", () => {
    assert.equal(
      describeRun(red([], { code: 0, counts: { failed: 1 } })),
      "; it exited 0 but its output reports 1 failed test. It printed nothing",
    );
  });

  await t.step("a timeout is named before anything else", () => {
    assert.match(describeRun(red([], { code: 124, timedOut: true })), /^; it timed out\./);
  });

  await t.step("against a green baseline every failure is new", () => {
    assert.equal(
      describeRun(red(["adds"]), red([], { green: true, code: 0 })),
      '; it exited with code 1; new failures (not failing before your changes): "adds". It printed nothing',
    );
  });

  await t.step("against a red baseline new and old failures are told apart", () => {
    assert.equal(
      describeRun(red(["adds", "divides", "rounds"]), red(["divides"])),
      '; it exited with code 1; new failures (not failing before your changes): "adds", "rounds"; ' +
        'failing before your changes too: "divides". It printed nothing',
    );
  });

  await t.step("a red baseline that named nothing cannot tell them apart", () => {
    assert.equal(
      describeRun(red(["adds"]), red([])),
      '; it exited with code 1; failing tests: "adds". It printed nothing',
    );
  });
});

Deno.test("the checks command names the variables finishline sets", async () => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ name: "sample", scripts: { test: "node -e 0" } }),
  );
  let printed = "";
  const code = await listAndRunChecks(repo.path, definitionOf(), (text) => printed += text);
  assert.equal(code, 0, printed);
  // The toolchains' caches are listed where they exist, and a test running beside this one
  // may create one (Go's build cache) meanwhile: the rest is printed as described.
  const fixed = (text: string) =>
    text.split("\n").filter((line) => !/the user's real one/.test(line)).join("\n");
  assert.ok(fixed(printed).includes(`\n${fixed(describeCheckEnvironment())}\n`), printed);
  assert.match(printed, /^Environment: yours, with these set for every check/m);
  for (
    const name of ["CI", "HOME", "PYTHONNOUSERSITE", "PYTHONPYCACHEPREFIX", "GIT_CONFIG_GLOBAL"]
  ) {
    assert.match(printed, new RegExp(`^  ${name}=[^:]+: \\w`, "m"), name);
  }
});

Deno.test("a test named by the path of the copy it ran in is named relative to it", async () => {
  // node --test names a test file that fails as a whole by its absolute path
  // (Node 20 on a .ts file): each clean copy is another folder, the test is the same.
  await using dir = await tempDir("finishline-names-");
  const real = await Deno.realPath(dir.path);
  const run = await runRepoCheck(
    {
      name: "node --test",
      command: [
        "echo 'TAP version 13'",
        `echo '# Subtest: ${real}/mod.test.ts'`,
        `echo 'not ok 1 - ${real}/mod.test.ts'`,
        "echo '1..1'",
        "exit 1",
      ].join("; "),
      runner: "node",
    },
    { cwd: dir.path, timeoutMs: 30_000 },
  );
  assert.deepEqual(run.failing, ["mod.test.ts"]);
});
