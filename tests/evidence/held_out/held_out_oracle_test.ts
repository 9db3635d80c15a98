/**
 * The held-out test is no oracle: a worker that claims three times with
 * three wrong answers reads the same feedback each time (the test's masked
 * name and the behaviour), never the value the test expects or the one it
 * got; the honest fix then passes. Real git, real node --test.
 */

import assert from "node:assert/strict";
import { GitRepo } from "../../../agents/git/repo.ts";
import { commitAll, gateProject, PACKAGE_JSON, write } from "../_gate_project.ts";

const HELD_OUT = [
  'import { test } from "node:test";',
  'import assert from "node:assert/strict";',
  'import { add } from "../src/math.js";',
  'test("add(7, 7) is the sum", () => assert.equal(add(7, 7), 14));',
  "",
].join("\n");

Deno.test("three wrong claims against the held-out test read the same feedback, with none of its values", async () => {
  await using project = await gateProject({
    files: {
      "package.json": PACKAGE_JSON,
      "src/math.js": "export const add = (a, b) => a - b;\n",
      "test/math.test.js": [
        'import { test } from "node:test";',
        'import assert from "node:assert/strict";',
        'import { add } from "../src/math.js";',
        'test("add is a function", () => assert.equal(typeof add, "function"));',
        "",
      ].join("\n"),
    },
  });
  const repo = (await GitRepo.open(project.repo.path))!;
  const reproduction = await project.gate.startReproduction(repo, project.base, async (dir) => {
    await write(dir, { "test/held_out.test.js": HELD_OUT });
    return undefined;
  });
  assert.equal(reproduction.kept, true, reproduction.kept ? "" : reproduction.why);
  const feedbacks: string[] = [];
  for (const wrong of ["a * b", "6", "a + b + 1"]) {
    await write(project.repo.path, { "src/math.js": `export const add = (a, b) => ${wrong};\n` });
    await commitAll(project.repo.path, `try ${wrong}`);
    const result = await project.claim();
    assert.equal(result.complete, false);
    const said = result.feedback ?? "";
    assert.match(said, /held-out/);
    feedbacks.push(said);
  }
  for (const said of feedbacks) {
    // Neither the expected sum nor what each wrong claim returned (49, 6, 15), nor the inputs.
    assert.doesNotMatch(said, /\b(14|49|15|7)\b/, said);
    assert.doesNotMatch(said, /expected|actual|!==/i, said);
  }
  assert.equal(new Set(feedbacks).size, 1, "every claim read the same feedback");
  await write(project.repo.path, { "src/math.js": "export const add = (a, b) => a + b;\n" });
  await commitAll(project.repo.path, "fix: add adds");
  const honest = await project.claim();
  assert.equal(honest.complete, true, honest.feedback);
});

Deno.test("code that special-cases the held-out test's values is refused, though the test passes", async () => {
  await using project = await gateProject({
    files: {
      "package.json": PACKAGE_JSON,
      "src/math.js": "export const add = (a, b) => a - b;\n",
      "test/math.test.js": [
        'import { test } from "node:test";',
        'import assert from "node:assert/strict";',
        'import { add } from "../src/math.js";',
        'test("add is a function", () => assert.equal(typeof add, "function"));',
        "",
      ].join("\n"),
    },
  });
  const repo = (await GitRepo.open(project.repo.path))!;
  const reproduction = await project.gate.startReproduction(repo, project.base, async (dir) => {
    await write(dir, {
      "test/held_out.test.js": HELD_OUT.replace("add(7, 7), 14", "add(7, 9), 16"),
    });
    return undefined;
  });
  assert.equal(reproduction.kept, true, reproduction.kept ? "" : reproduction.why);
  // The worker's own tests never use these values: only the held-out test does.
  await write(project.repo.path, {
    "src/math.js":
      "export const add = (a, b) => {\n  if (a === 7 && b === 9) return 16;\n  return a - b;\n};\n",
  });
  await commitAll(project.repo.path, "fix: add");
  const result = await project.claim();
  assert.equal(result.complete, false);
  assert.match(
    result.feedback ?? "",
    /special-cases the values the tests use: src\/math\.js:2 .* a held-out test/,
  );
  assert.doesNotMatch(result.feedback ?? "", /held_out\.test\.js/);
});
