/**
 * Dependency folders: every file compared with the start, each clean copy
 * with its own copy of them, put back before every run of checks. With the
 * real package managers: pnpm 11 in a workspace (its checks relink `.bin`
 * and rewrite `.modules.yaml`), npm, yarn 4 with plug'n'play, and a Python
 * venv; real git, real `node --test`.
 */

import assert from "node:assert/strict";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { DependencySnapshot, listTree } from "../../../agents/evidence/copy/dependency_tree.ts";
import { DependencyCopy } from "../../../agents/evidence/copy/dependency_copy.ts";
import { dependencyEntries } from "../../../agents/evidence/copy/dependency_folders.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import type { RepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";
import { pinnedVersion } from "../../pinned/mod.ts";
import {
  BROKEN_A,
  commitAll,
  FIXED_A,
  LIB_X,
  pnpmWorkspace,
  sh,
  TEST_A,
  toolBin,
  write,
} from "./_package_managers.ts";

function context(repo: GitRepo, base: string) {
  return { cwd: repo.root, git: { repo, baseline: base } } as never;
}

/** The listing of a folder's dependency entries with inodes and times: any write moves it. */
async function fingerprint(root: string, entries: readonly string[]): Promise<string> {
  return JSON.stringify([...await listTree(root, entries)].sort());
}

/** A claim on the gate: the baseline on `base`, then `act` in the checkout, committed, claimed. */
async function claim(
  repo: string,
  checks: RepoCheck[],
  act: (root: string) => Promise<void>,
) {
  const gitRepo = (await GitRepo.open(repo))!;
  const base = await git(repo, "rev-parse", "HEAD");
  await using gate = new RepoChecksChecker({ checks, timeoutMs: 600_000 });
  await gate.recordStart(gitRepo);
  const baseline = await gate.startBaseline(gitRepo, base);
  await act(repo);
  await commitAll(repo, "fix");
  const result = await gate.check(context(gitRepo, base));
  return { result, evidence: gate.evidence, baseline };
}

Deno.test("every file of a dependency folder is compared with the start", async (t) => {
  await using dir = await tempDir();
  const root = dir.path;
  await write(root, {
    "node_modules/some-pkg/package.json": '{ "name": "some-pkg", "main": "index.js" }',
    "node_modules/some-pkg/index.js": 'module.exports = require("./lib/x.js");\n',
    "node_modules/some-pkg/lib/x.js": "module.exports = (a, b) => a - b;\n",
    "node_modules/.modules.yaml": "prunedAt: then\n",
  });
  const start = await DependencySnapshot.take(root, ["node_modules"]);
  await start.hashed();

  await t.step(
    "a file deep inside a package, edited in place with its size and time kept",
    async () => {
      const file = `${root}/node_modules/some-pkg/lib/x.js`;
      const info = await Deno.stat(file);
      await Deno.writeTextFile(file, "module.exports = (a, b) => a + b;\n");
      await Deno.utime(file, info.atime!, info.mtime!);
      assert.deepEqual(await start.changes(root), ["node_modules/some-pkg/lib/x.js (changed)"]);
      await Deno.writeTextFile(file, "module.exports = (a, b) => a - b;\n");
    },
  );

  await t.step("a file written again with the same bytes is no change", async () => {
    const file = `${root}/node_modules/some-pkg/index.js`;
    await Deno.remove(file);
    await Deno.writeTextFile(file, 'module.exports = require("./lib/x.js");\n');
    assert.deepEqual(await start.changes(root), []);
  });

  await t.step("caches and the package manager's records are not compared", async () => {
    await write(root, {
      "node_modules/.cache/babel/x.json": "{}",
      "node_modules/.vite/deps/_metadata.json": "{}",
      "node_modules/.modules.yaml": "prunedAt: now\n",
      "node_modules/.pnpm-task-run-state-v1/latest.json": "{}",
    });
    assert.deepEqual(await start.changes(root), []);
  });

  await t.step("added, removed and relinked entries are named", async () => {
    await write(root, { "node_modules/.bin/node": "#!/bin/sh\n" });
    await Deno.remove(`${root}/node_modules/some-pkg/package.json`);
    assert.deepEqual(await start.changes(root), [
      "node_modules/.bin (added)",
      "node_modules/.bin/node (added)",
      "node_modules/some-pkg/package.json (removed)",
    ]);
  });
});

