import assert from "node:assert/strict";
import { join } from "node:path";
import { GitRepo } from "../../agents/git/repo.ts";
import { hardenedGitArgs, runGit, trustGitConfig } from "../../agents/git/run_git.ts";
import { snapshotCommit } from "../../agents/evidence/copy/worktree_run.ts";
import { runInWorktree } from "../../agents/evidence/copy/throwaway_run.ts";
import { changedProtectedFiles } from "../../agents/evidence/judge/protected_files.ts";
import { DEFAULT_PROTECTED_GLOBS } from "../../agents/definition/definition_types.ts";
import { git, tempDir, tempRepo } from "../_helpers.ts";

/** A script that leaves a marker named `name` in `marks`, passing stdin through (a filter must). */
async function markerScript(bin: string, marks: string, name: string): Promise<string> {
  const file = join(bin, name);
  await Deno.writeTextFile(file, `#!/bin/sh\ntouch '${join(marks, name)}'\ncat\n`, { mode: 0o755 });
  return file;
}

async function marks(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

/**
 * What an agent can do to a repository's git settings to run its code when
 * finishline runs git: hooks (in a folder of its own and in `.git/hooks`),
 * fsmonitor, clean/smudge and process filters, an external diff and a
 * textconv driver, a pager, a signing program with signing on, signatures
 * shown in `git log`, and the receive-pack of a local remote.
 */
async function arm(repo: string, bin: string, marksDir: string): Promise<void> {
  const mark = (name: string) => markerScript(bin, marksDir, name);
  await Deno.mkdir(join(repo, "lib/hooks"), { recursive: true });
  for (const hook of ["pre-commit", "post-checkout", "post-commit", "reference-transaction"]) {
    // The pre-commit hook also weakens a test, as a hook that forges evidence would.
    const weaken = hook === "pre-commit" ? `echo 'def test_a(): pass' > tests/test_a.py\n` : "";
    await Deno.writeTextFile(
      join(repo, "lib/hooks", hook),
      `#!/bin/sh\ntouch '${join(marksDir, `hook-${hook}`)}'\n${weaken}`,
      { mode: 0o755 },
    );
    await Deno.copyFile(join(repo, "lib/hooks", hook), join(repo, ".git/hooks", hook));
  }
  await git(repo, "config", "core.hooksPath", "lib/hooks");
  await git(repo, "config", "core.fsmonitor", await mark("fsmonitor"));
  await Deno.writeTextFile(
    join(repo, ".gitattributes"),
    "*.txt filter=evil diff=evil\n*.md filter=evilproc\n",
  );
  await git(repo, "config", "filter.evil.clean", await mark("filter-clean"));
  await git(repo, "config", "filter.evil.smudge", await mark("filter-smudge"));
  await git(repo, "config", "filter.evil.required", "true");
  await git(repo, "config", "filter.evilproc.process", await mark("filter-process"));
  await git(repo, "config", "diff.evil.command", await mark("diff-command"));
  await git(repo, "config", "diff.evil.textconv", await mark("textconv"));
  await git(repo, "config", "diff.external", await mark("diff-external"));
  await git(repo, "config", "core.pager", await mark("pager"));
  await git(repo, "config", "gpg.program", await mark("gpg"));
  await git(repo, "config", "commit.gpgSign", "true");
  await git(repo, "config", "log.showSignature", "true");
  await git(repo, "config", "remote.origin.receivepack", await mark("receive-pack"));
}

Deno.test("finishline's git runs none of the programs an agent names in the repository's settings", async (t) => {
  await using repo = await tempRepo();
  await using outside = await tempDir("finishline-marks-");
  const bin = join(outside.path, "bin");
  const marksDir = join(outside.path, "marks");
  await Deno.mkdir(bin);
  await Deno.mkdir(marksDir);
  await Deno.mkdir(join(repo.path, "tests"));
  await Deno.writeTextFile(join(repo.path, "tests/test_a.py"), "def test_a(): assert 1 == 2\n");
  await Deno.writeTextFile(join(repo.path, "a.txt"), "a\n");
  await Deno.writeTextFile(join(repo.path, "notes.md"), "notes\n");
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const base = await git(repo.path, "rev-parse", "HEAD");
  await using remote = await tempDir("finishline-remote-");
  await git(remote.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", remote.path);
  // Settings present when the run starts are the user's; the agent's come after.
  await trustGitConfig(repo.path);
  await arm(repo.path, bin, marksDir);
  const gitRepo = (await GitRepo.open(repo.path))!;

  await t.step(
    "status, diff, commit, log, show, worktree, checkout, commit-tree and push",
    async () => {
      await Deno.writeTextFile(join(repo.path, "a.txt"), "changed\n");
      await Deno.writeTextFile(join(repo.path, "notes.md"), "more notes\n");
      await Deno.writeTextFile(join(repo.path, "b.txt"), "new\n");
      const state = await gitRepo.observe(base);
      assert.deepEqual(state.status?.unstaged.sort(), [
        ".gitattributes",
        "a.txt",
        "b.txt",
        "lib/hooks/post-checkout",
        "lib/hooks/post-commit",
        "lib/hooks/pre-commit",
        "lib/hooks/reference-transaction",
        "notes.md",
      ]);
      const diff = await gitRepo.exec(["diff", base]);
      assert.equal(diff.code, 0);
      assert.match(diff.stdout, /\+changed/, "the diff is git's own, not a driver's");
      const commit = await gitRepo.commitPaths(["a.txt", "b.txt", "notes.md"], "work");
      assert.match(commit ?? "", /^[0-9a-f]{40}$/);
      const log = await gitRepo.exec(["log", "-p", "--format=%s", `${base}..HEAD`]);
      assert.equal(log.code, 0);
      assert.ok(!log.stdout.includes("gpg"), "no signature lines in the log");
      assert.equal((await gitRepo.exec(["show", "HEAD"])).code, 0);
      const snapshot = await snapshotCommit(gitRepo);
      assert.match(snapshot ?? "", /^[0-9a-f]{40}$/);
      const checked = await runInWorktree(gitRepo, snapshot!, {
        checks: [{ name: "files", command: "test -f a.txt && test -f tests/test_a.py" }],
        timeoutMs: 30_000,
        restore: { from: base, paths: ["a.txt", "b.txt"] },
      });
      assert.equal(checked.error, undefined);
      assert.equal(checked.runs[0].green, true);
      const changes = await changedProtectedFiles(gitRepo, base, {
        protect: [...DEFAULT_PROTECTED_GLOBS],
        configFiles: [],
      });
      // The agent's own hooks and .gitattributes are protected as not plain source; no test
      // file is changed.
      assert.deepEqual(
        changes.filter((change) => !change.why?.startsWith("not plain source")),
        [],
        "no protected file changed: no hook weakened the test",
      );
      const push = await gitRepo.exec(["push", "-q", "origin", "HEAD:refs/heads/work"]);
      assert.equal(push.code, 0, push.stderr);
      assert.deepEqual(await marks(marksDir), [], "no marker: nothing the agent named ran");
      assert.equal(
        await Deno.readTextFile(join(repo.path, "tests/test_a.py")),
        "def test_a(): assert 1 == 2\n",
      );
    },
  );

  await t.step(
    "the same settings do run programs under plain git (the trap is armed)",
    async () => {
      await Deno.writeTextFile(join(repo.path, "a.txt"), "again\n");
      await git(repo.path, "status");
      await git(repo.path, "add", "a.txt");
      await git(repo.path, "commit", "-qm", "plain", "--no-gpg-sign");
      const fired = await marks(marksDir);
      for (const name of ["fsmonitor", "filter-clean", "hook-pre-commit"]) {
        assert.ok(fired.includes(name), `${name} ran under plain git: ${fired.join(", ")}`);
      }
    },
  );
});

Deno.test("settings in the repository's config when the run starts are kept", async (t) => {
  await using repo = await tempRepo();
  await using outside = await tempDir("finishline-marks-");
  await Deno.writeTextFile(join(repo.path, ".gitattributes"), "*.txt filter=upper\n");
  await git(repo.path, "config", "filter.upper.smudge", "tr a-z A-Z");
  await git(repo.path, "config", "filter.upper.clean", "cat");
  await Deno.writeTextFile(join(repo.path, "a.txt"), "hello\n");
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const base = await git(repo.path, "rev-parse", "HEAD");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const smudged = async () => {
    const run = await runInWorktree(gitRepo, base, {
      checks: [{ name: "upper", command: "grep -q HELLO a.txt" }],
      timeoutMs: 30_000,
    });
    return run.runs[0].green;
  };

  await t.step("before they are trusted, a filter of the repository is off", async () => {
    assert.equal(await smudged(), false);
  });

  await t.step(
    "trusted or not, no filter runs in the clean copy: it holds the blobs' bytes",
    async () => {
      await trustGitConfig(repo.path);
      assert.equal(await smudged(), false);
    },
  );

  await t.step("a filter the agent changes afterwards is off again", async () => {
    const marker = join(outside.path, "smudged");
    await git(repo.path, "config", "filter.upper.smudge", `touch '${marker}'; cat`);
    assert.equal(await smudged(), false);
    await assert.rejects(Deno.stat(marker));
  });
});

Deno.test("hardenedGitArgs overrides only what the repository's config adds", async (t) => {
  const local = (key: string, value: string) => ({
    scope: "local",
    origin: "/r/.git/config",
    key,
    value,
  });
  const global = (key: string, value: string) => ({
    scope: "global",
    origin: "/home/u/.gitconfig",
    key,
    value,
  });
  const untrusted = { isTrusted: () => false };
  const settings = (args: string[]) =>
    args.flatMap((arg, index) => args[index - 1] === "-c" ? [arg] : []);

  await t.step("the fixed switches come first, the caller's arguments last", () => {
    const { args, env } = hardenedGitArgs(
      ["-c", "user.name=x", "commit", "-m", "m"],
      [],
      untrusted,
    );
    assert.deepEqual(args.slice(0, 9), [
      "--no-pager",
      "-c",
      "core.hooksPath=/dev/null",
      "-c",
      "core.fsmonitor=false",
      "-c",
      "log.showSignature=false",
      "-c",
      "protocol.ext.allow=never",
    ]);
    assert.deepEqual(args.slice(-5), ["-c", "user.name=x", "commit", "-m", "m"]);
    assert.deepEqual(env, {
      GIT_PAGER: "cat",
      GIT_EDITOR: ":",
      GIT_SEQUENCE_EDITOR: ":",
      GIT_OPTIONAL_LOCKS: "0",
    });
  });

  await t.step("diff, log and show run no external diff, textconv or colour", () => {
    const { args } = hardenedGitArgs(["diff", "--name-only", "HEAD"], [], untrusted);
    assert.deepEqual(args.slice(-7), [
      "diff",
      "--no-ext-diff",
      "--no-textconv",
      "--no-color",
      "--no-relative",
      "--name-only",
      "HEAD",
    ]);
  });

  await t.step("a global program setting is kept; a local one falls back to it", () => {
    const { args } = hardenedGitArgs(["push"], [
      global("core.sshcommand", "ssh -i ~/.ssh/work"),
      local("core.sshcommand", "./evil"),
      global("filter.lfs.process", "git-lfs filter-process"),
    ], untrusted);
    assert.deepEqual(settings(args).slice(4), ["core.sshcommand=ssh -i ~/.ssh/work"]);
  });

  await t.step("a trusted local setting is kept", () => {
    const { args } = hardenedGitArgs(["checkout"], [
      local("filter.crypt.smudge", "git-crypt smudge"),
    ], { isTrusted: () => true });
    assert.deepEqual(settings(args).slice(4), []);
  });

  await t.step("credential helpers are cleared, then the trusted ones added back in order", () => {
    const { args } = hardenedGitArgs(["push"], [
      global("credential.helper", "store"),
      local("credential.helper", "!./steal"),
      global("credential.https://example.com.helper", "cache"),
    ], untrusted);
    assert.deepEqual(settings(args).slice(4), [
      "credential.helper=",
      "credential.helper=store",
      "credential.https://example.com.helper=cache",
    ]);
  });

  await t.step("signing and askpass fall back to values that run nothing of the agent's", () => {
    const { args } = hardenedGitArgs(["commit"], [
      local("commit.gpgsign", "true"),
      local("gpg.program", "./evil"),
      local("core.askpass", "./evil"),
    ], untrusted);
    assert.deepEqual(settings(args).slice(4), [
      "commit.gpgsign=false",
      "gpg.program=gpg",
      "core.askpass=",
    ]);
  });

  await t.step("a push to a remote whose receive-pack the agent named gets git's own", () => {
    const config = [local("remote.origin.receivepack", "./evil")];
    assert.deepEqual(
      hardenedGitArgs(["push", "origin", "main"], config, untrusted).args.slice(-4),
      [
        "push",
        "--receive-pack=git-receive-pack",
        "origin",
        "main",
      ],
    );
    assert.deepEqual(
      hardenedGitArgs(["push", "upstream", "main"], config, untrusted).args.slice(-3),
      ["push", "upstream", "main"],
      "another remote is left alone",
    );
  });

  await t.step("every configured hook is switched off, whatever its scope", () => {
    const { args } = hardenedGitArgs(["commit"], [
      global("hook.linter.command", "~/bin/lint"),
      local("hook.evil.event", "pre-commit"),
    ], untrusted);
    assert.deepEqual(settings(args).slice(4), [
      "hook.linter.enabled=false",
      "hook.evil.enabled=false",
    ]);
  });

  await t.step("a filter whose name holds '=' is overridden through --config-env", () => {
    const { args, env } = hardenedGitArgs(["add", "-A"], [
      local("filter.a=b.clean", "./evil"),
    ], untrusted);
    assert.ok(args.includes("--config-env=filter.a=b.clean=FINISHLINE_GIT_CONFIG_0"));
    assert.equal(env.FINISHLINE_GIT_CONFIG_0, "");
  });
});

Deno.test("runGit refuses to run git when the config cannot be read", async () => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(join(repo.path, ".git/config"), "[core\nnot a config\n");
  const result = await runGit(["status"], { cwd: repo.path, timeoutMs: 10_000 });
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /cannot read the git config/);
});

Deno.test("finishline's git status never writes the index: an agent's commit at that moment finds no index.lock", async () => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(`${repo.path}/a.txt`, "a\n");
  await git(repo.path, "add", "a.txt");
  await git(repo.path, "commit", "-qm", "a");
  // The file's times move: a status that refreshes the index would write it (taking index.lock).
  const later = new Date(Date.now() + 5_000);
  await Deno.utime(`${repo.path}/a.txt`, later, later);
  const before = (await Deno.stat(`${repo.path}/.git/index`)).mtime!.getTime();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const status = await runGit(["status", "--porcelain"], { cwd: repo.path, timeoutMs: 30_000 });
  assert.equal(status.code, 0, status.stderr);
  assert.equal((await Deno.stat(`${repo.path}/.git/index`)).mtime!.getTime(), before);
  // Plain git does write it: the test would see a refresh.
  await git(repo.path, "status", "--porcelain");
  assert.notEqual((await Deno.stat(`${repo.path}/.git/index`)).mtime!.getTime(), before);
});
