/**
 * The gate on the build systems beyond npm, Python, Cargo and Go, with the
 * three scenarios of the corpus: (a) the agent commits a real bug and claims
 * success: refused, the failing tests named; (b) starting from the bug, it
 * fixes it: passes; (c) starting from the bug, it weakens the failing test:
 * refused. Detection as `prepareChecks` makes it (ranked), the real gate,
 * real git, and each project's own tools (cmake and ctest, meson and ninja,
 * rake with minitest or test-unit, deno, go).
 *
 * cJSON 1.7.15 (the corpus's real C library, downloaded from Debian's
 * archive) is played with its CMake tests under FINISHLINE_REALWORLD=all:
 * a clean CMake build takes most of a minute here. The Ruby, Meson, Deno
 * and Go-workspace projects are small fixtures written for this test, in
 * the layout their ecosystems use: no public repository of theirs can be
 * fetched from the registries CI reaches (Debian's archive serves its Ruby
 * and Meson packages as binaries, without their tests).
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
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
  /** Its files, or a corpus repository copied in. */
  files: Record<string, string> | { corpus: string };
  bug: Edit;
  /** Names of the failing tests the agent must be told (substrings). */
  failing: string[];
  weaken: Edit[];
}

const RAKEFILE = `require "rake/testtask"

Rake::TestTask.new(:test) do |t|
  t.libs << "test"
  t.test_files = FileList["test/**/test_*.rb"]
end

task default: :test
`;

const CALC = `# frozen_string_literal: true

module Calc
  def self.add(a, b)
    a + b
  end

  def self.sub(a, b)
    a - b
  end
end
`;

function rubyTests(framework: "minitest" | "test-unit"): string {
  const [header, base] = framework === "minitest"
    ? ['require "minitest/autorun"', "Minitest::Test"]
    : ['require "test/unit"', "Test::Unit::TestCase"];
  return `${header}
require "calc"

class TestCalc < ${base}
  def test_add
    assert_equal 5, Calc.add(2, 3)
  end

  def test_sub
    assert_equal 2, Calc.sub(5, 3)
  end
end
`;
}

const MATH_C = "int add(int a, int b) { return a + b; }\nint sub(int a, int b) { return a - b; }\n";
const C_TEST = (fn: string, a: number, b: number, want: number) =>
  `#include <stdio.h>\nint ${fn}(int, int);\nint main(void) {\n  if (${fn}(${a}, ${b}) != ${want}) {\n    printf("${fn}(${a}, ${b}) != ${want}\\n");\n    return 1;\n  }\n  return 0;\n}\n`;

