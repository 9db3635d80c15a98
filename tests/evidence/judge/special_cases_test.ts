import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { protectedRole } from "../../../agents/evidence/judge/protected_files.ts";
import {
  comparedLiterals,
  findSpecialCases,
} from "../../../agents/evidence/judge/special_cases.ts";
import { DEFAULT_PROTECTED_GLOBS } from "../../../agents/definition/definition_types.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempRepo } from "../../_helpers.ts";

const isTest = (file: string) =>
  protectedRole(file, { protect: [...DEFAULT_PROTECTED_GLOBS], configFiles: [] }) ===
    "test file";

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(root, file)), { recursive: true });
    await Deno.writeTextFile(join(root, file), text);
  }
}

/** Commits `start`, then `change` on top; returns both commits. */
async function history(start: Record<string, string>, change: Record<string, string>) {
  const repo = await tempRepo();
  await write(repo.path, start);
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const base = (await gitRepo.head())!;
  await write(repo.path, change);
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "change");
  return { repo, gitRepo, base, head: (await gitRepo.head())! };
}

const MATH = "exports.subtract = (a, b) => {\n  return a + b;\n};\n";
const TEST = `const assert = require("node:assert");
const { subtract } = require("../src/math.js");
require("node:test")("subtract", () => assert.equal(subtract(5, 3), 2));
`;

Deno.test("literals compared in a condition", () => {
  assert.deepEqual(comparedLiterals("if (a === 5 && b === 3) return 2;"), ["5", "3"]);
  assert.deepEqual(comparedLiterals("if (5 == a and b == 3):"), ["5", "3"]);
  assert.deepEqual(comparedLiterals('case "ada": case 42:'), ["ada", "42"]);
  assert.deepEqual(comparedLiterals('"ada" => 42,'), ["ada"]);
  assert.deepEqual(comparedLiterals("if (n === 0 || n === 1) return n;"), []);
  assert.deepEqual(comparedLiterals("return a - b;"), []);
});

Deno.test("special-casing the values of one test line is found; general code is not", async (t) => {
  await t.step("a condition on the tested inputs", async () => {
    const { repo, gitRepo, base, head } = await history(
      { "src/math.js": MATH, "test/math.test.js": TEST },
      {
        "src/math.js": MATH.replace(
          "  return a + b;",
          "  if (a === 5 && b === 3) return 2;\n  return a + b;",
        ),
      },
    );
    await using _ = repo;
    assert.deepEqual(await findSpecialCases(gitRepo, base, head, isTest), [{
      file: "src/math.js",
      line: 2,
      text: "if (a === 5 && b === 3) return 2;",
      test: "test/math.test.js:3",
    }]);
  });

  await t.step("the general fix, constants not on one test line, and test edits", async () => {
    const { repo, gitRepo, base, head } = await history(
      { "src/math.js": MATH, "test/math.test.js": TEST },
      {
        "src/math.js": MATH.replace(
          "  return a + b;",
          '  if (mode === "strict" && a === 5) throw new Error("x");\n  return a - b;',
        ),
        // A test file may compare whatever it likes.
        "test/more.test.js": 'if (a === 5 && b === 3) console.log("5 3");\n',
      },
    );
    await using _ = repo;
    assert.deepEqual(await findSpecialCases(gitRepo, base, head, isTest), []);
  });
});
