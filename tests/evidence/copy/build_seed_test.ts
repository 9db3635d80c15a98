/**
 * The clean copy starts from what the baseline built, on a real Cargo crate
 * with a build script: a claim of the starting commit's code builds nothing,
 * a claim that changes a file rebuilds and fails as it must, what one
 * claim's checks leave in `target` never reaches the next, and a seed
 * changed after the baseline took it is not used.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { BuildSeed } from "../../../agents/evidence/copy/build_seed.ts";
import { removeStaleWorktrees } from "../../../agents/evidence/copy/worktree_run.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";
import { copiesOf } from "./_copies.ts";

const LIB = (body: string) => `pub fn add(a: i32, b: i32) -> i32 {\n    ${body}\n}\n`;
const TEST = `#[test]\nfn adds() {\n    assert_eq!(seedy::add(2, 2), 4);\n}\n`;
/** A test that leaves a file in `target`, as a claim's tests could, to stand in for a later claim. */
const PLANTER = `#[test]\nfn plants() {\n    std::fs::write("target/planted", "x").unwrap();\n}\n`;

/** The check appends to `log` (outside the copy) whether Cargo compiled the crate again. */
const cargoTest = (log: string) =>
  `cargo test --offline >cargo.out 2>&1; code=$?; cat cargo.out; if grep -q 'Compiling seedy' cargo.out; then echo built >>'${log}'; else echo fresh >>'${log}'; fi; exit $code`;

