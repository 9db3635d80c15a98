/**
 * Fixtures with the real package managers for the dependency-folder tests:
 * `pnpm` 11 and yarn 4 from the pinned test-only packages, and projects
 * whose dependency is a local package (nothing is downloaded).
 *
 * @module
 */

import assert from "node:assert/strict";
import { git } from "../../_helpers.ts";
import { cacheTool, pinned, pinnedVersion, TOOLS_CONFIG } from "../../pinned/mod.ts";

export async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(`${root}/${file}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${root}/${file}`, text);
  }
}

export async function commitAll(root: string, message = "work"): Promise<string> {
  await git(root, "add", "-A");
  await git(root, "commit", "--allow-empty", "-qm", message);
  return await git(root, "rev-parse", "HEAD");
}

/** Runs a shell command in `cwd`, which must succeed; returns its output. */
export async function sh(
  cwd: string,
  command: string,
  env: Record<string, string> = {},
): Promise<string> {
  const out = await new Deno.Command("sh", {
    args: ["-c", command],
    cwd,
    env: { CI: "true", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `${command}:\n${text}`);
  return text;
}

/** A folder on PATH (in `dir`, with a temp folder of theirs) with `pnpm` (run by Deno: pnpm 11 wants a newer Node) and `yarn` (run by Node). */
export async function toolBin(dir: string): Promise<string> {
  const bin = `${dir}/bin`;
  await Deno.mkdir(bin);
  // pnpm leaves a lock folder in the temp folder: theirs is the test's own.
  const tmp = `${dir}/tmp`;
  await Deno.mkdir(tmp);
  await cacheTool("pnpm");
  await cacheTool("@yarnpkg/cli-dist");
  const info = JSON.parse(
    new TextDecoder().decode(
      (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
        .output()).stdout,
    ),
  );
  const yarn = `${info.npmCache}/registry.npmjs.org/@yarnpkg/cli-dist/${
    pinnedVersion("@yarnpkg/cli-dist")
  }/bin/yarn.js`;
  await Deno.writeTextFile(
    `${bin}/pnpm`,
    `#!/bin/sh\nexport TMPDIR="${tmp}"\nexec "${Deno.execPath()}" run -A --frozen --config "${TOOLS_CONFIG}" ${
      pinned("pnpm")
    } "$@"\n`,
  );
  await Deno.writeTextFile(
    `${bin}/yarn`,
    `#!/bin/sh\nexport TMPDIR="${tmp}"\nexec node "${yarn}" "$@"\n`,
  );
  await Deno.chmod(`${bin}/pnpm`, 0o755);
  await Deno.chmod(`${bin}/yarn`, 0o755);
  return bin;
}

/** A dependency of the fixtures, as a local package: nothing is downloaded. */
export const LIB_X: Record<string, string> = {
  "deps/lib-x/package.json":
    '{ "name": "lib-x", "version": "1.0.0", "main": "lib/index.js", "bin": { "libx": "bin/libx.js" } }',
  "deps/lib-x/lib/index.js": 'module.exports = { double: (n) => require("./x.js")(n) };\n',
  "deps/lib-x/lib/x.js": "module.exports = (n) => n * 2;\n",
  "deps/lib-x/bin/libx.js": '#!/usr/bin/env node\nconsole.log("libx");\n',
};
export const TEST_A: string = `const test = require("node:test");
const assert = require("node:assert");
const { quadruple } = require("./index.js");
test("quadruples", () => assert.equal(quadruple(3), 12));
`;
export const BROKEN_A: string =
  'const { double } = require("lib-x");\nexports.quadruple = (n) => double(n) + 2;\n';
export const FIXED_A: string =
  'const { double } = require("lib-x");\nexports.quadruple = (n) => double(double(n));\n';

/** A pnpm 11 workspace of two packages (b uses a, a uses lib-x), a bug in a, installed offline. */
export async function pnpmWorkspace(root: string, bin: string, store: string): Promise<void> {
  await write(root, {
    ".gitignore": "node_modules\n",
    "package.json": '{ "name": "ws", "private": true, "scripts": { "test": "pnpm -r test" } }',
    "pnpm-workspace.yaml": `packages:\n  - "packages/*"\nstoreDir: ${store}\n`,
    ...LIB_X,
    "packages/a/package.json": JSON.stringify({
      name: "a",
      version: "1.0.0",
      main: "index.js",
      scripts: { test: "node --test" },
      dependencies: { "lib-x": "file:../../deps/lib-x-1.0.0.tgz" },
    }),
    "packages/a/index.js": BROKEN_A,
    "packages/a/a.test.js": TEST_A,
    "packages/b/package.json": JSON.stringify({
      name: "b",
      version: "1.0.0",
      scripts: { test: "node --test" },
      dependencies: { a: "workspace:*" },
    }),
    "packages/b/b.test.js":
      'require("node:test")("b uses a", () => require("node:assert").equal(require("a").quadruple(1), 4));\n',
  });
  // A packed release, as from a registry: pnpm unpacks it into its store, not the repository.
  await sh(root, "npm pack --silent --pack-destination deps ./deps/lib-x >/dev/null");
  await sh(root, "pnpm install --offline", { PATH: `${bin}:${Deno.env.get("PATH")}` });
  await commitAll(root, "start");
}
