/**
 * `verify.sandbox` where no sandbox can be had (a `bwrap` that cannot make a
 * user namespace, as on Ubuntu 24.04 with AppArmor's restriction): `auto`
 * says so in one line at the start and goes on, `required` refuses with one
 * line and exit 2, nothing written. The real CLI.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { commitAgent, git, runCli, tempDir, tempRepo } from "../_helpers.ts";

/** A bwrap that fails as a restricted kernel makes it fail. */
async function deniedBwrap(dir: string): Promise<Record<string, string>> {
  const path = join(dir, "bwrap");
  await Deno.writeTextFile(
    path,
    "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
  );
  await Deno.chmod(path, 0o755);
  return { PATH: `${dir}:${Deno.env.get("PATH")}` };
}

Deno.test("verify.sandbox without a sandbox: auto says so in one line, required is exit 2 with nothing written", async (t) => {
  await using repo = await tempRepo();
  await using bin = await tempDir("finishline-no-bwrap-");
  const env = await deniedBwrap(bin.path);
  await commitAgent(repo.path, {
    name: "auto",
    behavior: { completionType: "iterate", completionConfig: { maxIterations: 1 } },
  });
  await commitAgent(repo.path, {
    name: "strict",
    behavior: { completionType: "iterate", completionConfig: { maxIterations: 1 } },
    verify: { sandbox: "required" },
  });

  await t.step("auto: one line at the start, then the run goes on", async () => {
    const run = await runCli(["--agent", "auto", "--task", "x", "--dry-run"], {
      cwd: repo.path,
      env,
    });
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stderr.split("\n").filter((line) => line.includes("no sandbox"));
    assert.deepEqual(lines, [
      "[finishline] no sandbox (bwrap cannot make a sandbox here: bwrap: setting up uid map: Permission denied): agent sessions run unsandboxed, with your home and /tmp in reach",
    ]);
  });

  await t.step("required: exit 2, one line naming the setting, nothing written", async () => {
    const run = await runCli(["--agent", "strict", "--task", "x"], { cwd: repo.path, env });
    assert.equal(run.code, 2, run.stderr);
    const said = run.stderr.trim();
    assert.equal(said.split("\n").length, 1, said);
    assert.match(said, /"verify\.sandbox" is "required" and bwrap cannot make a sandbox here/);
    assert.equal(await git(repo.path, "status", "--porcelain", "--ignored"), "");
  });
});
