/**
 * The verifier's repository is its own: the worker's `git worktree list`
 * never names it, what the verifier adds never reaches the worker's object
 * store, its test files are read back, and the kept copy refuses a file
 * changed after the verifier stopped. Real git.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { HeldOutStore } from "../../../agents/evidence/held_out/held_out_store.ts";
import { VerifierWorkspace } from "../../../agents/evidence/held_out/verifier_workspace.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempRepo } from "../../_helpers.ts";

Deno.test("the verifier writes in a repository the worker's cannot name or read from", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(join(repo.path, "node_modules"));
  const gitRepo = (await GitRepo.open(repo.path))!;
  const commit = await git(repo.path, "rev-parse", "HEAD");
  const workspace = await VerifierWorkspace.create(gitRepo, commit);
  assert.ok(workspace instanceof VerifierWorkspace, String(workspace));
  try {
    assert.equal(await git(workspace.dir, "rev-parse", "HEAD"), commit);
    await Deno.mkdir(join(workspace.dir, "test"));
    const secret = "test('held out', () => assert.equal(add(7, 7), 14));\n";
    await Deno.writeTextFile(join(workspace.dir, "test/held_out.test.js"), secret);
    await Deno.writeTextFile(join(workspace.dir, "README.md"), "changed\n");
    await git(workspace.dir, "add", "-A");
    const blob = await git(workspace.dir, "hash-object", "test/held_out.test.js");
    // The worker's repository: no worktree of the verifier's, no blob of its test.
    assert.doesNotMatch(await git(repo.path, "worktree", "list"), /finishline-verifier-/);
    const probe = await new Deno.Command("git", {
      args: ["cat-file", "-e", blob],
      cwd: repo.path,
      stderr: "null",
    }).output();
    assert.equal(probe.success, false, "the held-out test's blob is in the worker's store");
    const written = await workspace.written((path) => path.startsWith("test/"));
    assert.deepEqual(written.files, [{ path: "test/held_out.test.js", content: secret }]);
    assert.deepEqual(written.others, ["README.md"]);
  } finally {
    await workspace.remove();
  }
  assert.equal(await Deno.stat(workspace.dir).then(() => true, () => false), false);
});

Deno.test("the kept copy of the held-out test is checked against its hashes before use", async () => {
  const store = await HeldOutStore.save([{ path: "test/a.test.js", content: "assert(1)\n" }]);
  try {
    assert.deepEqual(await store.load(), [{ path: "test/a.test.js", content: "assert(1)\n" }]);
    const [kept] = store.kept;
    const dir = (await Array.fromAsync(Deno.readDir(Deno.env.get("TMPDIR") ?? "/tmp")))
      .map((entry) => join(Deno.env.get("TMPDIR") ?? "/tmp", entry.name))
      .find((path) => {
        try {
          return Deno.statSync(join(path, kept.sha256)).isFile;
        } catch {
          return false;
        }
      })!;
    await Deno.writeTextFile(join(dir, kept.sha256), "assert(true)\n");
    assert.match(String(await store.load()), /changed since the verifier stopped/);
  } finally {
    await store.remove();
  }
});
