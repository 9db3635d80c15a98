/**
 * The gate verifies a clean copy of the agent's last commit: one worktree
 * per run, moved from commit to commit; uncommitted work refused; the
 * dependency folders copied in, every file checked against the start;
 * a lock file changed on purpose installed from; a red baseline run again.
 * Real git in temp repositories, real `node --test` and `npm ci`.
 */

import assert from "node:assert/strict";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";
import { copiesOf, copyAt } from "./_copies.ts";

const NODE_TEST = { name: "npm test", command: "npm test", runner: "node" as const };
const PACKAGE_JSON = JSON.stringify({
  name: "math",
  private: true,
  scripts: { test: "node --test" },
});
const BROKEN = "exports.add = (a, b) => a - b;\n";
const FIXED = "exports.add = (a, b) => a + b;\n";
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
`;
/** Prints what `node --test` prints when every test passes. */
const FAKE_NODE = `#!/bin/sh
echo "ok 1 - adds"
echo "1..1"
echo "# tests 1"
echo "# pass 1"
echo "# fail 0"
`;

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(`${root}/${file}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${root}/${file}`, text);
  }
}

async function commitAll(root: string, message = "work"): Promise<string> {
  await git(root, "add", "-A");
  await git(root, "commit", "-qm", message);
  return await git(root, "rev-parse", "HEAD");
}

/** A node project with a bug, node_modules ignored, committed. */
async function project(files: Record<string, string> = {}) {
  const repo = await tempRepo();
  await write(repo.path, {
    ".gitignore": "node_modules\n",
    "package.json": PACKAGE_JSON,
    "src/math.js": BROKEN,
    "test/math.test.js": TEST,
    ...files,
  });
  const base = await commitAll(repo.path, "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  return { repo, gitRepo, base };
}

function context(repo: GitRepo, base: string) {
  return { cwd: repo.root, git: { repo, baseline: base } } as never;
}

async function worktrees(root: string): Promise<string[]> {
  return (await git(root, "worktree", "list", "--porcelain")).split("\n")
    .filter((line) => line.startsWith("worktree ")).map((line) => line.slice(9));
}

/** The clean copy of finishline's that holds `commit`. */
async function worktreeAt(_root: string, commit: string): Promise<string> {
  return await copyAt(commit);
}

/** A package in node_modules with a `.bin` entry, as `npm install` leaves it. */
async function installedPackage(root: string): Promise<void> {
  await write(root, {
    "node_modules/left-pad/package.json": '{ "name": "left-pad", "main": "lib/pad.js" }',
    "node_modules/left-pad/lib/pad.js": "module.exports = (s) => s;\n",
    "node_modules/left-pad/cli.js": "#!/usr/bin/env node\n",
  });
  await Deno.mkdir(`${root}/node_modules/.bin`);
  await Deno.symlink("../left-pad/cli.js", `${root}/node_modules/.bin/left-pad`);
}

Deno.test("the gate checks a clean copy of the last commit, never the working tree", async (t) => {
  await t.step("untracked and ignored files of the checkout never reach the checks", async () => {
    const { repo, gitRepo, base } = await project();
    await using _ = repo;
    await using gate = new RepoChecksChecker({ checks: [NODE_TEST], timeoutMs: 60_000 });
    await gate.recordStart(gitRepo);
    // A fake node on npm's PATH, in an ignored folder that did not exist at the start.
    await write(repo.path, { "node_modules/.bin/node": FAKE_NODE });
    await Deno.chmod(`${repo.path}/node_modules/.bin/node`, 0o755);
    const result = await gate.check(context(gitRepo, base));
    assert.equal(result.complete, false, result.feedback);
    assert.match(result.feedback!, /"npm test" fails.*failing tests: "adds"/s);
    assert.equal(gate.evidence?.commit, base);
  });

  await t.step("uncommitted work is not verified, and the agent is told to commit", async () => {
    const { repo, gitRepo, base } = await project();
    await using _ = repo;
    await using gate = new RepoChecksChecker({ checks: [NODE_TEST], timeoutMs: 60_000 });
    await Deno.writeTextFile(`${repo.path}/notes.txt`, "mine, from before the run\n");
    await gate.recordStart(gitRepo);
    await Deno.writeTextFile(`${repo.path}/src/math.js`, FIXED);
    const refused = await gate.check(context(gitRepo, base));
    assert.equal(refused.complete, false);
    assert.match(refused.feedback!, /Your work is not committed: "src\/math.js" is uncommitted/);
    assert.match(refused.feedback!, /uncommitted changes are not verified/);
    assert.match(refused.feedback!, /Commit your work/);
    assert.deepEqual(gate.evidence?.uncommitted, ["src/math.js"]);
    assert.deepEqual(gate.evidence?.checks, [], "the checks did not run");

    // The file uncommitted before the run is not the agent's work.
    await git(repo.path, "commit", "-qm", "fix: add adds", "--", "src/math.js");
    const head = await git(repo.path, "rev-parse", "HEAD");
    const passed = await gate.check(context(gitRepo, base));
    assert.equal(passed.complete, true, passed.feedback);
    assert.match(passed.feedback!, new RegExp(`on a clean copy of ${head.slice(0, 12)}`));
  });

  await t.step(
    "one worktree serves every claim, moved to each commit, removed at close",
    async () => {
      const { repo, gitRepo, base } = await project();
      await using _ = repo;
      const gate = new RepoChecksChecker({
        checks: [{ name: "clean", command: "test ! -e scratch.txt && touch scratch.txt" }],
      });
      await gate.startBaseline(gitRepo, base);
      assert.equal((await gate.check(context(gitRepo, base))).complete, true);
      const [copy] = await copiesOf(base);
      assert.ok(copy, "the clean copy is a private repository's work tree");
      assert.deepEqual(await worktrees(repo.path), [await Deno.realPath(repo.path)]);
      await Deno.writeTextFile(`${repo.path}/src/math.js`, FIXED);
      const head = await commitAll(repo.path);
      // The file the first run wrote is gone: the copy was cleaned when it moved.
      const second = await gate.check(context(gitRepo, base));
      assert.equal(second.complete, true, second.feedback);
      assert.deepEqual(await copiesOf(base), [copy]);
      assert.equal(await git(copy, "rev-parse", "HEAD"), head);
      await gate.close();
      assert.deepEqual(await copiesOf(base), []);
      await assert.rejects(Deno.stat(copy));
    },
  );
});

Deno.test("dependency folders are the ones the run found", async (t) => {
  await t.step(
    "a changed package file or .bin entry is a protected change; the checks do not run",
    async () => {
      const { repo, gitRepo, base } = await project();
      await using _ = repo;
      await installedPackage(repo.path);
      await using gate = new RepoChecksChecker({ checks: [NODE_TEST], timeoutMs: 60_000 });
      await gate.startBaseline(gitRepo, base);
      await Deno.writeTextFile(`${repo.path}/node_modules/left-pad/lib/pad.js`, "// patched\n");
      await write(repo.path, { "node_modules/.bin/node": FAKE_NODE });
      await Deno.writeTextFile(`${repo.path}/src/math.js`, FIXED);
      await commitAll(repo.path);
      const result = await gate.check(context(gitRepo, base));
      assert.equal(result.complete, false);
      assert.match(
        result.feedback!,
        /You changed node_modules\/\.bin\/node \(added\), node_modules\/left-pad\/lib\/pad\.js \(changed\); dependency folders are not yours to change/,
      );
      assert.deepEqual(gate.evidence?.dependencyChanges, [
        "node_modules/.bin/node (added)",
        "node_modules/left-pad/lib/pad.js (changed)",
      ]);
      assert.deepEqual(gate.evidence?.checks, []);
    },
  );

  await t.step("a lock file changed on purpose is installed from, not copied", async () => {
    const { repo, gitRepo, base } = await project({
      "vendor-dep/package.json": '{ "name": "dep", "version": "1.0.0", "main": "index.js" }',
      "vendor-dep/index.js": "module.exports = 2;\n",
      "test/dep.test.js":
        `require("node:test")("dep", () => require("node:assert").equal(require("dep"), 2));\n`,
      "src/math.js": FIXED,
    });
    await using _ = repo;
    await using gate = new RepoChecksChecker({ checks: [NODE_TEST], timeoutMs: 120_000 });
    await gate.startBaseline(gitRepo, base);
    // The agent adds a dependency the honest way: package.json and the lock file, committed.
    await Deno.writeTextFile(
      `${repo.path}/package.json`,
      JSON.stringify({
        name: "math",
        private: true,
        scripts: { test: "node --test" },
        dependencies: { dep: "file:./vendor-dep" },
      }),
    );
    const installed = await new Deno.Command("npm", {
      args: ["install", "--no-audit", "--no-fund", "--offline"],
      cwd: repo.path,
      stdout: "null",
      stderr: "null",
    }).output();
    assert.equal(installed.code, 0);
    await commitAll(repo.path, "feat: depend on dep");
    const result = await gate.check(context(gitRepo, base));
    assert.equal(result.complete, true, result.feedback);
    assert.match(
      result.feedback!,
      /You changed "package-lock.json", "package.json": the clean copy installed node_modules with `npm ci/,
    );
    assert.equal(gate.evidence?.dependencyChanges, undefined);
    const copy = await worktreeAt(repo.path, await git(repo.path, "rev-parse", "HEAD"));
    assert.equal(await Deno.readLink(`${copy}/node_modules/dep`), "../vendor-dep");

    // The dependency is dropped again: so is what the clean copy installed.
    await git(repo.path, "revert", "--no-edit", "HEAD");
    const reverted = await gate.check(context(gitRepo, base));
    assert.equal(reverted.complete, false);
    assert.match(reverted.feedback!, /failing before your changes too: "dep"/);
    await assert.rejects(Deno.lstat(`${copy}/node_modules`));
  });

  await t.step(
    "changed Python requirements cannot be installed offline: said, and the .venv is the one found at the start",
    async () => {
      const { repo, gitRepo, base } = await project({
        ".gitignore": "node_modules\n.venv\n",
        "src/math.js": FIXED,
        "requirements.txt": "pytest\n",
      });
      await using _ = repo;
      await write(repo.path, { ".venv/pyvenv.cfg": "home = /usr/bin\n" });
      await using gate = new RepoChecksChecker({
        checks: [{ name: "venv", command: "test -f .venv/pyvenv.cfg" }],
      });
      await gate.startBaseline(gitRepo, base);
      await Deno.writeTextFile(`${repo.path}/requirements.txt`, "pytest\nrequests\n");
      await commitAll(repo.path);
      const result = await gate.check(context(gitRepo, base));
      assert.equal(result.complete, true, result.feedback);
      assert.match(
        result.feedback!,
        /You changed "requirements.txt", but finishline cannot install \.venv offline: the checks run with the \.venv found at the start/,
      );
    },
  );
});

