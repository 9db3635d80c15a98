import assert from "node:assert/strict";
import { join } from "node:path";
import { GitRepo } from "../../agents/git/repo.ts";
import { GitSettingsGuard } from "../../agents/git/settings.ts";
import { git, tempDir, tempRepo } from "../_helpers.ts";

/** Every file below a folder with its bytes and mode, to compare a folder before and after. */
async function tree(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (folder: string, prefix: string) => {
    for await (const entry of Deno.readDir(folder)) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) await walk(path, `${prefix}${entry.name}/`);
      else {
        const info = await Deno.lstat(path);
        files[`${prefix}${entry.name}`] = `${(info.mode ?? 0) & 0o777}:${await Deno.readTextFile(
          path,
        )}`;
      }
    }
  };
  await walk(dir, "");
  return files;
}

Deno.test("the git settings an agent changes are reported and put back byte for byte", async (t) => {
  await using repo = await tempRepo();
  // A config the user wrote by hand: comments and layout must survive.
  await Deno.writeTextFile(
    join(repo.path, ".git/config"),
    `${await Deno.readTextFile(
      join(repo.path, ".git/config"),
    )}# my aliases\n[alias]\n\tst = status\n`,
  );
  await Deno.writeTextFile(join(repo.path, ".git/hooks/pre-push"), "#!/bin/sh\nexit 0\n", {
    mode: 0o755,
  });
  const config = await Deno.readFile(join(repo.path, ".git/config"));
  const hooks = await tree(join(repo.path, ".git/hooks"));
  const info = await tree(join(repo.path, ".git/info"));
  const gitRepo = (await GitRepo.open(repo.path))!;
  const guard = (await GitSettingsGuard.capture(gitRepo))!;

  await t.step("nothing changed: nothing to say", async () => {
    assert.deepEqual(await guard.changes(), []);
  });

  await git(repo.path, "config", "core.hooksPath", "lib/hooks");
  await git(repo.path, "config", "--unset", "alias.st");
  await Deno.writeTextFile(join(repo.path, ".git/hooks/post-checkout"), "#!/bin/sh\nexit 1\n", {
    mode: 0o755,
  });
  await Deno.writeTextFile(join(repo.path, ".git/hooks/pre-push"), "#!/bin/sh\ncurl x\n");
  await Deno.chmod(join(repo.path, ".git/hooks/pre-push"), 0o700);
  await Deno.remove(join(repo.path, ".git/hooks/pre-commit.sample"));
  await Deno.writeTextFile(join(repo.path, ".git/info/exclude"), "tests/conftest.py\n", {
    append: true,
  });
  await Deno.writeTextFile(join(repo.path, ".git/info/attributes"), "* filter=x\n");

  await t.step("changes() says what changed and touches nothing", async () => {
    const changes = await guard.changes();
    assert.deepEqual(changes.map((change) => `${change.file} ${change.change}`), [
      ".git/config modified",
      ".git/hooks/post-checkout added",
      ".git/hooks/pre-commit.sample deleted",
      ".git/hooks/pre-push modified",
      ".git/info/attributes added",
      ".git/info/exclude modified",
    ]);
    assert.deepEqual(changes[0].settings, [
      "removed alias.st",
      "added core.hookspath = lib/hooks",
    ]);
    assert.equal(await git(repo.path, "config", "core.hooksPath"), "lib/hooks");
  });

  await t.step("restore() puts every file back as it was", async () => {
    const changes = await guard.restore();
    assert.equal(changes.length, 6);
    assert.ok(changes.every((change) => change.restored));
    assert.deepEqual(await Deno.readFile(join(repo.path, ".git/config")), config);
    assert.deepEqual(await tree(join(repo.path, ".git/hooks")), hooks);
    assert.deepEqual(await tree(join(repo.path, ".git/info")), info);
    assert.deepEqual(await guard.changes(), []);
  });
});

Deno.test("a worktree's config.worktree and an outside core.hooksPath are watched too", async () => {
  await using repo = await tempRepo();
  await using outside = await tempDir("finishline-hooks-");
  await Deno.writeTextFile(join(outside.path, "pre-commit"), "#!/bin/sh\nexit 0\n", {
    mode: 0o755,
  });
  await git(repo.path, "config", "core.hooksPath", outside.path);
  await using worktrees = await tempDir("finishline-wt-");
  const worktree = join(worktrees.path, "wt");
  await git(repo.path, "worktree", "add", "-q", "-b", "work", worktree);
  const gitRepo = (await GitRepo.open(worktree))!;
  const guard = (await GitSettingsGuard.capture(gitRepo))!;
  await git(worktree, "config", "extensions.worktreeConfig", "true");
  await git(worktree, "config", "--worktree", "core.fsmonitor", "./watch.sh");
  await Deno.writeTextFile(join(outside.path, "pre-commit"), "#!/bin/sh\nexit 1\n");
  const changes = await guard.restore();
  const worktreeConfig = changes.find((change) => change.file.endsWith("config.worktree"));
  assert.equal(worktreeConfig?.change, "added");
  assert.deepEqual(worktreeConfig?.settings, ["added core.fsmonitor = ./watch.sh"]);
  const hook = join(await Deno.realPath(outside.path), "pre-commit");
  assert.equal(changes.find((change) => change.file === hook)?.change, "modified");
  assert.equal(
    await Deno.readTextFile(join(outside.path, "pre-commit")),
    "#!/bin/sh\nexit 0\n",
  );
  await assert.rejects(git(worktree, "config", "--get", "extensions.worktreeConfig"));
});

Deno.test("finishline's own upstream of the run's branch is neither reported nor undone", async () => {
  await using repo = await tempRepo();
  const gitRepo = (await GitRepo.open(repo.path))!;
  const guard = (await GitSettingsGuard.capture(gitRepo, { ownBranch: "finishline/x/1" }))!;
  await git(repo.path, "config", "branch.finishline/x/1.remote", "origin");
  await git(repo.path, "config", "branch.finishline/x/1.merge", "refs/heads/finishline/x/1");
  assert.deepEqual(await guard.restore(), []);
  await git(repo.path, "config", "core.hooksPath", "lib/hooks");
  const changes = await guard.restore();
  assert.deepEqual(changes[0].settings, ["added core.hookspath = lib/hooks"]);
  assert.equal(await git(repo.path, "config", "branch.finishline/x/1.remote"), "origin");
  await assert.rejects(git(repo.path, "config", "--get", "core.hooksPath"));
});
