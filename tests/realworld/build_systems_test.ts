/**
 * The gate on the build systems beyond npm, Python, Cargo and Go modules,
 * with the three scenarios of the corpus: (a) the agent commits a real bug
 * and claims success: refused, the failing tests named; (b) starting from
 * the bug, it fixes it: passes; (c) starting from the bug, it weakens the
 * failing test: refused. Detection as `prepareChecks` makes it (ranked),
 * the real gate, real git, and each project's own tools (meson and ninja,
 * rake with minitest or test-unit, go, deno, cmake and ctest, configure and
 * make, mvn).
 *
 * Every project is a real one nobody here wrote (see `_corpus.ts`): releases
 * downloaded from Debian's archive (pinned, checked against their SHA-256,
 * cached outside the repository), or, where no registry CI reaches serves
 * the project, a snapshot of its public repository committed under
 * `tests/fixtures/corpus/`. text 1.3.1 (a gem, Rakefile + test-unit),
 * Builder 3.2.4 (its test task in `rakelib/`, minitest), @david/which
 * (Deno: deno.json, node:test under `deno test`), inih r59 (C, Meson),
 * blang/semver 4.0.0 (Go, its v4 module nested below the root's),
 * charmbracelet/x (a go.work of four modules). cJSON's CMake tests, GNU
 * Hello's `make check`, xxhash's `-tags purego` and json-simple 2.3.0's
 * `mvn -o test` (Java, offline on Debian's packaged Maven repository) run
 * under FINISHLINE_REALWORLD=all: each builds or tests for most of a minute
 * per scenario here.
 *
 * @module
 */

import assert from "node:assert/strict";
import { prepareChecks } from "../../agents/iterator/run/checks_setup.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import { definitionOf } from "../checks/_helpers.ts";
import { git, tempRepo } from "../_helpers.ts";
import { CORPUS, type Edit } from "./_corpus.ts";
import { applyEdit, copyRepo, prepareRepo } from "./_prepare.ts";

/** One project and its scenarios. */
export interface Project {
  id: string;
  /** The checks detection must find, per claim first. */
  checks: string[];
  /** The corpus repository copied in. */
  files: { corpus: string };
  bug: Edit;
  /** Names of the failing tests the agent must be told (their starts). */
  failing: string[];
  weaken: Edit[];
  /** A check every claim declares out of scope, for a test red in the release as shipped. */
  outOfScope?: { check: string; reason: string };
  /** Played only under FINISHLINE_REALWORLD=all (a build of most of a minute per scenario). */
  slow?: boolean;
}

/** A corpus repository as a project of this test: its bug, failing tests and weakening. */
function real(id: string, checks: string[], slow = false): Project {
  const repo = CORPUS.find((entry) => entry.id === id)!;
  return {
    id: `${id} (real)`,
    checks,
    files: { corpus: id },
    bug: repo.bug,
    failing: repo.failing,
    weaken: repo.weaken,
    ...(repo.legacy
      ? { outOfScope: { check: repo.legacy.check, reason: repo.legacy.reason } }
      : {}),
    ...(slow ? { slow } : {}),
  };
}

/** charmbracelet/x's modules in go.work's order, and in its build workflow's (ranked by tier). */
const GO_MODULES = ["editor", "exp/higherorder", "exp/slice", "exp/strings"];
const WORKFLOW_ORDER = ["exp/slice", "exp/strings", "exp/higherorder", "editor"];

export const PROJECTS: Project[] = [
  real("text", ["rake test"]),
  real("builder", ["rake test"]),
  real("deno-which", [
    "deno fmt --check",
    "deno lint",
    "deno test -A",
    'CI job "test" (.github/workflows/ci.yml)',
  ]),
  real("inih", ["meson test"]),
  real("blang-semver", ["go test ./...", "cd v4 && go test ./..."]),
  real("charmbracelet-x", [
    ...GO_MODULES.map((dir) => `cd ${dir} && go test ./...`),
    ...WORKFLOW_ORDER.map((dir) => `cd ${dir} && go build -v ./...`),
    ...WORKFLOW_ORDER.map((dir) => `cd ${dir} && go test -race -v ./...`),
  ]),
  real("json-simple", ["mvn -o test"], true),
  { ...real("cjson", ["make test", "cmake + ctest"], true), failing: ["cJSON_test"] },
  real("hello", ["make check"], true),
  real(
    "xxhash",
    ["go test ./...", "go test -count 1 -bench . -benchtime 1x -tags purego ./..."],
    true,
  ),
];

const all = Deno.env.get("FINISHLINE_REALWORLD") === "all";

/** A repository of the project at its first commit, and the commit with the bug. */
export async function checkout(
  project: Project,
): Promise<
  { dir: Awaited<ReturnType<typeof tempRepo>>; repo: GitRepo; base: string; bug: string }
> {
  const dir = await tempRepo();
  const id = project.files.corpus;
  const prepared = await prepareRepo(CORPUS.find((repo) => repo.id === id)!);
  if (!prepared.ok) throw new Error(prepared.unavailable);
  await copyRepo(prepared, dir.path);
  const repo = (await GitRepo.open(dir.path))!;
  const base = (await repo.head())!;
  await applyEdit(dir.path, project.bug);
  await git(dir.path, "commit", "-qam", "the bug");
  const bug = (await repo.head())!;
  return { dir, repo, base, bug };
}

/** One gate, its baseline on `start`, judging the commit `edit` makes from there. */
async function claim(
  project: Project,
  at: { dir: { path: string }; repo: GitRepo },
  start: string,
  edit: () => Promise<void>,
) {
  await git(at.dir.path, "reset", "-q", "--hard", start);
  const { detection, gate } = await prepareChecks(definitionOf(), at.dir.path);
  assert.ok(gate, `${project.id}: no checks`);
  assert.deepEqual(detection?.checks.map((check) => check.name), project.checks);
  try {
    await gate.startBaseline(at.repo, start);
    await edit();
    await git(at.dir.path, "commit", "-qam", "the agent's change");
    const started = performance.now();
    const result = await gate.check(
      {
        cwd: at.dir.path,
        git: { repo: at.repo, baseline: start },
        ...(project.outOfScope ? { completeTask: { out_of_scope: [project.outOfScope] } } : {}),
      } as never,
    );
    return { result, ms: performance.now() - started };
  } finally {
    await gate.close();
  }
}

for (const project of PROJECTS) {
  Deno.test({
    name:
      `build systems: ${project.id}: a bug refused by name, its fix passes, a weakened test refused`,
    ignore: project.slow && !all,
    fn: async (t) => {
      const at = await checkout(project);
      await using _ = at.dir;
      await t.step("(a) commits the bug and claims success: refused, the test named", async () => {
        const { result } = await claim(
          project,
          at,
          at.base,
          () => applyEdit(at.dir.path, project.bug),
        );
        assert.equal(result.complete, false);
        for (const name of project.failing) {
          assert.ok(result.feedback?.includes(`"${name}`), result.feedback);
        }
      });
      await t.step("(b) starts from the bug and fixes it: passes", async () => {
        const { result } = await claim(
          project,
          at,
          at.bug,
          () =>
            applyEdit(at.dir.path, { ...project.bug, from: project.bug.to, to: project.bug.from }),
        );
        assert.equal(result.complete, true, result.feedback);
      });
      await t.step("(c) starts from the bug and weakens its test: refused", async () => {
        const { result } = await claim(project, at, at.bug, async () => {
          for (const edit of project.weaken) await applyEdit(at.dir.path, edit);
        });
        assert.equal(result.complete, false, "a weakened test never turns red into green");
      });
    },
  });
}