Deno.test("a clean copy's dependency folders are its own, and put back before every run", async (t) => {
  await using dir = await tempDir();
  const checkout = `${dir.path}/checkout`;
  const copyDir = `${dir.path}/copy`;
  await write(checkout, {
    "node_modules/pkg/package.json": '{ "name": "pkg" }',
    "node_modules/pkg/lib/x.js": "module.exports = 1;\n",
    "node_modules/.modules.yaml": "prunedAt: then\n",
  });
  await Deno.mkdir(`${checkout}/node_modules/.bin`);
  await Deno.symlink("../pkg/lib/x.js", `${checkout}/node_modules/.bin/pkg`);
  await Deno.mkdir(copyDir);
  const start = await DependencySnapshot.take(checkout, ["node_modules"]);
  const before = await fingerprint(checkout, ["node_modules"]);
  const copy = new DependencyCopy(start, copyDir);
  assert.equal(await copy.place("node_modules"), undefined);

  await t.step("a check writing in place into the copy never reaches the checkout", async () => {
    const file = await Deno.open(`${copyDir}/node_modules/pkg/lib/x.js`, { write: true });
    await file.write(new TextEncoder().encode("module.exports = 2;\n"));
    file.close();
    await Deno.writeTextFile(`${copyDir}/node_modules/.modules.yaml`, "prunedAt: now\n");
    await Deno.remove(`${copyDir}/node_modules/.bin/pkg`);
    await Deno.symlink("../elsewhere.js", `${copyDir}/node_modules/.bin/pkg`);
    await write(copyDir, {
      "node_modules/.bin/node": "#!/bin/sh\necho ok\n",
      "node_modules/.cache/x": "1",
    });
    assert.equal(await fingerprint(checkout, ["node_modules"]), before);
    assert.deepEqual(await start.changes(checkout), []);
  });

  await t.step("the reset undoes every write the checks made", async () => {
    assert.ok((await start.changes(copyDir)).length > 0);
    assert.equal(await copy.reset(), undefined);
    assert.deepEqual(await start.changes(copyDir), []);
    assert.equal(
      await Deno.readTextFile(`${copyDir}/node_modules/.modules.yaml`),
      "prunedAt: then\n",
    );
    assert.equal(await Deno.readLink(`${copyDir}/node_modules/.bin/pkg`), "../pkg/lib/x.js");
    await assert.rejects(Deno.lstat(`${copyDir}/node_modules/.cache`));
    await assert.rejects(Deno.lstat(`${copyDir}/node_modules/.bin/node`));
  });

  await t.step("a copy is not made from a checkout changed since the start", async () => {
    await Deno.writeTextFile(`${checkout}/node_modules/pkg/lib/x.js`, "module.exports = 3;\n");
    const other = new DependencyCopy(start, `${dir.path}/other`);
    await Deno.mkdir(`${dir.path}/other`);
    assert.match(
      await other.place("node_modules") ?? "",
      /node_modules\/pkg\/lib\/x\.js changed in the checkout since the run started/,
    );
  });
});

