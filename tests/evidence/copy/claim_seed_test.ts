/**
 * The seed of a claim's build definitions, without a build tool: the commit
 * finishline makes of the starting commit with the claim's build files and
 * added files put in, and which later claims it serves (those that hold
 * each of those files byte for byte and no other changed build definition).
 * Also which kept folders a red baseline gives its seed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CheckWorktree } from "../../../agents/evidence/copy/worktree_run.ts";
import { seedOverlay, servesClaim } from "../../../agents/evidence/copy/claim_seed.ts";
import type { CheckRun, RepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { buildEntry } from "../../../agents/evidence/copy/build_folders.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempRepo } from "../../_helpers.ts";

async function commit(dir: string, files: Record<string, string | null>): Promise<string> {
  for (const [file, text] of Object.entries(files)) {
    if (text === null) await Deno.remove(join(dir, file));
    else await Deno.writeTextFile(join(dir, file), text);
  }
  await git(dir, "add", "-A");
  await git(dir, "commit", "-qm", "work", "--allow-empty");
  return (await (await GitRepo.open(dir))!.head())!;
}

Deno.test("a claim's build seed is its build files and added files on the starting commit, for claims that hold them", async (t) => {
  await using repo = await tempRepo();
  const base = await commit(repo.path, {
    "meson.build": "project('a', 'c')\n",
    "a.c": "int a;\n",
    "old.c": "int old;\n",
  });
  const gitRepo = (await GitRepo.open(repo.path))!;
  const copy = await CheckWorktree.create(gitRepo, base);
  assert.ok(copy instanceof CheckWorktree);
  try {
    const systems = new Set(["meson" as const]);
    const claimed = await commit(repo.path, {
      "meson.build": "project('a', 'c')\ntest('t', executable('t', 't.c'))\n",
      "t.c": "int main(void) { return 0; }\n",
      "a.c": "int a = 1;\n",
      "old.c": null,
    });
    assert.equal(await copy.objects.fetch([base, claimed]), undefined);
    const overlay = (await seedOverlay(copy.objects, { base, head: claimed, systems }))!;
    // The changed source and the removed one stay the starting commit's: not put in.
    assert.deepEqual(overlay, ["meson.build", "t.c"]);
    const made = await copy.objects.compose(base, claimed, overlay);
    assert.equal(typeof made, "string", JSON.stringify(made));
    const seed = made as string;
    assert.equal(await copy.objects.compose(base, claimed, overlay), seed, "the same commit again");

    await t.step("the commit holds the starting commit's files with those put in", async () => {
      assert.equal(await copy.moveTo(seed), undefined, "checked out and verified");
      const read = (file: string) => Deno.readTextFile(join(copy.dir, file));
      assert.equal(await read("a.c"), "int a;\n");
      assert.equal(await read("old.c"), "int old;\n");
      assert.match(await read("meson.build"), /test\('t'/);
      assert.equal(await read("t.c"), "int main(void) { return 0; }\n");
    });

    const serves = async (head: string) => {
      assert.equal(await copy.objects.fetch([head]), undefined);
      return await servesClaim(copy.objects, seed, { base, head, systems });
    };
    await t.step("it serves the claim, and a later one that changes a source", async () => {
      assert.equal(await serves(claimed), true);
      assert.equal(await serves(await commit(repo.path, { "a.c": "int a = 2;\n" })), true);
    });
    await t.step(
      "not a claim whose added file differs: it ran while the seed was built",
      async () => {
        assert.equal(
          await serves(await commit(repo.path, { "t.c": "int main(void) { return 1; }\n" })),
          false,
        );
        await commit(repo.path, { "t.c": "int main(void) { return 0; }\n" });
      },
    );
    await t.step("not a claim with another build definition changed or added", async () => {
      await Deno.mkdir(join(repo.path, "sub"));
      assert.equal(await serves(await commit(repo.path, { "sub/meson.build": "# more\n" })), false);
      await commit(repo.path, { "sub/meson.build": null });
    });
    await t.step(
      "the starting commit's seed serves a claim that keeps its build files only",
      async () => {
        const source = await commit(repo.path, {
          "meson.build": "project('a', 'c')\n",
          "t.c": null,
        });
        await copy.objects.fetch([source]);
        assert.equal(await servesClaim(copy.objects, base, { base, head: source, systems }), true);
        assert.equal(
          await servesClaim(copy.objects, base, { base, head: claimed, systems }),
          false,
        );
      },
    );
  } finally {
    await copy.remove();
  }
});

Deno.test("a red baseline's folder joins the seed when its configure completed, not when it timed out or failed", async () => {
  await using repo = await tempRepo();
  const base = await commit(repo.path, { "meson.build": "project('a', 'c')\n" });
  const gitRepo = (await GitRepo.open(repo.path))!;
  const copy = await CheckWorktree.create(gitRepo, base);
  assert.ok(copy instanceof CheckWorktree);
  try {
    const check = (name: string): RepoCheck => ({ name, command: "true", buildFolder: "meson" });
    const [configured, unconfigured, timedOut] = ["configured", "half", "slow"].map(check);
    for (const each of [configured, timedOut]) {
      const dir = join(copy.folder, await buildEntry(each));
      await Deno.mkdir(join(dir, "meson-private"), { recursive: true });
      await Deno.writeTextFile(join(dir, "meson-private", "coredata.dat"), "");
      await Deno.writeTextFile(join(dir, "build.ninja"), "");
    }
    // A set-up that failed half-way: meson's logs, no build.ninja.
    await Deno.mkdir(join(copy.folder, await buildEntry(unconfigured), "meson-logs"), {
      recursive: true,
    });
    const red = (name: string, timed = false): CheckRun =>
      ({ name, green: false, code: 1, timedOut: timed, failing: ["t"], tail: "" }) as never;
    const built = await copy.builtFolders([configured, unconfigured, timedOut], [
      red("configured"),
      red("half"),
      red("slow", true),
    ]);
    assert.deepEqual(built.map((each) => each.name), ["configured"]);
  } finally {
    await copy.remove();
  }
});
