/**
 * finishline as an installed tool: `deno task install` (the command it runs,
 * into a temp root) makes a `finishline` command that works from anywhere, and
 * agents, `--init`, `--list` and the history are found from any subfolder of a
 * repository, up to its root.
 */

import assert from "node:assert/strict";
import config from "../../deno.json" with { type: "json" };
import { denoDir, git, tempDir, tempRepo } from "../_helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const output = await new Deno.Command(command, {
    args,
    cwd,
    env: { NO_COLOR: "1", DENO_DIR: await denoDir(), ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("deno task install makes a finishline command that finds the repository's agents from a subfolder", async () => {
  await using root = await tempDir("finishline-install-");
  // The task's own command, into a temp root instead of ~/.deno.
  const [deno, ...args] = config.tasks.install.split(" ");
  assert.equal(deno, "deno");
  const install = await run(Deno.execPath(), [...args, "--root", root.path], ROOT);
  assert.equal(install.code, 0, install.stderr);
  assert.match(install.stderr, /installed .*bin\/finishline; it runs this checkout/);
  const finishline = `${root.path}/bin/finishline`;
  // Another install does not replace it silently: exit 2, one line, the shim untouched.
  const shim = await Deno.readTextFile(finishline);
  const again = await run(Deno.execPath(), [...args, "--root", root.path], ROOT);
  assert.equal(again.code, 2, again.stderr);
  assert.match(
    again.stderr,
    /^finishline install: ".*bin\/finishline" exists already; nothing was changed \(deno task install --force replaces it\)\n$/,
  );
  assert.equal(await Deno.readTextFile(finishline), shim);
  const forced = await run(Deno.execPath(), [...args, "--root", root.path, "--force"], ROOT);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stderr, /replaced .*bin\/finishline/);

  await using repo = await tempRepo();
  const deep = `${repo.path}/src/deep`;
  await Deno.mkdir(deep, { recursive: true });
  assert.equal(
    (await run(finishline, ["--version"], deep)).stdout,
    `finishline ${config.version}\n`,
  );
  // The help names the command as it was run: bash and zsh say so in "_"; fish does not,
  // and the install root is looked in.
  const usage = /^Usage:\n {2}\S*finishline \[flags\]/m;
  assert.match((await run(finishline, ["--help"], deep, { _: finishline })).stdout, usage);
  const fish = await new Deno.Command(finishline, {
    args: ["--help"],
    cwd: deep,
    clearEnv: true,
    env: {
      HOME: Deno.env.get("HOME")!,
      DENO_DIR: await denoDir(),
      DENO_INSTALL_ROOT: root.path,
      PATH: `${root.path}/bin:${Deno.env.get("PATH")}`,
    },
    stdout: "piped",
  }).output();
  assert.match(
    new TextDecoder().decode(fish.stdout),
    /^Usage:\n {2}finishline \[flags\]/m,
    "by its name, on the PATH",
  );

  // --init from a subfolder scaffolds at the repository's root, and says where.
  const init = await run(finishline, ["--init", "docs"], deep);
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /^created \.\.\/\.\.\/\.agent\/docs\/agent\.json$/m);
  await Deno.stat(`${repo.path}/.agent/docs/agent.json`);
  await git(repo.path, "add", ".agent");
  await git(repo.path, "commit", "-qm", "add the docs agent");

  const list = await run(finishline, ["--list"], deep);
  assert.match(list.stdout, /^docs +local/m);
  const dry = await run(finishline, ["--agent", "docs", "--dry-run", "--goal", "Tidy up"], deep);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^Agent: +docs \(local: \.\.\/\.\.\/\.agent\/docs\/agent\.json\)$/m);

  // Outside any repository, an unknown agent is named with the folder it was looked for in.
  await using elsewhere = await tempDir("finishline-elsewhere-");
  const missing = await run(finishline, ["--agent", "docs", "--dry-run"], elsewhere.path);
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /^finishline: Unknown agent "docs": found no ".agent\/docs\/agent.json"/,
  );
});

Deno.test("a repository's subfolder with its own .agent/ is where agents are looked up from below it", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/packages/web/src`, { recursive: true });
  await Deno.mkdir(`${repo.path}/packages/web/.agent`, { recursive: true });
  const main = `${ROOT}agents/iterator/main.ts`;
  const init = await run(
    Deno.execPath(),
    ["run", "-A", main, "--init", "web"],
    `${repo.path}/packages/web/src`,
  );
  assert.equal(init.code, 0, init.stderr);
  await Deno.stat(`${repo.path}/packages/web/.agent/web/agent.json`);
  await assert.rejects(Deno.stat(`${repo.path}/.agent/web`), Deno.errors.NotFound);
});
