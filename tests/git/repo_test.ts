import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { type GitFault, type GitOptions, GitRepo } from "../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../_helpers.ts";

/** Write a file (and its folders) below `root`. */
async function write(root: string, path: string, text = `${path}\n`): Promise<void> {
  await Deno.mkdir(dirname(join(root, path)), { recursive: true });
  await Deno.writeTextFile(join(root, path), text);
}

/** Write a file and commit it. */
async function commit(repo: string, path: string, message = `add ${path}`): Promise<void> {
  await write(repo, path);
  await git(repo, "add", path);
  await git(repo, "commit", "-q", "-m", message);
}

/** Open a repository that must exist, collecting faults. */
async function open(
  cwd: string,
  options: GitOptions = {},
): Promise<{ repo: GitRepo; faults: GitFault[] }> {
  const faults: GitFault[] = [];
  const repo = await GitRepo.open(cwd, { ...options, onFault: (fault) => faults.push(fault) });
  assert.ok(repo, `a repository at ${cwd}`);
  return { repo, faults };
}

/** An empty repository (no commit yet) with a local identity. */
async function emptyRepo() {
  const dir = await tempDir("finishline-repo-");
  await git(dir.path, "init", "-q", "-b", "main");
  await git(dir.path, "config", "user.name", "Test");
  await git(dir.path, "config", "user.email", "test@example.invalid");
  return dir;
}

Deno.test("GitRepo.open finds the repository that holds a folder", async (t) => {
  await t.step("outside a repository it is undefined and reports no fault", async () => {
    await using dir = await tempDir();
    const faults: GitFault[] = [];
    const repo = await GitRepo.open(dir.path, {
      // Stop git from finding a repository above the temp folder.
      env: { GIT_CEILING_DIRECTORIES: dirname(dir.path) },
      onFault: (fault) => faults.push(fault),
    });
    assert.equal(repo, undefined);
    assert.deepEqual(faults, []);
  });

  await t.step("in a subfolder the root is the top folder and cwd the subfolder", async () => {
    await using dir = await tempRepo();
    const sub = join(dir.path, "src", "lib");
    await Deno.mkdir(sub, { recursive: true });
    const { repo } = await open(sub);
    assert.equal(repo.root, await Deno.realPath(dir.path));
    assert.equal(repo.cwd, sub);
  });

  await t.step("a folder that does not exist is undefined", async () => {
    await using dir = await tempDir();
    assert.equal(await GitRepo.open(join(dir.path, "missing")), undefined);
  });
});

Deno.test("GitRepo reads HEAD, the branch and commit counts", async (t) => {
  await t.step("head() in an empty repository is null, without a fault", async () => {
    await using dir = await emptyRepo();
    const { repo, faults } = await open(dir.path);
    assert.equal(await repo.head(), null);
    assert.deepEqual(faults, []);
  });

  await t.step("head() is the current commit's hash", async () => {
    await using dir = await tempRepo();
    const { repo } = await open(dir.path);
    const head = await repo.head();
    assert.match(head ?? "", /^[0-9a-f]{40}$/);
    assert.equal(head, await git(dir.path, "rev-parse", "HEAD"));
  });

  await t.step("branch() names the branch, and is null when detached", async () => {
    await using dir = await tempRepo();
    const { repo } = await open(dir.path);
    assert.equal(await repo.branch(), "main");
    await git(dir.path, "checkout", "-q", "--detach");
    assert.equal(await repo.branch(), null);
  });

  await t.step("commitsSince counts the commits after a baseline", async () => {
    await using dir = await tempRepo();
    const { repo, faults } = await open(dir.path);
    const baseline = await repo.head();
    assert.equal(await repo.commitsSince(baseline), 0);
    await commit(dir.path, "a.txt");
    await commit(dir.path, "b.txt");
    assert.equal(await repo.commitsSince(baseline), 2);
    assert.equal(await repo.commitsSince(await repo.head()), 0);
    assert.deepEqual(faults, []);
  });

  await t.step(
    "commitsSince(null) counts every commit, and is 0 in an empty repository",
    async () => {
      await using dir = await emptyRepo();
      const { repo, faults } = await open(dir.path);
      assert.equal(await repo.commitsSince(null), 0);
      assert.deepEqual(faults, [], "an empty repository is not a fault");
      await commit(dir.path, "a.txt");
      await commit(dir.path, "b.txt");
      assert.equal(await repo.commitsSince(null), 2);
    },
  );

  await t.step("a failing command returns null and calls onFault", async () => {
    await using dir = await tempRepo();
    const { repo, faults } = await open(dir.path);
    assert.equal(await repo.commitsSince("deadbeef"), null);
    assert.equal(faults.length, 1);
    assert.deepEqual(faults[0].args, ["rev-list", "--count", "deadbeef..HEAD"]);
    assert.notEqual(faults[0].code, 0);
    assert.match(faults[0].message, /deadbeef/);
  });
});