async function crate() {
  const repo = await tempRepo();
  await Deno.mkdir(join(repo.path, "src"));
  await Deno.mkdir(join(repo.path, "tests"));
  await Deno.writeTextFile(
    join(repo.path, "Cargo.toml"),
    '[package]\nname = "seedy"\nversion = "0.1.0"\nedition = "2021"\nbuild = "build.rs"\n',
  );
  // A build script without rerun-if-changed: Cargo then fingerprints every file's time.
  await Deno.writeTextFile(join(repo.path, "build.rs"), "fn main() {}\n");
  await Deno.writeTextFile(join(repo.path, "src/lib.rs"), LIB("a + b"));
  await Deno.writeTextFile(join(repo.path, "tests/add.rs"), TEST);
  await Deno.writeTextFile(join(repo.path, ".gitignore"), "/target\nCargo.lock\ncargo.out\n");
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

function context(dir: string, repo: GitRepo, base: string) {
  return { cwd: dir, git: { repo, baseline: base } } as never;
}

/** What the cargo check said about the crate at each run since the last call: built or fresh. */
function builds(log: string): () => Promise<string[]> {
  let seen = 0;
  return async () => {
    const lines = (await Deno.readTextFile(log)).trim().split("\n");
    const fresh = lines.slice(seen);
    seen = lines.length;
    return fresh;
  };
}

/**
 * The build seeds in the temp folder. TMPDIR is left alone: test files run
 * side by side in one process, and a folder of theirs made under a TMPDIR of
 * this test's would go when this test's does.
 */
async function seeds(): Promise<string[]> {
  const tmp = tmpdir();
  const found: string[] = [];
  for await (const entry of Deno.readDir(tmp)) {
    if (entry.name.startsWith("finishline-build-")) found.push(join(tmp, entry.name));
  }
  return found.sort();
}

const cargo = await new Deno.Command("cargo", { args: ["--version"] }).output().then(
  (out) => out.success,
  () => false,
);

Deno.test({
  name: "the clean copy starts from the baseline's Cargo build, and nothing else",
  ignore: !cargo && Deno.env.get("CI") !== "true",
  async fn(t) {
    // The run this gate belongs to names its seeds: other tests' seeds are not this one's.
    const owner = crypto.randomUUID();
    const ours = async () => (await seeds()).filter((seed) => seed.includes(owner));
    {
      const { repo, gitRepo, base } = await crate();
      await using _repo = repo;
      await using logs = await tempDir("finishline-seed-log-");
      const log = join(logs.path, "builds.log");
      const since = builds(log);
      const gate = new RepoChecksChecker({
        checks: [
          // Also notes which copy of the seed the claim ran with (the inode of its target).
          {
            name: "nothing planted",
            command:
              `test ! -e target/planted && { stat -c '%i %z' target >>'${log}.inodes' 2>/dev/null || true; }`,
          },
          { name: "cargo test", command: cargoTest(log), runner: "cargo" },
        ],
        timeoutMs: 300_000,
        owner,
      });
      try {
        await gate.startBaseline(gitRepo, base);
        assert.equal((await ours()).length, 1, "the baseline's target was taken");
        assert.deepEqual(await since(), ["built"], "the baseline built the crate");

        await t.step("a claim of the starting commit's code builds nothing", async () => {
          await commit(repo.path, {});
          const first = await gate.check(context(repo.path, gitRepo, base));
          assert.equal(first.complete, true, first.feedback);
          assert.deepEqual(await since(), ["fresh"]);
        });

        await t.step("a changed file is compiled again, and its bug is found", async () => {
          await commit(repo.path, { "src/lib.rs": LIB("a + b + 1") });
          const broken = await gate.check(context(repo.path, gitRepo, base));
          assert.equal(broken.complete, false);
          // Red where the baseline was green: run a second time before it is called red, in the
          // copy made anew from the seed (the changed file compiled again).
          assert.deepEqual(await since(), ["built", "built"]);
          assert.deepEqual(gate.evidence!.checks[1].failing, ["adds"]);
        });

        await t.step("back to the starting code, fresh again", async () => {
          await commit(repo.path, { "src/lib.rs": LIB("a + b") });
          assert.equal((await gate.check(context(repo.path, gitRepo, base))).complete, true);
          assert.deepEqual(await since(), ["fresh"]);
        });

        await t.step("what one claim's tests leave in target never reaches the next", async () => {
          await commit(repo.path, { "tests/plant.rs": PLANTER });
          assert.equal((await gate.check(context(repo.path, gitRepo, base))).complete, true);
          await since();
          await commit(repo.path, { "tests/plant.rs": null });
          const next = await gate.check(context(repo.path, gitRepo, base));
          assert.equal(next.complete, true, next.feedback);
          assert.deepEqual(await since(), ["fresh"]);
        });

        await t.step(
          "the seed copied in while the agent works is used only as it was",
          async () => {
            await commit(repo.path, {});
            assert.equal((await gate.check(context(repo.path, gitRepo, base))).complete, true);
            await since();
            await gate.ready();
            const copy = await copiesOf(base);
            assert.equal(copy.length, 1, "one clean copy");
            const planted = join(copy[0], "target", "planted");
            // Its inode and change time (to the nanosecond): a copy made later differs.
            const target = async () =>
              new TextDecoder().decode(
                (await new Deno.Command("stat", { args: ["-c", "%i %z", join(copy[0], "target")] })
                  .output()).stdout,
              ).trim();
            const ranWith = async () =>
              (await Deno.readTextFile(`${log}.inodes`)).trim().split("\n").at(-1);
            // Planted ahead, then written into: the claim after copies the seed again.
            const forged = await target();
            await Deno.writeTextFile(planted, "forged between claims");
            await commit(repo.path, {});
            const next = await gate.check(context(repo.path, gitRepo, base));
            assert.equal(next.complete, true, next.feedback);
            assert.deepEqual(await since(), ["fresh"]);
            assert.notEqual(await ranWith(), forged, "the seed was copied again");
            // Planted ahead and untouched: used as it is, and the crate is still fresh.
            await gate.ready();
            const ahead = await target();
            await commit(repo.path, {});
            assert.equal((await gate.check(context(repo.path, gitRepo, base))).complete, true);
            assert.deepEqual(await since(), ["fresh"]);
            assert.equal(await ranWith(), ahead, "the copy made ahead was used");
          },
        );

        await t.step("a seed changed after it was taken is dropped", async () => {
          const [seed] = await ours();
          // A forged test binary would go here; any change at all drops the seed.
          await Deno.writeTextFile(join(seed, "tree", "target", "forged"), "x");
          await commit(repo.path, {});
          const claimed = await gate.check(context(repo.path, gitRepo, base));
          assert.equal(claimed.complete, true, claimed.feedback);
          assert.deepEqual(await since(), ["built"]);
          assert.match(
            (gate.evidence!.dependencyNotes ?? []).join("\n"),
            /changed after it was taken/,
          );
          assert.deepEqual(await ours(), [], "the seed is removed");
        });
      } finally {
        await gate.close();
      }
      assert.deepEqual(await ours(), []);
    }
  },
});

Deno.test("the seeds of a repository's dead runs are removed; live runs' and other repositories' stay", async () => {
  await using repo = await tempRepo();
  await using other = await tempRepo();
  const gitRepo = (await GitRepo.open(repo.path))!;
  const otherRepo = (await GitRepo.open(other.path))!;
  const made: string[] = [];
  const seedOf = async (root: string, run: string) => {
    const built = await Deno.makeTempDir();
    await Deno.mkdir(join(built, "target"));
    await Deno.writeTextFile(join(built, "target", "app"), "binary");
    const seed =
      (await BuildSeed.take(built, "0123abcd", ["target"], { owner: { repo: root, run } }))!;
    await Deno.remove(built, { recursive: true });
    made.push(seed.dir);
    return seed.dir;
  };
  const dead = await seedOf(gitRepo.root, "3f2b6c1e-dead-4a5b-9c8d-000000000001");
  const live = await seedOf(gitRepo.root, "3f2b6c1e-live-4a5b-9c8d-000000000002");
  const elsewhere = await seedOf(otherRepo.root, "3f2b6c1e-dead-4a5b-9c8d-000000000003");
  try {
    const asked: string[] = [];
    await removeStaleWorktrees(gitRepo, (run) => {
      asked.push(run);
      return Promise.resolve(run.includes("-dead-"));
    });
    const exists = (dir: string) => Deno.stat(dir).then(() => true, () => false);
    assert.equal(await exists(dead), false, "the dead run's seed is gone");
    assert.equal(await exists(live), true, "a live run's seed stays");
    assert.equal(await exists(elsewhere), true, "another repository's runs are not judged here");
    assert.ok(!asked.some((run) => run.endsWith("3")), `asked about ${asked}`);
  } finally {
    for (const dir of made) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
