/**
 * `deno task install [--force] [--root DIR]`: install this checkout's CLI as
 * the `finishline` command (`deno install -g`). An existing `finishline` is
 * kept unless `--force` is given: it may be another version, or another
 * checkout's.
 *
 * The installed command runs this checkout's `agents/iterator/main.ts`, so
 * it follows the checkout (a `git pull` updates it, removing the checkout
 * breaks it). A command that does not depend on a checkout comes from JSR:
 * `deno install -g -A -n finishline jsr:@finishline/agents/iterator`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import process from "node:process";

const ROOT = new URL("../", import.meta.url).pathname;

function fail(message: string): never {
  console.error(`finishline install: ${message}`);
  process.exit(2);
}

let values: { force?: boolean; root?: string };
try {
  ({ values } = parseArgs({
    args: Deno.args,
    options: { force: { type: "boolean" }, root: { type: "string" } },
    strict: true,
  }));
} catch (error) {
  fail(`${error instanceof Error ? error.message : error}: expected --force and --root DIR only`);
}

const home = Deno.env.get("HOME") ?? "";
const root = values.root ?? Deno.env.get("DENO_INSTALL_ROOT") ?? join(home, ".deno");
const bin = join(root, "bin", Deno.build.os === "windows" ? "finishline.cmd" : "finishline");
const shown = home && bin.startsWith(`${home}/`) ? `~/${bin.slice(home.length + 1)}` : bin;
const exists = await Deno.stat(bin).then(() => true, () => false);
if (exists && !values.force) {
  fail(`"${shown}" exists already; nothing was changed (deno task install --force replaces it)`);
}

const install = await new Deno.Command(Deno.execPath(), {
  args: [
    "install",
    "-g",
    "-A",
    ...(exists ? ["-f"] : []),
    "-n",
    "finishline",
    "--config",
    "deno.json",
    ...(values.root ? ["--root", values.root] : []),
    "agents/iterator/main.ts",
  ],
  cwd: ROOT,
  stdout: "inherit",
  stderr: "inherit",
}).output();
if (!install.success) process.exit(install.code || 1);
console.error(
  `finishline install: ${
    exists ? "replaced" : "installed"
  } ${shown}; it runs this checkout (keep it where it is). Without a checkout: deno install -g -A -n finishline jsr:@finishline/agents/iterator`,
);