Deno.test("GitRepo.status keeps staged, unstaged and untracked changes apart", async (t) => {
  await t.step("a clean tree has no changes", async () => {
    await using dir = await tempRepo();
    const { repo } = await open(dir.path);
    assert.deepEqual(await repo.status(), { staged: [], unstaged: [] });
  });

  await t.step("staged, unstaged, both and untracked", async () => {
    await using dir = await tempRepo();
    await commit(dir.path, "tracked.txt");
    await commit(dir.path, "both.txt");
    await commit(dir.path, "gone.txt");
    const { repo } = await open(dir.path);
    await write(dir.path, "new.txt");
    await git(dir.path, "add", "new.txt");
    await write(dir.path, "tracked.txt", "changed\n");
    await write(dir.path, "both.txt", "staged\n");
    await git(dir.path, "add", "both.txt");
    await write(dir.path, "both.txt", "then changed\n");
    await Deno.remove(join(dir.path, "gone.txt"));
    await write(dir.path, "untracked/deep/file.txt");
    const status = await repo.status();
    assert.deepEqual(status?.staged.sort(), ["both.txt", "new.txt"]);
    assert.deepEqual(status?.unstaged.sort(), [
      "both.txt",
      "gone.txt",
      "tracked.txt",
      "untracked/deep/file.txt",
    ]);
  });

  await t.step("a staged rename lists the new path only", async () => {
    await using dir = await tempRepo();
    await commit(dir.path, "old name.txt");
    const { repo } = await open(dir.path);
    await git(dir.path, "mv", "old name.txt", "new name.txt");
    await write(dir.path, "after.txt");
    assert.deepEqual(await repo.status(), { staged: ["new name.txt"], unstaged: ["after.txt"] });
  });

  await t.step("paths with spaces and odd characters come through unquoted", async () => {
    await using dir = await tempRepo();
    const { repo } = await open(dir.path);
    await write(dir.path, "dir with space/file name.txt");
    await write(dir.path, 'quote"and\ttab.txt');
    await write(dir.path, "ünïcödé.txt");
    const status = await repo.status();
    assert.deepEqual(status?.unstaged.sort(), [
      "dir with space/file name.txt",
      'quote"and\ttab.txt',
      "ünïcödé.txt",
    ]);
  });

  await t.step("exclude prefixes leave out a folder's files, with or without a slash", async () => {
    await using dir = await tempRepo();
    const { repo } = await open(dir.path);
    await write(dir.path, ".agent/demo/logs/run-1.jsonl");
    await write(dir.path, ".agent/demo/logsbook.txt");
    await write(dir.path, "notes.txt");
    await write(dir.path, "tmp/scratch.txt");
    const status = await repo.status([".agent/demo/logs", "tmp/", "notes.txt"]);
    assert.deepEqual(status, { staged: [], unstaged: [".agent/demo/logsbook.txt"] });
  });

  await t.step("exclude prefixes apply to staged changes too", async () => {
    await using dir = await tempRepo();
    const { repo } = await open(dir.path);
    await write(dir.path, "logs/a.jsonl");
    await write(dir.path, "src/a.ts");
    await git(dir.path, "add", ".");
    assert.deepEqual(await repo.status(["logs"]), { staged: ["src/a.ts"], unstaged: [] });
  });

  await t.step("paths are relative to the repository root, also from a subfolder", async () => {
    await using dir = await tempRepo();
    await Deno.mkdir(join(dir.path, "src"));
    const { repo } = await open(join(dir.path, "src"));
    await write(dir.path, "src/a.ts");
    await write(dir.path, "top.txt");
    assert.deepEqual((await repo.status())?.unstaged.sort(), ["src/a.ts", "top.txt"]);
  });

  await t.step("a repository that disappeared gives null and a fault", async () => {
    await using dir = await tempRepo();
    const env = { GIT_CEILING_DIRECTORIES: dirname(dir.path) };
    const { repo, faults } = await open(dir.path, { env });
    await Deno.remove(join(dir.path, ".git"), { recursive: true });
    assert.equal(await GitRepo.open(dir.path, { env }), undefined);
    assert.equal(await repo.status(), null);
    assert.equal(faults.length, 1);
    assert.equal(faults[0].args[0], "status");
  });
});

