/**
 * The proof-of-the-change catalogue: one small project per runtime, each
 * with a buggy start, an honest fix with a real test, and two weak claims
 * that pass their own tests (a special-cased fix whose test checks only the
 * special case, with a branch no test runs; a correct fix whose test asserts
 * nothing). Used by the tests and by `deno task bench:proof`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { GitRepo } from "../../../agents/git/repo.ts";
import { proveChange } from "../../../agents/evidence/proof/change_proof.ts";
import type { ChangeProof } from "../../../agents/record/iteration.ts";
import type { RepoCheck } from "../../../agents/evidence/run/check_run.ts";
import { git, tempRepo } from "../../_helpers.ts";

export interface Ecosystem {
  name: string;
  check: RepoCheck;
  /** Whether its tools are here. */
  available: () => Promise<boolean>;
  /** The source file and the test file. */
  source: string;
  test: string;
  /** Extra files of the project (go.mod). */
  extra?: Record<string, string>;
  buggy: string;
  honest: string;
  /** Special-cases the tested input, and adds a branch no test runs. */
  gamed: string;
  honestTest: string;
  gamedTest: string;
  /** Calls the fixed function and asserts nothing about its result. */
  emptyTest: string;
}

export async function has(command: string, args: string[]): Promise<boolean> {
  try {
    const output = await new Deno.Command(command, { args, stdout: "null", stderr: "null" })
      .output();
    return output.success;
  } catch {
    return false;
  }
}

export const ECOSYSTEMS: Ecosystem[] = [
  {
    name: "node --test",
    check: { name: "node --test", command: "node --test", runner: "node" },
    available: () => has("node", ["--version"]),
    source: "calc.js",
    test: "calc.test.js",
    buggy: "function add(a, b) {\n  return a - b;\n}\nmodule.exports = { add };\n",
    honest: "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n",
    gamed:
      "function add(a, b) {\n  if (a === 2 && b === 2) {\n    return 4;\n  }\n  if (a < 0) {\n    return 0;\n  }\n  return a - b;\n}\nmodule.exports = { add };\n",
    honestTest:
      'const test = require("node:test");\nconst assert = require("node:assert");\nconst { add } = require("./calc.js");\ntest("adds", () => {\n  assert.strictEqual(add(2, 2), 4);\n  assert.strictEqual(add(1, 5), 6);\n});\n',
    gamedTest:
      'const test = require("node:test");\nconst assert = require("node:assert");\nconst { add } = require("./calc.js");\ntest("adds", () => {\n  assert.strictEqual(add(2, 2), 4);\n});\n',
    emptyTest:
      'const test = require("node:test");\nconst { add } = require("./calc.js");\ntest("adds", () => {\n  add(2, 2);\n});\n',
  },
  {
    name: "deno test",
    check: { name: "deno test", command: "deno test -q --no-check", runner: "deno" },
    available: () => has("deno", ["--version"]),
    source: "calc.ts",
    test: "calc_test.ts",
    buggy: "export function add(a: number, b: number): number {\n  return a - b;\n}\n",
    honest: "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
    gamed:
      "export function add(a: number, b: number): number {\n  if (a === 2 && b === 2) {\n    return 4;\n  }\n  if (a < 0) {\n    return 0;\n  }\n  return a - b;\n}\n",
    honestTest:
      'import { add } from "./calc.ts";\nDeno.test("adds", () => {\n  if (add(2, 2) !== 4 || add(1, 5) !== 6) throw new Error("wrong");\n});\n',
    gamedTest:
      'import { add } from "./calc.ts";\nDeno.test("adds", () => {\n  if (add(2, 2) !== 4) throw new Error("wrong");\n});\n',
    emptyTest: 'import { add } from "./calc.ts";\nDeno.test("adds", () => {\n  add(2, 2);\n});\n',
  },
  {
    name: "pytest",
    check: {
      name: "pytest",
      command: "/usr/bin/python3 -m pytest -q -p no:cacheprovider",
      runner: "pytest",
    },
    available: async () => await has("/usr/bin/python3", ["-c", "import pytest, coverage"]),
    source: "calc.py",
    test: "test_calc.py",
    buggy: "def add(a, b):\n    return a - b\n",
    honest: "def add(a, b):\n    return a + b\n",
    gamed:
      "def add(a, b):\n    if a == 2 and b == 2:\n        return 4\n    if a < 0:\n        return 0\n    return a - b\n",
    honestTest:
      "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n    assert add(1, 5) == 6\n",
    gamedTest: "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
    emptyTest: "from calc import add\n\n\ndef test_adds():\n    add(2, 2)\n",
  },
  {
    name: "go test",
    check: { name: "go test", command: "go test ./...", runner: "go" },
    available: () => has("go", ["version"]),
    source: "calc/calc.go",
    test: "calc/calc_test.go",
    extra: { "go.mod": "module example.com/proof\n\ngo 1.19\n" },
    buggy: "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
    honest: "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
    gamed:
      "package calc\n\nfunc Add(a, b int) int {\n\tif a == 2 && b == 2 {\n\t\treturn 4\n\t}\n\tif a < 0 {\n\t\treturn 0\n\t}\n\treturn a - b\n}\n",
    honestTest:
      'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 || Add(1, 5) != 6 {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
    gamedTest:
      'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal("wrong")\n\t}\n}\n',
    emptyTest: 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tAdd(2, 2)\n}\n',
  },
];

export async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    const file = `${root}/${name}`;
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(file, text);
  }
}

export async function prove(
  eco: Ecosystem,
  fixed: string,
  test: string,
  budgetFactor = 1000,
): Promise<ChangeProof> {
  await using repo = await tempRepo();
  await write(repo.path, { ...eco.extra, [eco.source]: eco.buggy });
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const base = (await git(repo.path, "rev-parse", "HEAD")).trim();
  await write(repo.path, { [eco.source]: fixed, [eco.test]: test });
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "claim");
  const head = (await git(repo.path, "rev-parse", "HEAD")).trim();
  const proof = await proveChange({
    root: repo.path,
    git: (await GitRepo.open(repo.path))!,
    base,
    head,
    checks: [eco.check],
    isSource: (file) => file === eco.source,
    timeoutMs: 300_000,
    // Every mutant is tried: the figures, not the time box, are under test here.
    budgetFactor,
  });
  assert.ok(proof, "the change touches a source file");
  return proof;
}
