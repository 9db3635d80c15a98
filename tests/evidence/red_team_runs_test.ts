/**
 * Red team of the boundaries between the runs of one claim: each check after
 * the first starts from the commit's files (`restoreTree`), and a check asked
 * again (it may be flaky) runs in the copy made anew (`moveTo`). A worker
 * whose committed source still holds the bug wants a LATER run (the next
 * check, or the second run of the same check) to see what an EARLIER run
 * wrote. Each test asserts the claim is refused.
 * Real git in temp repositories, real `npm test` / `node --test`.
 */

import assert from "node:assert/strict";
import type { RepoCheck } from "../../agents/evidence/run/check_run.ts";
import {
  commitAll,
  type GateProject,
  gateProject,
  NODE_TEST,
  PACKAGE_JSON,
  write,
} from "./_gate_project.ts";

const BROKEN = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a + b;\n";
const FIXED = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a - b;\n";
/** The fix in bytes no commit holds: its blob is new to the copy's object store. */
const FIXED_NEW = `${FIXED}// fixed\n`;
/** Tests subtract: green at the start (the code is fixed there), red with the bug. */
const CATCHING_SUITE = `const test = require("node:test");
const assert = require("node:assert");
const { add, subtract } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
test("subtracts", () => assert.equal(subtract(5, 3), 2));
`;
/** A first check that only loads the module: green whatever it holds. */
const LOADS: RepoCheck = { name: "loads", command: `node -e 'require("./src/math.js")'` };

/** Green at the start; `checks` run in that order. */
function project(checks: RepoCheck[] = [NODE_TEST]): Promise<GateProject> {
  return gateProject({
    files: {
      "package.json": PACKAGE_JSON,
      "src/math.js": FIXED,
      "test/math.test.js": CATCHING_SUITE,
    },
    checks,
  });
}

/** Commit `source` as src/math.js and claim. */
async function claimWith(run: GateProject, source: string) {
  await write(run.repo.path, { "src/math.js": source });
  await commitAll(run.repo.path, "refactor: math");
  return await run.claim();
}

/** The broken module, then JS run once it is loaded (`fs`, `cp`, `path` in scope). */
function brokenThen(code: string): string {
  return `${BROKEN}const fs = require("node:fs");
const cp = require("node:child_process");
const path = require("node:path");
const git = (...args) => cp.execFileSync("git", args, { cwd: path.join(__dirname, ".."), encoding: "utf8" }).trim();
${code}
`;
}

/** A module broken the first time, fixed once `marker` exists (it writes it). */
function brokenUntil(marker: string): string {
  return `const fs = require("node:fs");
const marker = ${marker};
const seen = fs.existsSync(marker);
if (!seen) fs.writeFileSync(marker, "seen");
exports.add = (a, b) => a + b;
exports.subtract = seen ? (a, b) => a - b : (a, b) => a + b;
`;
}

// ---------------------------------------------------------------------------
// The next check of the same claim (restoreTree).
// ---------------------------------------------------------------------------

Deno.test("next check: the fixed file written over the commit's and staged (git add) is put back", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(
    run,
    brokenThen(
      `fs.writeFileSync(__filename, ${JSON.stringify(FIXED)}); git("add", "src/math.js");`,
    ),
  );
  assert.equal(result.complete, false, "the second check tested the staged rewrite");
});

Deno.test("next check: the fixed file committed in the copy's repository (HEAD moved) is put back", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(
    run,
    brokenThen(
      `fs.writeFileSync(__filename, ${JSON.stringify(FIXED)}); git("add", "src/math.js");
git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "fix");`,
    ),
  );
  assert.equal(result.complete, false, "the second check tested the copy's own commit");
});