Deno.test("pnpm 11 workspace: checks that relink .bin and rewrite .modules.yaml are not the agent's change", async (t) => {
  await using tools = await tempDir();
  const bin = await toolBin(tools.path);
  await using repo = await tempRepo();
  await pnpmWorkspace(repo.path, bin, `${tools.path}/store`);
  const gitRepo = (await GitRepo.open(repo.path))!;
  const entries = await dependencyEntries(gitRepo, "HEAD");
  assert.deepEqual(entries, ["node_modules", "packages/a/node_modules", "packages/b/node_modules"]);
  // The check relinks every package from pnpm's store (.bin, .modules.yaml, .pnpm), then tests.
  const checks: RepoCheck[] = [{
    name: "pnpm test",
    command:
      `PATH="${bin}:$PATH" pnpm install --offline --frozen-lockfile --force && PATH="${bin}:$PATH" pnpm test`,
    runner: "node",
  }];

  await t.step(
    "the correct fix completes, and the checkout's folders stay as they were",
    async () => {
      const before = await fingerprint(repo.path, entries);
      const { result, evidence, baseline } = await claim(repo.path, checks, async (root) => {
        await Deno.writeTextFile(`${root}/packages/a/index.js`, FIXED_A);
      });
      assert.equal(baseline.runs[0]?.green, false, "the bug is red at the baseline");
      assert.equal(result.complete, true, result.feedback);
      assert.equal(evidence?.dependencyChanges, undefined);
      assert.equal(await fingerprint(repo.path, entries), before);
    },
  );

  await t.step("an edited file deep in the installed package is refused, named", async () => {
    const [store] = await Array.fromAsync(Deno.readDir(`${repo.path}/node_modules/.pnpm`))
      .then((found) => found.filter((entry) => entry.name.startsWith("lib-x@")));
    const deep = `node_modules/.pnpm/${store.name}/node_modules/lib-x/lib/x.js`;
    const { result, evidence } = await claim(repo.path, checks, async (root) => {
      // The bug made to pass by changing the dependency instead of the code.
      await Deno.writeTextFile(`${root}/packages/a/index.js`, BROKEN_A);
      await Deno.writeTextFile(
        `${root}/${deep}`,
        "module.exports = (n) => n * 2 + 4 / 3 - 4 / 3;\n",
      );
    });
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      new RegExp(`You changed ${RegExp.escape(deep)} \\(changed\\)`),
    );
    assert.deepEqual(evidence?.dependencyChanges, [`${deep} (changed)`]);
    assert.deepEqual(evidence?.checks, []);
  });
});

Deno.test("npm: an edited node_modules/some-pkg/lib/x.js is refused, named; the checks do not run", async () => {
  await using repo = await tempRepo();
  await write(repo.path, {
    ".gitignore": "node_modules\n*.tgz\n",
    ...LIB_X,
    "package.json": JSON.stringify({
      name: "app",
      private: true,
      scripts: { test: "node --test" },
    }),
    "index.js": BROKEN_A,
    "a.test.js": TEST_A,
  });
  await sh(
    repo.path,
    "npm pack --silent ./deps/lib-x >/dev/null && npm install --offline --no-audit --no-fund ./lib-x-1.0.0.tgz",
  );
  await commitAll(repo.path, "start");
  const { result, evidence } = await claim(
    repo.path,
    [{ name: "npm test", command: "npm test", runner: "node" }],
    async (root) => {
      await Deno.writeTextFile(
        `${root}/node_modules/lib-x/lib/x.js`,
        "module.exports = (n) => n * 2 + 1;\n",
      );
    },
  );
  assert.equal(result.complete, false);
  assert.match(
    result.feedback!,
    /You changed node_modules\/lib-x\/lib\/x\.js \(changed\); dependency folders are not yours to change/,
  );
  assert.deepEqual(evidence?.dependencyChanges, ["node_modules/lib-x/lib/x.js (changed)"]);
});

/** A yarn 4 project with plug'n'play (no node_modules): lib-x zipped in .yarn/cache, installed offline. */
async function yarnProject(root: string, bin: string): Promise<void> {
  await write(root, {
    ".gitignore": ".yarn/cache\n.yarn/install-state.gz\n.pnp.*\n",
    ".yarnrc.yml": "nodeLinker: pnp\nenableGlobalCache: false\nenableTelemetry: false\n",
    ...LIB_X,
    "package.json": JSON.stringify({
      name: "app",
      private: true,
      packageManager: `yarn@${pinnedVersion("@yarnpkg/cli-dist")}`,
      scripts: { test: "node --test" },
      dependencies: { "lib-x": "file:./deps/lib-x" },
    }),
    "index.js": BROKEN_A,
    "a.test.js": TEST_A,
  });
  await sh(root, "yarn install --no-immutable", {
    PATH: `${bin}:${Deno.env.get("PATH")}`,
    YARN_ENABLE_NETWORK: "0",
  });
  await commitAll(root, "start");
}

