/**
 * A copy's kept build folders, with a stand-in for a build (a stamp file in
 * the folder the check is given): the seed's folder is planted in the copy
 * it was built in and nowhere else, and a work tree whose build definitions
 * are not the seed commit's (a commit's, or a file written after the move)
 * gets an empty folder, the check building from nothing.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CheckWorktree } from "../../../agents/evidence/copy/worktree_run.ts";
import type { RepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { settleTimes } from "../../../agents/evidence/copy/build_seed.ts";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";

/** Says whether its folder held a build: "kept" when the stamp is there, else "fresh" (and stamps it). */
const BUILD: RepoCheck = {
  name: "stand-in build",
  command: `test -n "$FINISHLINE_BUILD_DIR" || exit 3; ` +
    `if test -f "$FINISHLINE_BUILD_DIR/stamp"; then echo kept; ` +
    `else echo fresh; touch "$FINISHLINE_BUILD_DIR/stamp"; fi`,
  buildFolder: "meson",
};

async function said(worktree: CheckWorktree): Promise<string> {
  const [run] = await worktree.run([BUILD], { timeoutMs: 30_000 });
  assert.equal(run.green, true, run.tail);
  return run.tail.trim();
}

Deno.test("a kept build folder serves only the copy it was built in, with the seed's build definitions", async (t) => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(join(repo.path, "meson.build"), "project('a', 'c')\n");
  await Deno.writeTextFile(join(repo.path, "a.c"), "int a;\n");
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const base = (await gitRepo.head())!;
  const commit = async (file: string, text: string) => {
    await Deno.writeTextFile(join(repo.path, file), text);
    await git(repo.path, "commit", "-qam", `change ${file}`);
    return (await gitRepo.head())!;
  };
  const source = await commit("a.c", "int a = 1;\n");
  const definition = await commit("meson.build", "project('a', 'c', version: '2')\n");

  const built = await CheckWorktree.create(gitRepo, base);
  assert.ok(built instanceof CheckWorktree, String(built));
  const elsewhere = await CheckWorktree.create(gitRepo, base);
  assert.ok(elsewhere instanceof CheckWorktree, String(elsewhere));
  try {
    assert.equal(await settleTimes(built.objects, undefined, base), undefined);
    assert.equal(await said(built), "fresh", "the baseline builds from nothing");
    const folder = (await built.buildFolder(BUILD))!;
    assert.ok(folder.startsWith(`${built.folder}/build/`), folder);
    assert.ok(!folder.startsWith(built.dir), "beside the work tree, out of the commit's reach");
    const seed = (await built.takeSeed(base, { cargo: [], checks: [BUILD] }))!;
    assert.ok(seed, "the build folder is taken");
    try {
      await t.step("planted in the copy it was built in", async () => {
        assert.equal(await built.moveTo(source), undefined);
        assert.equal(await built.seedWith(seed), true);
        assert.deepEqual(await built.readyBuildFolders([BUILD]), []);
        assert.equal(await said(built), "kept");
      });

      await t.step(
        "never in another copy: it records the folder it was configured in",
        async () => {
          assert.equal(seed.plantsIn(elsewhere.folder), false);
          assert.equal(await elsewhere.seedWith(seed), false);
          assert.equal(await said(elsewhere), "fresh");
          assert.equal(seed.usable, true, "still the seed of the copy it was built in");
        },
      );

      await t.step("a commit that changes a build definition builds from nothing", async () => {
        assert.equal(await built.moveTo(definition), undefined);
        assert.deepEqual(await built.readyBuildFolders([BUILD]), [{
          check: BUILD.name,
          system: "meson",
          files: ["meson.build"],
        }]);
        assert.equal(await said(built), "fresh");
      });

      await t.step("each move starts from the seed again", async () => {
        assert.equal(await built.moveTo(source), undefined);
        assert.equal(await said(built), "kept");
        // The stamp the last claim's check wrote is not the seed's: gone at the move.
        await Deno.writeTextFile(join((await built.buildFolder(BUILD))!, "claim"), "x");
        assert.equal(await built.moveTo(source), undefined);
        assert.equal(
          await Deno.stat(join((await built.buildFolder(BUILD))!, "claim")).catch(() => undefined),
          undefined,
        );
      });

      await t.step(
        "a build definition written after the move (a file put back, a held-out test's) empties it",
        async () => {
          assert.equal(await built.moveTo(source), undefined);
          await Deno.mkdir(join(built.dir, "tests"));
          await Deno.writeTextFile(join(built.dir, "tests", "meson.build"), "test('t', exe)\n");
          assert.equal(await said(built), "fresh");
          assert.equal(await built.moveTo(source), undefined);
          await Deno.writeTextFile(join(built.dir, "meson.build"), "project('b', 'c')\n");
          assert.equal(await said(built), "fresh");
          // Back to the seed commit's bytes: its folder serves again.
          assert.equal(await built.moveTo(source), undefined);
          assert.equal(await said(built), "kept");
        },
      );

      await t.step(
        "a copy planted while the agent works and written into after is copied again",
        async () => {
          assert.equal(await built.moveTo(source), undefined);
          await built.tidy();
          const folder = join(built.folder, "build");
          const [name] = [...Deno.readDirSync(folder)].map((entry) => entry.name);
          await Deno.writeTextFile(join(folder, name, "forged"), "x");
          assert.equal(await built.moveTo(source), undefined);
          assert.equal(
            await Deno.stat(join(folder, name, "forged")).catch(() => undefined),
            undefined,
          );
          assert.equal(await said(built), "kept");
        },
      );

      await t.step("a commit that changes a source file keeps the folder", async () => {
        assert.equal(await built.moveTo(source), undefined);
        assert.deepEqual(await built.readyBuildFolders([BUILD]), []);
        assert.equal(await said(built), "kept");
      });
    } finally {
      await seed.remove();
    }
  } finally {
    await built.remove();
    await elsewhere.remove();
  }
});

