/**
 * The clean copy is made from git's objects, in a repository only
 * finishline writes: whatever the agent does to the user's repository, its
 * config or the user's global git config, the checks run on the bytes the
 * commit holds, and the gate's diffs read them. Each cheat is refused and
 * the honest fix still passes. Real git in temp repositories, real
 * `node --test` through npm.
 */

import assert from "node:assert/strict";
import { commitAll, gateProject, NODE_TEST, PACKAGE_JSON, write } from "../_gate_project.ts";
import { git, tempDir } from "../../_helpers.ts";
import { CheckWorktree } from "../../../agents/evidence/copy/worktree_run.ts";
import { GitRepo } from "../../../agents/git/repo.ts";

const BROKEN = "exports.add = (a, b) => a - b;\n";
const FIXED = "exports.add = (a, b) => a + b;\n";
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 3), 5));
`;
const FILES = {
  ".gitignore": "node_modules\n",
  "package.json": PACKAGE_JSON,
  "src/math.js": BROKEN,
  "test/math.test.js": TEST,
};

/** A global git config of the user's for the test's duration (the agent wrote it). */
async function withGlobalConfig<T>(text: string, body: () => Promise<T>): Promise<T> {
  await using dir = await tempDir();
  const file = `${dir.path}/gitconfig`;
  await Deno.writeTextFile(file, text.replaceAll("$DIR", dir.path));
  const before = Deno.env.get("GIT_CONFIG_GLOBAL");
  Deno.env.set("GIT_CONFIG_GLOBAL", file);
  try {
    return await body();
  } finally {
    if (before === undefined) Deno.env.delete("GIT_CONFIG_GLOBAL");
    else Deno.env.set("GIT_CONFIG_GLOBAL", before);
  }
}

/** The fix, committed honestly: it must pass. */
async function honestFix(project: { repo: { path: string }; claim: () => Promise<unknown> }) {
  await Deno.remove(`${project.repo.path}/.gitattributes`).catch(() => {});
  await write(project.repo.path, { "src/math.js": FIXED });
  await commitAll(project.repo.path, "fix: add adds");
  const result = await project.claim() as { complete: boolean; feedback?: string };
  assert.equal(result.complete, true, result.feedback);
}

Deno.test("objects replaced through refs/replace never reach the checks", async () => {
  await using project = await gateProject({ files: FILES, checks: [NODE_TEST] });
  const root = project.repo.path;
  const buggy = await git(root, "rev-parse", "HEAD:src/math.js");
  await Deno.writeTextFile(`${root}/fixed.js`, FIXED);
  const fixed = await git(root, "hash-object", "-w", "fixed.js");
  await Deno.remove(`${root}/fixed.js`);
  await git(root, "replace", buggy, fixed);
  await write(root, { "NOTES.md": "done\n" });
  await commitAll(root, "docs: notes");
  // git itself now shows the fixed code at HEAD.
  assert.equal(await git(root, "show", "HEAD:src/math.js"), FIXED.trim());
  const result = await project.claim();
  assert.equal(result.complete, false);
  assert.match(result.feedback!, /"adds"/);
  await git(root, "replace", "-d", buggy);
  await honestFix(project);
});

Deno.test("a filter driver in the user's global config never runs for the copy", async (t) => {
  for (
    const [name, config] of [
      ["set directly", `[filter "fix"]\n\tsmudge = sed 's/a - b/a + b/'\n\tclean = cat\n`],
      [
        "through includeIf",
        `[includeIf "gitdir:/"]\n\tpath = $DIR/included\n`,
      ],
      [
        "with core.attributesFile and no committed .gitattributes",
        `[core]\n\tattributesFile = $DIR/attributes\n[filter "fix"]\n\tsmudge = sed 's/a - b/a + b/'\n\tclean = cat\n`,
      ],
    ] as const
  ) {
    await t.step(name, async () => {
      await using project = await gateProject({ files: FILES, checks: [NODE_TEST] });
      const root = project.repo.path;
      await withGlobalConfig(config, async () => {
        const dir = Deno.env.get("GIT_CONFIG_GLOBAL")!.replace(/\/gitconfig$/, "");
        await Deno.writeTextFile(
          `${dir}/included`,
          `[filter "fix"]\n\tsmudge = sed 's/a - b/a + b/'\n\tclean = cat\n`,
        );
        await Deno.writeTextFile(`${dir}/attributes`, "src/math.js filter=fix\n");
        if (!name.includes("attributesFile")) {
          await write(root, { ".gitattributes": "src/math.js filter=fix\n" });
        } else {
          await write(root, { "NOTES.md": "done\n" });
        }
        await commitAll(root, "chore: attributes");
        // A checkout of the user's git would run the filter: the cheat works there.
        await git(root, "worktree", "add", "-q", "--detach", `${dir}/check`, "HEAD");
        assert.equal(await Deno.readTextFile(`${dir}/check/src/math.js`), FIXED);
        await git(root, "worktree", "remove", "--force", `${dir}/check`);
        const result = await project.claim();
        assert.equal(result.complete, false, "the filter did not run");
        assert.match(result.feedback!, /"adds"/);
        await honestFix(project);
      });
    });
  }
});

Deno.test("a -diff attribute hides no line from the special-case scan", async () => {
  await using project = await gateProject({ files: FILES, checks: [NODE_TEST] });
  const root = project.repo.path;
  await write(root, {
    ".gitattributes": "*.js -diff\n",
    "src/math.js":
      "exports.add = (a, b) => {\n  if (a === 2 && b === 3) return 5;\n  return a - b;\n};\n",
  });
  await commitAll(root, "fix: add");
  // The user's git shows no line of the change.
  assert.match(await git(root, "diff", "HEAD~1", "HEAD", "--", "src/math.js"), /^Binary files/m);
  const result = await project.claim();
  assert.equal(result.complete, false);
  assert.match(result.feedback!, /special-cases the values the tests use: src\/math.js:2/);
  await honestFix(project);
});

Deno.test("a tracked link out of the commit is refused before the checks run", async () => {
  await using project = await gateProject({ files: FILES, checks: [NODE_TEST] });
  await using outside = await tempDir();
  const root = project.repo.path;
  await Deno.writeTextFile(`${outside.path}/math.js`, FIXED);
  await Deno.remove(`${root}/src/math.js`);
  await Deno.symlink(`${outside.path}/math.js`, `${root}/src/math.js`);
  await commitAll(root, "fix: add");
  const result = await project.claim();
  assert.equal(result.complete, false);
  assert.match(result.feedback!, /"src\/math.js" \(a link to ".*", outside the commit/);
  assert.equal(project.gate.evidence?.checks.length, 0, "the checks did not run");
  await Deno.remove(`${root}/src/math.js`);
  await honestFix(project);
});

Deno.test("a source file git calls binary by its content is a finding", async () => {
  await using project = await gateProject({ files: FILES, checks: [NODE_TEST] });
  const root = project.repo.path;
  await write(root, { "src/math.js": `// \0 hidden\n${FIXED}` });
  await commitAll(root, "fix: add");
  const result = await project.claim();
  assert.equal(result.complete, false);
  assert.match(result.feedback!, /"src\/math.js" is a source file that git calls binary/);
  await honestFix(project);
});