Deno.test("GitRepo.exec runs git commands that change the repository", async (t) => {
  await t.step("a commit through exec is counted", async () => {
    await using dir = await tempRepo();
    const { repo, faults } = await open(dir.path);
    const baseline = await repo.head();
    await write(dir.path, "a.txt");
    assert.equal((await repo.exec(["add", "a.txt"])).code, 0);
    assert.equal((await repo.exec(["commit", "-q", "-m", "via exec"])).code, 0);
    assert.equal(await repo.commitsSince(baseline), 1);
    assert.deepEqual(faults, []);
  });

  await t.step("a failing exec returns its code and stderr and reports a fault", async () => {
    await using dir = await tempRepo();
    const { repo, faults } = await open(dir.path);
    const result = await repo.exec(["checkout", "-q", "no-such-branch"]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /no-such-branch/);
    assert.equal(faults.length, 1);
    assert.deepEqual(faults[0].args, ["checkout", "-q", "no-such-branch"]);
  });
});

Deno.test("GitRepo gives up on a git call that outlasts its timeout", async (t) => {
  // A `git` first on PATH that hangs on `status` and passes everything else to
  // the real git: the timeout is exercised deterministically. finishline's own
  // options come before the subcommand.
  await using bin = await tempDir("finishline-bin-");
  const realGit = (await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" })
    .output()).stdout;
  await Deno.writeTextFile(
    join(bin.path, "git"),
    `#!/bin/sh\ncase " $* " in *" status "*) exec sleep 30;; esac\nexec "${
      new TextDecoder().decode(realGit).trim()
    }" "$@"\n`,
  );
  await Deno.chmod(join(bin.path, "git"), 0o755);
  const env = { PATH: `${bin.path}:${Deno.env.get("PATH") ?? ""}` };

  await t.step("a hanging status returns null with a timeout fault", async () => {
    await using dir = await tempRepo();
    const { repo, faults } = await open(dir.path, { env, timeoutMs: 500 });
    assert.equal(await repo.commitsSince(await repo.head()), 0, "other calls still work");
    const started = performance.now();
    assert.equal(await repo.status(), null);
    assert.ok(performance.now() - started < 5000, "the hang was cut short");
    assert.deepEqual(faults, [{
      args: ["status", "--porcelain=v1", "-z", "--untracked-files=all"],
      code: 124,
      message: "timed out after 500 ms",
    }]);
  });
});

Deno.test("GitRepo.push tracks the branch, gets a network's time and tries once more", async (t) => {
  // A `git` first on PATH that is slow on every push and fails the first one
  // of each repository with a line after git's own `To <remote>`, as a
  // dropped connection does; everything else goes to the real git.
  await using bin = await tempDir("finishline-bin-");
  const realGit = new TextDecoder().decode(
    (await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" }).output())
      .stdout,
  ).trim();
  await Deno.writeTextFile(
    join(bin.path, "git"),
    `#!/bin/sh
case " $* " in *" push "*)
  sleep 1
  if [ ! -e .git/pushed-once ]; then
    : > .git/pushed-once
    printf 'To origin\\nerror: RPC failed; curl 56 connection reset\\n' >&2
    exit 1
  fi;;
esac
exec "${realGit}" "$@"
`,
  );
  await Deno.chmod(join(bin.path, "git"), 0o755);
  const env = { PATH: `${bin.path}:${Deno.env.get("PATH") ?? ""}` };

  await t.step("a dropped push is tried again, past the local calls' timeout", async () => {
    await using dir = await tempRepo();
    await using remote = await tempDir();
    await git(remote.path, "init", "-q", "--bare");
    await git(dir.path, "remote", "add", "origin", remote.path);
    const { repo, faults } = await open(dir.path, { env, timeoutMs: 500 });
    const branch = (await repo.branch())!;
    assert.equal(await repo.push(branch), undefined);
    assert.deepEqual(faults, []);
    assert.equal(
      await git(remote.path, "rev-parse", branch),
      await git(dir.path, "rev-parse", "HEAD"),
    );
    assert.equal(await git(dir.path, "config", `branch.${branch}.remote`), "origin");
  });

  await t.step("a push that fails twice says why in the line after `To`", async () => {
    await using dir = await tempRepo();
    const { repo, faults } = await open(dir.path, { env });
    await git(dir.path, "remote", "add", "origin", join(dir.path, "no-such-remote"));
    const why = await repo.push((await repo.branch())!);
    assert.match(why ?? "", /^fatal: .*no-such-remote/);
    assert.equal(faults.length, 1);
    assert.equal(faults[0].message, why);
  });
});