// Found by the red team, now defended: restoreTree listed the changed files with `git diff
// <commit>`, which trusts the index's assume-unchanged and skip-worktree bits; the index is now
// read from the commit again and every file hashed (ObjectCopy.restore).
Deno.test("next check: the fixed file hidden from git diff by the index's assume-unchanged bit is put back", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(
    run,
    brokenThen(
      `fs.writeFileSync(__filename, ${
        JSON.stringify(FIXED)
      }); git("update-index", "--assume-unchanged", "src/math.js");`,
    ),
  );
  assert.equal(
    result.complete,
    false,
    "the second check tested a file git was told not to look at",
  );
});

Deno.test("next check: the fixed file hidden by the index's skip-worktree bit is put back", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(
    run,
    brokenThen(
      `fs.writeFileSync(__filename, ${
        JSON.stringify(FIXED)
      }); git("update-index", "--skip-worktree", "src/math.js");`,
    ),
  );
  assert.equal(result.complete, false, "the second check tested a file git was told to skip");
});

/** Replace the private repository's loose object `name` with the loose object `from`. */
const FORGE =
  `const objects = path.resolve(path.join(__dirname, ".."), git("rev-parse", "--git-path", "objects"));
const loose = (hash) => path.join(objects, hash.slice(0, 2), hash.slice(2));
const forge = (name, from) => {
  fs.mkdirSync(path.dirname(loose(name)), { recursive: true });
  try { fs.unlinkSync(loose(name)); } catch {}
  fs.copyFileSync(loose(from), loose(name));
};
`;

Deno.test("next check: the commit's blob forged in the copy's object store (its hash, the fixed bytes) does not put the fix back", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(
    run,
    brokenThen(`${FORGE}
const blob = git("rev-parse", "HEAD:src/math.js");
fs.writeFileSync(__filename, ${JSON.stringify(FIXED_NEW)});
forge(blob, git("hash-object", "-w", "src/math.js"));`),
  );
  assert.equal(result.complete, false, "the second check tested a forged object");
});

/** Forge the commit's `src` tree so that it names the fixed blob. */
const FORGE_TREE = `${FORGE}
const fixed = cp.execFileSync("git", ["hash-object", "-w", "--stdin"], {
  cwd: __dirname, input: ${JSON.stringify(FIXED_NEW)}, encoding: "utf8",
}).trim();
const src = git("rev-parse", "HEAD:src");
const listing = cp.execFileSync("git", ["ls-tree", "--full-tree", "HEAD:src"], { cwd: __dirname, encoding: "utf8" })
  .replace(/blob [0-9a-f]+\\tmath\\.js/, "blob " + fixed + "\\tmath.js");
const tree = cp.execFileSync("git", ["mktree"], { cwd: __dirname, input: listing, encoding: "utf8" }).trim();
forge(src, tree);
`;

Deno.test("next check: the commit's tree forged in the copy's object store (its hash, the fixed blob named) does not put the fix in", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(run, brokenThen(FORGE_TREE));
  assert.equal(result.complete, false, "the second check tested a file of a forged tree");
});

/** The same, once the packs are moved aside and their objects written loose: no pack outranks the forgery. */
const FORGE_UNPACKED = `${FORGE}
const packs = path.join(objects, "pack");
for (const name of fs.readdirSync(packs).filter((name) => name.endsWith(".pack"))) {
  const pack = path.join(packs, name);
  const data = fs.readFileSync(pack);
  fs.renameSync(pack, pack + ".aside");
  fs.renameSync(pack.replace(/\\.pack$/, ".idx"), pack + ".idx.aside");
  cp.execFileSync("git", ["unpack-objects", "-q"], { cwd: __dirname, input: data });
}
${FORGE_TREE.slice(FORGE.length)}`;

// Found by the red team, now defended: with the fetched pack moved aside and unpacked, a loose
// object under the commit's `src` tree hash naming the fixed blob was read by restore's diff and
// checkout, which wrote the fix for the next check. Any write into the object store now refuses
// (ObjectCopy.intact).
Deno.test("next check: the commit's tree forged loose once the packs are unpacked does not put the fix in", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(run, brokenThen(FORGE_UNPACKED));
  assert.equal(result.complete, false, "the second check tested a file of a forged tree");
  assert.match(result.feedback ?? "", /object store of finishline's private repository/);
});