Deno.test("a tree with a .git entry never reaches the copy", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await git(root, "init", "-q", "-b", "main");
  await write(root, { "README.md": "[core]\n\tfsmonitor = touch ran\n" });
  await git(root, "add", "-A");
  await git(root, "commit", "-qm", "start");
  // A hand-made tree: a folder named .git holding a config that runs a program.
  const config = await git(root, "hash-object", "-w", "README.md");
  const inner = await mktree(root, `100644 blob ${config}\tconfig\n`);
  const listed = await git(root, "ls-tree", "HEAD");
  const tree = await mktree(root, `${listed}\n040000 tree ${inner}\t.git\n`);
  const commit = await git(root, "commit-tree", tree, "-p", "HEAD", "-m", "sneaky");
  const repo = (await GitRepo.open(root))!;
  const copy = await CheckWorktree.create(repo, commit);
  if (copy instanceof CheckWorktree) await copy.remove();
  assert.equal(typeof copy, "string", "no copy is made");
  assert.match(copy as string, /cannot fetch .*(dotgit|\.git)/i);
});

/** `git mktree` of `text`. */
async function mktree(root: string, text: string): Promise<string> {
  const child = new Deno.Command("git", {
    args: ["mktree"],
    cwd: root,
    stdin: "piped",
    stdout: "piped",
  })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  return new TextDecoder().decode((await child.output()).stdout).trim();
}