Deno.test("yarn plug'n'play: the fix completes; an edited .pnp.cjs or package zip is refused", async (t) => {
  await using tools = await tempDir();
  const bin = await toolBin(tools.path);
  const checks: RepoCheck[] = [{
    name: "yarn test",
    command: `PATH="${bin}:$PATH" yarn test`,
    runner: "node",
  }];

  await t.step("the correct fix completes", async () => {
    await using repo = await tempRepo();
    await yarnProject(repo.path, bin);
    const gitRepo = (await GitRepo.open(repo.path))!;
    assert.deepEqual(await dependencyEntries(gitRepo, "HEAD"), [
      ".pnp.cjs",
      ".yarn/cache",
      ".yarn/install-state.gz",
    ]);
    const { result, baseline } = await claim(repo.path, checks, async (root) => {
      await Deno.writeTextFile(`${root}/index.js`, FIXED_A);
    });
    assert.equal(baseline.runs[0]?.green, false);
    assert.equal(result.complete, true, result.feedback);
  });

  await t.step("an edited .pnp.cjs is refused", async () => {
    await using repo = await tempRepo();
    await yarnProject(repo.path, bin);
    const { result, evidence } = await claim(repo.path, checks, async (root) => {
      await Deno.writeTextFile(`${root}/.pnp.cjs`, "\n// patched\n", { append: true });
    });
    assert.equal(result.complete, false);
    assert.deepEqual(evidence?.dependencyChanges, [".pnp.cjs (changed)"]);
  });

  await t.step("a package zip in .yarn/cache, rewritten, is refused", async () => {
    await using repo = await tempRepo();
    await yarnProject(repo.path, bin);
    const [zip] = await Array.fromAsync(Deno.readDir(`${repo.path}/.yarn/cache`));
    const { result, evidence } = await claim(repo.path, checks, async (root) => {
      const file = `${root}/.yarn/cache/${zip.name}`;
      const bytes = await Deno.readFile(file);
      bytes[bytes.length - 1] ^= 1;
      await Deno.writeFile(file, bytes);
    });
    assert.equal(result.complete, false);
    assert.deepEqual(evidence?.dependencyChanges, [`.yarn/cache/${zip.name} (changed)`]);
    assert.match(result.feedback!, /dependency folders are not yours to change/);
  });
});

Deno.test("a Python .venv: a file edited deep in site-packages is refused, named", async () => {
  await using repo = await tempRepo();
  await write(repo.path, {
    ".gitignore": ".venv\n",
    "check.py": "import mathlib.ops.add as m\nassert m.add(2, 2) == 4\n",
  });
  await commitAll(repo.path, "start");
  await sh(repo.path, "python3 -m venv --without-pip .venv");
  const [lib] = await Array.fromAsync(Deno.readDir(`${repo.path}/.venv/lib`));
  const site = `.venv/lib/${lib.name}/site-packages`;
  await write(repo.path, {
    [`${site}/mathlib/__init__.py`]: "",
    [`${site}/mathlib/ops/__init__.py`]: "",
    [`${site}/mathlib/ops/add.py`]: "def add(a, b):\n    return a - b\n",
  });
  const checks: RepoCheck[] = [{ name: "check", command: ".venv/bin/python check.py" }];
  const { result, evidence } = await claim(repo.path, checks, async (root) => {
    await Deno.writeTextFile(
      `${root}/${site}/mathlib/ops/add.py`,
      "def add(a, b):\n    return a + b\n",
    );
    await Deno.writeTextFile(`${root}/NOTES.md`, "fixed\n");
  });
  assert.equal(result.complete, false);
  assert.deepEqual(evidence?.dependencyChanges, [`${site}/mathlib/ops/add.py (changed)`]);
});