Deno.test("a check red at the baseline runs once more; tests that pass then are flaky, not the agent's", async () => {
  await using counter = await tempDir("finishline-runs-");
  // Fails on its first two runs (the baseline, and the final state under load), then passes.
  const timing = `const fs = require("node:fs");
require("node:test")("timing", () => {
  let n = 1;
  for (;; n++) {
    try { fs.mkdirSync(${JSON.stringify(counter.path)} + "/" + n); break; } catch {}
  }
  if (n <= 2) throw new Error("deadline missed under load");
});
`;
  const { repo, gitRepo, base } = await project({ "test/timing.test.js": timing });
  await using _ = repo;
  await using gate = new RepoChecksChecker({ checks: [NODE_TEST], timeoutMs: 60_000 });
  const baseline = await gate.startBaseline(gitRepo, base);
  assert.deepEqual(baseline.runs[0].failing.sort(), ["adds", "timing"]);
  await Deno.writeTextFile(`${repo.path}/src/math.js`, FIXED);
  await commitAll(repo.path, "fix: add adds");
  const result = await gate.check(context(gitRepo, base));
  assert.equal(result.complete, true, result.feedback);
  assert.doesNotMatch(result.feedback!, /failed before your changes too/);
  const check = gate.evidence!.checks[0];
  assert.deepEqual(check.baselineFlaky, ["timing"]);
  assert.equal(check.now, "green");
  assert.equal(check.flaky, true);
  assert.deepEqual(baseline.retries?.[0].failing, ["adds"]);
});

Deno.test("a passing claim is not held up by the baseline's second run", async () => {
  await using counter = await tempDir("finishline-runs-");
  // Red at the baseline; run there a second time, it would take 30 s.
  const slowSecond = `n=$(ls ${counter.path} | wc -l); touch ${counter.path}/$n
[ "$n" -ge 1 ] && sleep 30
exit 1
`;
  const { repo, gitRepo, base } = await project({ "check.sh": slowSecond });
  await using _ = repo;
  await using gate = new RepoChecksChecker({ checks: [{ name: "check", command: "sh check.sh" }] });
  const baseline = await gate.startBaseline(gitRepo, base);
  assert.equal(baseline.runs[0].green, false);
  await Deno.writeTextFile(`${repo.path}/check.sh`, "exit 0\n");
  await commitAll(repo.path, "fix: the check passes");
  const started = performance.now();
  const result = await gate.check(context(gitRepo, base));
  assert.equal(result.complete, true, result.feedback);
  assert.ok(performance.now() - started < 20_000, "the claim did not wait 30 s");
  assert.equal(baseline.retries, undefined, "the second run was not started");
});