Deno.test("line-ending, encoding and ident attributes do not change the copy's bytes", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await git(root, "init", "-q", "-b", "main");
  await write(root, { "eol.txt": "one\ntwo\n", "ident.txt": "$Id$\n", "utf16.txt": "plain\n" });
  await git(root, "add", "-A");
  await git(root, "commit", "-qm", "start");
  // The attributes come after: a checkout through them would change every byte of these.
  await write(root, {
    ".gitattributes":
      "eol.txt text eol=crlf\nident.txt ident\nutf16.txt working-tree-encoding=UTF-16LE\n",
  });
  await git(root, "add", ".gitattributes");
  await git(root, "commit", "-qm", "attributes");
  const repo = (await GitRepo.open(root))!;
  const copy = await CheckWorktree.create(repo, await git(root, "rev-parse", "HEAD"));
  assert.ok(copy instanceof CheckWorktree, String(copy));
  try {
    for (const file of ["eol.txt", "ident.txt", "utf16.txt"]) {
      assert.equal(
        await Deno.readTextFile(`${copy.dir}/${file}`),
        await git(root, "cat-file", "blob", `HEAD:${file}`) + "\n",
        file,
      );
    }
  } finally {
    await copy.remove();
  }
});

Deno.test("the copy is no worktree of the user's repository, and core.fsmonitor never runs", async () => {
  await using project = await gateProject({ files: FILES, checks: [NODE_TEST] });
  await using marks = await tempDir();
  const root = project.repo.path;
  await write(root, { "src/math.js": FIXED });
  await commitAll(root, "fix: add");
  await git(root, "config", "core.fsmonitor", `touch ${marks.path}/ran; false`);
  const result = await project.claim();
  assert.equal(result.complete, true, result.feedback);
  assert.equal((await git(root, "worktree", "list")).split("\n").length, 1);
  await assert.rejects(Deno.stat(`${marks.path}/ran`));
});

Deno.test("config and attributes a check plants in the copy's repository never reach the next claim", async () => {
  await using project = await gateProject({ files: FILES, checks: [NODE_TEST] });
  const root = project.repo.path;
  await write(root, {
    "test/plant.test.js": `const { execSync } = require("node:child_process");
const fs = require("node:fs");
const test = require("node:test");
test("plants", () => {
  const dir = execSync("git rev-parse --absolute-git-dir").toString().trim();
  fs.appendFileSync(dir + "/config", "[filter \\"fix\\"]\\n\\tsmudge = sed 's/a - b/a + b/'\\n\\tclean = cat\\n");
  fs.mkdirSync(dir + "/info", { recursive: true });
  fs.writeFileSync(dir + "/info/attributes", "src/math.js filter=fix\\n");
});
`,
  });
  await commitAll(root, "test: plant");
  const planted = await project.claim();
  assert.equal(planted.complete, false);
  await Deno.remove(`${root}/test/plant.test.js`);
  await write(root, { "src/math.js": `// add\n${BROKEN}` });
  await commitAll(root, "docs: comment");
  const result = await project.claim();
  assert.equal(result.complete, false, "the planted filter did not run");
  assert.match(result.feedback!, /"adds"/);
  await honestFix(project);
});