Deno.test("a claim made before the baseline ended moves to the baseline's copy, where its build folders were built", async () => {
  await using repo = await tempRepo();
  await using logs = await tempDir("finishline-build-folders-");
  const log = join(logs.path, "runs.log");
  const slow = join(logs.path, "slow");
  await Deno.writeTextFile(join(repo.path, "meson.build"), "project('a', 'c')\n");
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const base = (await gitRepo.head())!;
  // Notes whether its folder held a build, and which copy's folder it was; slow while asked.
  const check: RepoCheck = {
    ...BUILD,
    command: `d="$FINISHLINE_BUILD_DIR"; test -n "$d" || exit 3; ` +
      `if test -f "$d/stamp"; then s=kept; else s=fresh; touch "$d/stamp"; fi; ` +
      `echo "$s \${d%/build/*}" >>'${log}'; ` +
      `while test -e '${slow}'; do sleep 0.1; done`,
  };
  const runs = async () => (await Deno.readTextFile(log).catch(() => "")).trim().split("\n");
  const gate = new RepoChecksChecker({ checks: [check], timeoutMs: 60_000 });
  const context = { cwd: repo.path, git: { repo: gitRepo, baseline: base } } as never;
  try {
    await Deno.writeTextFile(slow, "");
    const baseline = gate.startBaseline(gitRepo, base);
    while ((await runs())[0] === "") await new Promise((done) => setTimeout(done, 100));
    await git(repo.path, "commit", "-qm", "a claim", "--allow-empty");
    // The baseline is still running: the claim gets a copy of its own.
    const early = gate.check(context);
    while ((await runs()).length < 2) await new Promise((done) => setTimeout(done, 100));
    await Deno.remove(slow);
    assert.equal((await early).complete, true);
    await baseline;
    await gate.ready();
    await git(repo.path, "commit", "-qm", "the next claim", "--allow-empty");
    assert.equal((await gate.check(context)).complete, true);
    const [atBaseline, first, next] = (await runs()).map((line) => line.split(" "));
    assert.equal(atBaseline[0], "fresh");
    assert.equal(first[0], "fresh", "no seed yet");
    assert.notEqual(first[1], atBaseline[1], "a copy of its own");
    assert.deepEqual(next, ["kept", atBaseline[1]], "the baseline's copy, its build folder kept");
    assert.equal(await Deno.stat(first[1]).catch(() => undefined), undefined, "the other is gone");
  } finally {
    await gate.close();
  }
});

Deno.test("without a seed, the files get the times a seed would: make sees a shipped manual as made from its source", async () => {
  await using repo = await tempRepo();
  // As GNU Hello ships doc/hello.info beside doc/hello.texi: make remakes it (with makeinfo,
  // rarely installed) when the source looks newer, as a checkout may write it.
  await Deno.writeTextFile(join(repo.path, "rules.mk"), "a.info: z.texi\n\tfalse\n");
  await Deno.writeTextFile(join(repo.path, "a.info"), "manual\n");
  await Deno.writeTextFile(join(repo.path, "z.texi"), "source\n");
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const base = (await gitRepo.head())!;
  await Deno.writeTextFile(join(repo.path, "z.texi"), "source, changed\n");
  await git(repo.path, "commit", "-qam", "the source changed");
  const changed = (await gitRepo.head())!;
  const upToDate = async (worktree: CheckWorktree) => {
    const [run] = await worktree.run([{
      name: "make -q",
      command: "make -q -f rules.mk a.info",
      buildFolder: "autotools",
    }], { timeoutMs: 30_000 });
    return run.green;
  };
  const copy = await CheckWorktree.create(gitRepo, base);
  assert.ok(copy instanceof CheckWorktree, String(copy));
  try {
    // The checkout wrote the source a tick after the manual.
    await Deno.utime(join(copy.dir, "a.info"), new Date(1_000_000), new Date(1_000_000));
    assert.equal(await upToDate(copy), false);
    await copy.keepTimes(base);
    assert.equal(await upToDate(copy), true);
    // A commit that changes the source: the manual must be made again, as from nothing.
    assert.equal(await copy.moveTo(changed), undefined);
    assert.equal(await upToDate(copy), false);
  } finally {
    await copy.remove();
  }
});
