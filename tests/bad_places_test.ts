/**
 * Places a run cannot work in: a bare repository, the inside of a `.git`
 * folder, `--worktree` outside git or before the first commit, a read-only
 * checkout and a full disk. Each is one line, exit 2, and nothing written.
 * The read-only and full cases mount a small tmpfs (they need root, as the
 * CI machine has; elsewhere they are skipped, and say so).
 */

import assert from "node:assert/strict";
import { ScriptedModelServer } from "../agents/testing/mod.ts";
import { git, runCli, tempDir } from "./_helpers.ts";

/** Every path under `root` (the `.git` folder left out), relative. */
async function contents(root: string, skip = ".git"): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (prefix === "" && entry.name === skip) continue;
      found.push(`${prefix}${entry.name}`);
      if (entry.isDirectory) await walk(`${dir}/${entry.name}`, `${prefix}${entry.name}/`);
    }
  };
  await walk(root, "");
  return found.sort();
}

async function refused(
  cwd: string,
  args: string[],
  message: RegExp,
  server?: ScriptedModelServer,
): Promise<void> {
  const run = await runCli(args, { cwd, server });
  assert.equal(run.code, 2, run.stderr);
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0], message);
}

Deno.test("a bare repository and a .git folder have no working tree: refused before anything is written", async () => {
  await using dir = await tempDir("finishline-bare-");
  await git(dir.path, "init", "-q", "--bare", "repo.git");
  const bare = `${dir.path}/repo.git`;
  const before = await contents(bare, "");
  await refused(bare, ["--task", "x"], /is a bare git repository, which has no working tree/);
  assert.deepEqual(await contents(bare, ""), before, "nothing written into git's own files");
  await git(dir.path, "init", "-q", "work");
  await git(`${dir.path}/work`, "commit", "-q", "--allow-empty", "-m", "start");
  const inside = `${dir.path}/work/.git`;
  const gitFiles = await contents(inside, "");
  await refused(inside, ["--task", "x"], /is inside a \.git folder, which has no working tree/);
  assert.deepEqual(await contents(inside, ""), gitFiles);
});

Deno.test("--worktree outside git, or in a repository with no commit, writes nothing", async () => {
  await using plain = await tempDir("finishline-plain-");
  await refused(
    plain.path,
    ["--worktree", "--task", "x"],
    /^finishline: Flag "--worktree" needs a git repository, and ".*" is not in one$/,
  );
  assert.deepEqual(await contents(plain.path), []);
  await using empty = await tempDir("finishline-nocommit-");
  await git(empty.path, "init", "-q");
  await refused(
    empty.path,
    ["--worktree", "--task", "x"],
    /^finishline: Flag "--worktree" needs a commit to branch from, and the repository ".*" has none yet: commit first$/,
  );
  assert.deepEqual(await contents(empty.path), []);
});

/** A tmpfs of `size` at a new folder, unmounted on dispose; undefined when mounting is not allowed here. */
async function smallDisk(size: string): Promise<(AsyncDisposable & { path: string }) | undefined> {
  const dir = await tempDir("finishline-disk-");
  const mounted = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir.path],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => undefined);
  if (!mounted?.success) {
    await dir[Symbol.asyncDispose]();
    return undefined;
  }
  return {
    path: dir.path,
    async [Symbol.asyncDispose]() {
      await new Deno.Command("umount", { args: ["-l", dir.path] }).output();
      await dir[Symbol.asyncDispose]();
    },
  };
}

const CAN_MOUNT = Deno.build.os === "linux" && Deno.uid() === 0;

Deno.test({
  name: "a read-only checkout is one line naming the path, exit 2, nothing written",
  ignore: !CAN_MOUNT,
  fn: async () => {
    await using disk = await smallDisk("4m");
    assert.ok(disk, "mount works as root here");
    await git(disk.path, "init", "-q");
    await git(disk.path, "commit", "-q", "--allow-empty", "-m", "start");
    const remount = await new Deno.Command("mount", {
      args: ["-o", "remount,ro", disk.path],
    }).output();
    assert.ok(remount.success);
    // A model the agent can reach (the model check comes first), never asked.
    await using server = await ScriptedModelServer.start({ scripts: [] });
    await refused(
      disk.path,
      ["--task", "x"],
      /^finishline: Cannot write ".*\/\.agent\/\.finishline\/locks": the file system is read-only/,
      server,
    );
    assert.equal(server.requests.length, 0);
  },
});

Deno.test({
  name: "a full disk is one line, exit 2, and no lock file or folder left",
  ignore: !CAN_MOUNT,
  fn: async () => {
    await using disk = await smallDisk("300k");
    assert.ok(disk, "mount works as root here");
    await git(disk.path, "init", "-q");
    await git(disk.path, "commit", "-q", "--allow-empty", "-m", "start");
    // Fill it up.
    await new Deno.Command("sh", {
      args: ["-c", "head -c 1000000 /dev/zero > filler 2>/dev/null; true"],
      cwd: disk.path,
    }).output();
    // A model the agent can reach (the model check comes first), never asked.
    await using server = await ScriptedModelServer.start({ scripts: [] });
    await refused(
      disk.path,
      ["--task", "x"],
      /^finishline: Cannot write.*: the disk is full/,
      server,
    );
    assert.equal(server.requests.length, 0);
    assert.deepEqual(await contents(disk.path), ["filler"]);
  },
});