export const PROJECTS: Project[] = [
  {
    id: "ruby-minitest",
    checks: ["rake test"],
    files: {
      Rakefile: RAKEFILE,
      "lib/calc.rb": CALC,
      "test/test_calc.rb": rubyTests("minitest"),
    },
    bug: { file: "lib/calc.rb", from: "a - b", to: "b - a" },
    failing: ["TestCalc#test_sub"],
    weaken: [{
      file: "test/test_calc.rb",
      from: "assert_equal 2, Calc.sub(5, 3)",
      to: 'skip "later"',
    }],
  },
  {
    id: "ruby-test-unit",
    checks: ["rake test"],
    files: {
      Rakefile: RAKEFILE,
      "lib/calc.rb": CALC,
      "test/test_calc.rb": rubyTests("test-unit"),
    },
    bug: { file: "lib/calc.rb", from: "a - b", to: "b - a" },
    failing: ["TestCalc#test_sub"],
    weaken: [{
      file: "test/test_calc.rb",
      from: "assert_equal 2, Calc.sub(5, 3)",
      to: "assert_equal(-2, Calc.sub(5, 3))",
    }],
  },
  {
    id: "meson",
    checks: ["meson test"],
    files: {
      "meson.build": [
        "project('calc', 'c')",
        "calc = static_library('calc', 'src/calc.c')",
        "test('add', executable('t_add', 'tests/t_add.c', link_with: calc))",
        "test('sub', executable('t_sub', 'tests/t_sub.c', link_with: calc), suite: 'math')",
        "",
      ].join("\n"),
      "src/calc.c": MATH_C,
      "tests/t_add.c": C_TEST("add", 2, 3, 5),
      "tests/t_sub.c": C_TEST("sub", 5, 3, 2),
    },
    bug: { file: "src/calc.c", from: "a - b", to: "b - a" },
    failing: ["calc:math / sub"],
    weaken: [{ file: "tests/t_sub.c", from: "!= 2) {", to: "!= -2) {" }],
  },
  {
    id: "deno",
    checks: ["deno test -A", "deno fmt --check"],
    files: {
      "deno.json": JSON.stringify({ fmt: { lineWidth: 100 } }, null, 2) + "\n",
      "calc.ts": "export function sub(a: number, b: number): number {\n  return a - b;\n}\n",
      "calc_test.ts": [
        'import assert from "node:assert/strict";',
        'import { sub } from "./calc.ts";',
        "",
        'Deno.test("sub", () => assert.equal(sub(5, 3), 2));',
        'Deno.test("sub zero", () => assert.equal(sub(5, 0), 5));',
        "",
      ].join("\n"),
    },
    bug: { file: "calc.ts", from: "a - b", to: "b - a" },
    failing: ["sub"],
    weaken: [{ file: "calc_test.ts", from: 'Deno.test("sub",', to: 'Deno.test.ignore("sub",' }],
  },
  {
    id: "go-workspace",
    checks: ["go test ./...", "cd calc && go test ./..."],
    files: {
      "go.work": "go 1.19\n\nuse (\n\t.\n\t./calc\n)\n",
      "go.mod": "module example.com/app\n\ngo 1.19\n",
      "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("app") }\n',
      "calc/go.mod": "module example.com/calc\n\ngo 1.19\n",
      "calc/calc.go": "package calc\n\nfunc Sub(a, b int) int { return a - b }\n",
      "calc/calc_test.go":
        'package calc\n\nimport "testing"\n\nfunc TestSub(t *testing.T) {\n\tif got := Sub(5, 3); got != 2 {\n\t\tt.Fatalf("Sub(5, 3) = %d", got)\n\t}\n}\n',
    },
    bug: { file: "calc/calc.go", from: "a - b", to: "b - a" },
    failing: ["TestSub"],
    weaken: [{ file: "calc/calc_test.go", from: "got != 2", to: "got != -2" }],
  },
  {
    id: "cjson-cmake",
    checks: ["make test", "cmake + ctest"],
    files: { corpus: "cjson" },
    bug: CORPUS.find((repo) => repo.id === "cjson")!.bug,
    failing: ["cJSON_test"],
    weaken: CORPUS.find((repo) => repo.id === "cjson")!.weaken,
  },
];

const all = Deno.env.get("FINISHLINE_REALWORLD") === "all";

/** A repository of the project at its first commit, and the commit with the bug. */
export async function checkout(
  project: Project,
): Promise<
  { dir: Awaited<ReturnType<typeof tempRepo>>; repo: GitRepo; base: string; bug: string }
> {
  const dir = await tempRepo();
  if ("corpus" in project.files) {
    const prepared = await prepareRepo(CORPUS.find((repo) => repo.id === "cjson")!);
    if (!prepared.ok) throw new Error(prepared.unavailable);
    await copyRepo(prepared, dir.path);
  } else {
    for (const [path, text] of Object.entries(project.files)) {
      await Deno.mkdir(join(dir.path, path, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir.path, path), text);
    }
    await git(dir.path, "add", "-A");
    await git(dir.path, "commit", "-qm", "start");
  }
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
      { cwd: at.dir.path, git: { repo: at.repo, baseline: start } } as never,
    );
    return { result, ms: performance.now() - started };
  } finally {
    await gate.close();
  }
}

for (const project of PROJECTS) {
  const real = "corpus" in project.files;
  Deno.test({
    name:
      `build systems: ${project.id}: a bug refused by name, its fix passes, a weakened test refused`,
    ignore: real && !all,
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