Deno.test("retry: the commit's tree forged loose once the packs are unpacked does not make the copy made anew the fixed one", async () => {
  await using run = await project();
  const result = await claimWith(run, brokenThen(FORGE_UNPACKED));
  assert.equal(result.complete, false, "the second run tested a file of a forged tree");
});

// ---------------------------------------------------------------------------
// The second run of a check that was green at the start (moveTo).
// ---------------------------------------------------------------------------

Deno.test("retry: the commit's tree forged in the copy's object store does not make the copy made anew the fixed one", async () => {
  await using run = await project();
  const result = await claimWith(run, brokenThen(FORGE_TREE));
  assert.equal(result.complete, false, "the second run tested a file of a forged tree");
});

Deno.test("retry: a marker in the run's TMPDIR does not reach the second run", async () => {
  await using run = await project();
  const result = await claimWith(
    run,
    brokenUntil(`require("node:path").join(require("node:os").tmpdir(), "seen")`),
  );
  assert.equal(result.complete, false);
});

Deno.test("retry: a marker in the run's HOME does not reach the second run", async () => {
  await using run = await project();
  const result = await claimWith(
    run,
    brokenUntil(`require("node:path").join(process.env.HOME, "seen")`),
  );
  assert.equal(result.complete, false);
});

Deno.test("retry: a marker in an ignored file of the tree does not reach the second run", async () => {
  await using run = await project();
  await write(run.repo.path, { ".gitignore": "seen\n" });
  const result = await claimWith(
    run,
    brokenUntil(`require("node:path").join(__dirname, "..", "seen")`),
  );
  assert.equal(result.complete, false);
});

/**
 * A process of its own session (out of the check's process group) that outlives the run:
 * once a later test runner starts in the tree, it writes the fix over the module.
 */
const DAEMON = `const tree = path.dirname(__dirname);
const ancestors = [];
for (let pid = process.pid; pid > 1;) {
  ancestors.push(pid);
  pid = Number(fs.readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1].split(" ")[1]);
}
const daemon = \`const fs = require("node:fs");
const file = \${JSON.stringify(__filename)};
const fixed = \${JSON.stringify(${JSON.stringify(FIXED)})};
const skip = new Set(\${JSON.stringify(ancestors)});
const end = Date.now() + 30000;
const runner = () => fs.readdirSync("/proc").some((pid) => {
  if (!/^[0-9]+$/.test(pid) || skip.has(Number(pid))) return false;
  try {
    return fs.readlinkSync("/proc/" + pid + "/cwd") === \${JSON.stringify(tree)} &&
      fs.readFileSync("/proc/" + pid + "/cmdline", "utf8").includes("--test");
  } catch { return false; }
});
const tick = () => {
  if (runner()) try { if (fs.readFileSync(file, "utf8") !== fixed) fs.writeFileSync(file, fixed); } catch {}
  if (Date.now() < end) setTimeout(tick, 1);
};
tick();\`;
cp.spawn(process.execPath, ["-e", daemon], { detached: true, stdio: "ignore" }).unref();
`;

// Found by the red team, now defended: runShell stops the check's process group only; a process
// in a session of its own outlived the check and wrote the fix while the next run ran. Every
// process a check run starts is now tagged and stopped at the run's end (runRepoCheck).
Deno.test("next check: a process that left the check's group does not write the fix for the next check", async () => {
  await using run = await project([LOADS, NODE_TEST]);
  const result = await claimWith(run, brokenThen(DAEMON));
  assert.equal(result.complete, false, "the second check tested what a leftover process wrote");
});

Deno.test("retry: a process that left the check's group does not write the fix for the second run", async () => {
  await using run = await project();
  const result = await claimWith(run, brokenThen(DAEMON));
  assert.equal(result.complete, false, "the second run tested what a leftover process wrote");
});