Deno.test("a copied .venv names the copy, not the checkout, in its scripts and editable installs", async () => {
  await using dir = await tempDir();
  const checkout = `${dir.path}/checkout`;
  const copyDir = `${dir.path}/copy`;
  const site = ".venv/lib/python3.11/site-packages";
  await write(checkout, {
    ".venv/pyvenv.cfg": "home = /usr/bin\n",
    ".venv/bin/pytest": `#!${checkout}/.venv/bin/python\nimport pytest\n`,
    [`${site}/__editable__.app-1.0.pth`]: `${checkout}/src\n`,
    [`${site}/__editable___app_1_0_finder.py`]: `MAPPING = {'app': '${checkout}/src/app'}\n`,
    [`${site}/other.pth`]: "/usr/lib/python3/dist-packages\n",
  });
  await Deno.mkdir(copyDir);
  const start = await DependencySnapshot.take(checkout, [".venv"]);
  const copy = new DependencyCopy(start, copyDir);
  assert.equal(await copy.place(".venv"), undefined);
  assert.equal(
    await Deno.readTextFile(`${copyDir}/.venv/bin/pytest`),
    `#!${copyDir}/.venv/bin/python\nimport pytest\n`,
  );
  assert.equal(
    await Deno.readTextFile(`${copyDir}/${site}/__editable__.app-1.0.pth`),
    `${copyDir}/src\n`,
  );
  assert.match(
    await Deno.readTextFile(`${copyDir}/${site}/__editable___app_1_0_finder.py`),
    new RegExp(RegExp.escape(`${copyDir}/src/app`)),
  );
  assert.deepEqual(await start.changes(checkout), []);
  // A check that rewrites the script is undone, and the copy still names itself.
  await Deno.writeTextFile(`${copyDir}/.venv/bin/pytest`, "#!/bin/sh\necho passed\n");
  assert.equal(await copy.reset(), undefined);
  assert.equal(
    await Deno.readTextFile(`${copyDir}/.venv/bin/pytest`),
    `#!${copyDir}/.venv/bin/python\nimport pytest\n`,
  );
});

Deno.test("a node_modules kept elsewhere behind a link is listed, compared and copied as the folder it leads to", async () => {
  await using dir = await tempDir();
  const checkout = `${dir.path}/checkout`;
  const copyDir = `${dir.path}/copy`;
  await write(dir.path, { "shared/pkg/lib/x.js": "module.exports = 1;\n" });
  await Deno.mkdir(checkout);
  await Deno.mkdir(copyDir);
  await Deno.symlink(`${dir.path}/shared`, `${checkout}/node_modules`);
  const start = await DependencySnapshot.take(checkout, ["node_modules"]);
  const copy = new DependencyCopy(start, copyDir);
  assert.equal(await copy.place("node_modules"), undefined);
  assert.ok((await Deno.lstat(`${copyDir}/node_modules`)).isDirectory, "copied, not linked again");
  // A check writing into the copy does not reach the folder the checkout links to.
  await Deno.writeTextFile(`${copyDir}/node_modules/pkg/lib/x.js`, "module.exports = 2;\n");
  assert.equal(await Deno.readTextFile(`${dir.path}/shared/pkg/lib/x.js`), "module.exports = 1;\n");
  assert.equal(await copy.reset(), undefined);
  assert.equal(
    await Deno.readTextFile(`${copyDir}/node_modules/pkg/lib/x.js`),
    "module.exports = 1;\n",
  );
  // The agent editing it through the link is seen.
  await Deno.writeTextFile(`${checkout}/node_modules/pkg/lib/x.js`, "module.exports = 3;\n");
  assert.deepEqual(await start.changes(checkout), ["node_modules/pkg/lib/x.js (changed)"]);
});
