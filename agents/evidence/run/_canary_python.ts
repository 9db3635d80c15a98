/**
 * The pytest canary: a test module beside the first test file the claim
 * changed (else the first found), so the conftest files of its folder and
 * those above apply, importing the repository's modules the tests import.
 *
 * @module
 */

import { existsSync } from "node:fs";
import path from "node:path";
import {
  canaryNames,
  distinctNumbers,
  type PlaceContext,
  type Placement,
  testFiles,
} from "./_canary_common.ts";

const PYTEST_TESTS = /(^|\/)(test_[^/]*|[^/]*_test)\.py$/;

/** `python3 -m pytest` on the canary module alone. */
export async function placePytest(context: PlaceContext): Promise<Placement> {
  const { dir } = context;
  const tests = await testFiles(dir, PYTEST_TESTS, context.changed);
  const modules = new Set<string>();
  for (const test of tests) {
    const text = await Deno.readTextFile(path.join(dir, test)).catch(() => "");
    for (
      const [, from, plain] of text.matchAll(/^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))/gm)
    ) {
      const top = (from ?? plain).split(".")[0];
      if (!top) continue;
      const here = [dir, path.join(dir, "src"), path.join(dir, path.dirname(test))];
      if (
        here.some((root) =>
          existsSync(path.join(root, `${top}.py`)) ||
          existsSync(path.join(root, top, "__init__.py"))
        )
      ) {
        modules.add(top);
      }
    }
  }
  const [a, b] = distinctNumbers();
  const n = distinctNumbers()[0];
  const body: Record<string, string> = {
    assert: `assert ${a} == ${b}`,
    raise: `raise AssertionError("finishline canary ${context.token}")`,
    fail: `import pytest\n    pytest.fail("finishline canary ${context.token}")`,
  };
  const canary = canaryNames("pytest", context.token, Object.keys(body));
  const lines = [
    "import importlib",
    "",
    `for _name in ${JSON.stringify([...modules])}:`,
    "    try:",
    "        importlib.import_module(_name)",
    "    except BaseException:",
    "        pass",
    "",
    `def ${canary.mustPass}():`,
    `    assert ${n} == ${n}`,
    "",
    ...canary.mustFail.flatMap((name, index) => [
      `def ${name}():`,
      `    ${Object.values(body)[index]}`,
      "",
    ]),
  ];
  const folder = tests.length > 0 ? path.dirname(tests[0]) : ".";
  const file = path.join(dir, folder, `test_finishline_canary_${context.token}.py`);
  await context.write(file, lines.join("\n"));
  const relative = path.relative(dir, file);
  return [{
    canary,
    command: `python3 -m pytest -q -p no:cacheprovider ${JSON.stringify(relative)}`,
    cwd: dir,
  }];
}
