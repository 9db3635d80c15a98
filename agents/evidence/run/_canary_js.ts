/**
 * The canaries of the JavaScript runners: node --test, jest, vitest, mocha
 * and deno test. Each is a test file beside the repository's tests (named
 * after them, so the runner's pattern for test files takes it), run by the
 * project's own runner (`node_modules/.bin/<runner>`, from the folder whose
 * configuration applies) with the options the check gives it. It loads
 * first the modules the repository's tests import, each in a try, and
 * asserts through the runner's own assertions and every assertion library
 * the tests import, by the same specifier (an import map or a module
 * mapping that swaps one for a no-op swaps it for the canary too).
 *
 * @module
 */

import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  besideName,
  canaryNames,
  commandLine,
  distinctNumbers,
  isFile,
  nearest,
  type PlaceContext,
  type Placement,
  relativeSpecifier,
  runnerLine,
  type RunnerOptions,
  styleName,
  testFiles,
} from "./_canary_common.ts";
import type { TestRunner } from "./test_report.ts";
import {
  ASSERTION_LIBRARY,
  DENO_OPTIONS,
  DENO_TESTS,
  JEST_OPTIONS,
  JEST_TESTS,
  LIBRARIES,
  MOCHA_OPTIONS,
  MOCHA_TESTS,
  NODE_OPTIONS,
  NODE_TESTS,
  VITEST_OPTIONS,
  VITEST_TESTS,
} from "./_canary_js_runners.ts";

/** The modules the tests import: relative ones resolved to files, and assertion libraries by specifier. */
interface TestImports {
  /** Absolute paths of the repository's modules the tests import (test files left out). */
  modules: string[];
  /** Specifiers of assertion libraries, as the tests write them. */
  libraries: string[];
}

async function testImports(
  dir: string,
  tests: readonly string[],
  resolve: (target: string) => string | undefined,
): Promise<TestImports> {
  const modules = new Set<string>();
  const libraries = new Set<string>();
  const testPaths = new Set(tests.map((test) => path.join(dir, test)));
  for (const test of tests) {
    const text = await Deno.readTextFile(path.join(dir, test)).catch(() => "");
    const specifiers = text.matchAll(/(?:require\(\s*|from\s+|import\s*\(?\s*)['"]([^'"\s]+)['"]/g);
    for (const [, specifier] of specifiers) {
      if (/^\.{1,2}\//.test(specifier)) {
        const resolved = resolve(path.join(dir, path.dirname(test), specifier));
        if (resolved && !testPaths.has(resolved)) modules.add(resolved);
      } else if (ASSERTION_LIBRARY.test(specifier) && libraries.size < LIBRARIES) {
        libraries.add(specifier);
      }
    }
  }
  return { modules: [...modules], libraries: [...libraries] };
}

/** A module path as node and the bundlers resolve a relative specifier: the file, an extension, a `.ts` for a `.js`, an index. */
function resolveNode(target: string): string | undefined {
  const extensions = [".js", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".jsx"];
  const swapped = target.replace(/\.([cm]?)js(x?)$/, ".$1ts$2");
  const candidates = [
    target,
    swapped,
    ...extensions.map((extension) => `${target}${extension}`),
    ...extensions.map((extension) => path.join(target, `index${extension}`)),
  ];
  return candidates.find(isFile);
}

/** Deno resolves a relative specifier as written. */
function resolveExact(target: string): string | undefined {
  return isFile(target) ? target : undefined;
}

/**
 * The canary's test through an assertion library: every assertion the
 * library has of a few well-known shapes (`expect(a).toBe(b)`,
 * `expect(a).to.equal(b)`, `assert.strictEqual(a, b)`, `assertEquals(a, b)`,
 * `assert(a === b)`, ...) is called with a ≠ b. It returns, and so passes,
 * as soon as one of them does not throw: a library whose assertion accepts a
 * false statement was tampered with. It throws when all of them threw, or
 * when the library has none of these shapes.
 */
const THROUGH = [
  "function __finishlineThrough(lib, a, b) {",
  "  const d = lib && lib.default ? lib.default : lib;",
  "  const calls = [];",
  "  const add = (owner, name, ...args) => {",
  "    // chai's proxies throw on a property they do not have.",
  "    try {",
  '      if (typeof owner?.[name] === "function") calls.push(() => owner[name](...args));',
  "    } catch {",
  "      // not one of its assertions",
  "    }",
  "  };",
  "  const expect = lib?.expect ?? d?.expect;",
  '  if (typeof expect === "function") {',
  '    for (const name of ["toBe", "toEqual", "toStrictEqual"]) add(expect(a), name, b);',
  '    for (const name of ["equal", "eql"]) add(expect(a)?.to, name, b);',
  "  }",
  '  for (const assert of new Set([lib?.assert, d?.assert, typeof d === "function" ? d : undefined])) {',
  '    if (typeof assert !== "function" && typeof assert !== "object") continue;',
  "    // Only a function that is an assertion is called with a false statement.",
  '    const callable = typeof assert === "function" &&',
  '      (/^(?:assert|ok)$/.test(assert.name) || typeof assert.strictEqual === "function");',
  "    if (callable) calls.push(() => assert(a === b));",
  '    add(assert, "ok", a === b);',
  '    add(assert, "isTrue", a === b);',
  '    add(assert, "equal", a, b);',
  '    add(assert, "strictEqual", a, b);',
  '    add(assert, "deepEqual", [a], [b]);',
  '    add(assert, "deepStrictEqual", [a], [b]);',
  "  }",
  '  add(lib, "assertEquals", a, b);',
  '  add(lib, "assertStrictEquals", a, b);',
  "  for (const call of calls) {",
  "    try {",
  "      call();",
  "    } catch {",
  "      continue;",
  "    }",
  "    return;",
  "  }",
  "  throw new Error(`finishline canary: ${calls.length} assertions of the library failed, as they must`);",
  "}",
];

/** How a canary file is written for one runner. */
interface Dialect {
  /** ES module (top-level await, `import()`) or CommonJS (`require`). */
  esm: boolean;
  /**
   * Lines after the modules the tests import, before the tests: the
   * runner's names, bound as the tests find them once those modules have run
   * (a module that replaces `test` when imported has replaced it by then).
   */
  header: string[];
  /** The expression that declares a test. */
  test: string;
  /** The runner's own assertion styles: style → statement that throws for a ≠ b. */
  styles: (a: number, b: number) => Record<string, string>;
  /** The must-pass test's statement for n = n. */
  pass: (n: number) => string;
}

/** Write a canary file: the modules the tests import, then the tests. */
async function writeCanary(
  context: PlaceContext,
  runner: TestRunner,
  file: string,
  dialect: Dialect,
  imports: TestImports,
): Promise<ReturnType<typeof canaryNames>> {
  const [a, b] = distinctNumbers();
  const n = distinctNumbers()[0];
  const folder = path.dirname(file);
  const load = (specifier: string) =>
    dialect.esm
      ? `(await import(${JSON.stringify(specifier)}))`
      : `require(${JSON.stringify(specifier)})`;
  const styles: Record<string, string> = dialect.styles(a, b);
  for (const library of imports.libraries) {
    const name = `lib_${styleName(library)}`;
    if (!(name in styles)) styles[name] = `__finishlineThrough(${load(library)}, ${a}, ${b});`;
  }
  const canary = canaryNames(runner, context.token, Object.keys(styles));
  const body = (statement: string) =>
    dialect.esm ? `async () => { ${statement} }` : `() => { ${statement} }`;
  const lines = [
    "// @ts-nocheck",
    "// finishline's canary: its own tests, removed after its run.",
    ...imports.modules.map((module) =>
      `try { ${
        load(relativeSpecifier(folder, module))
      }; } catch { /* loads alone or not at all */ }`
    ),
    ...dialect.header,
    ...THROUGH,
    `${dialect.test}(${JSON.stringify(canary.mustPass)}, ${body(dialect.pass(n))});`,
    ...canary.mustFail.map((name, index) =>
      `${dialect.test}(${JSON.stringify(name)}, ${body(Object.values(styles)[index])});`
    ),
    "",
  ];
  await context.write(file, lines.join("\n"));
  return canary;
}

/** Whether a JavaScript file beside `file` is an ES module: its extension, else its package's `type`. */
function isEsm(root: string, file: string): boolean {
  if (/\.m[jt]sx?$/.test(file)) return true;
  if (/\.c[jt]sx?$/.test(file)) return false;
  const pkg = nearest(
    root,
    path.dirname(file),
    (folder) => isFile(path.join(folder, "package.json")),
  );
  if (!pkg) return false;
  try {
    return JSON.parse(Deno.readTextFileSync(path.join(pkg, "package.json"))).type === "module";
  } catch {
    return false;
  }
}

/**
 * node --test: an ES module at the copy's root, its imports by file URL, run
 * with the options of the check's `node --test` line.
 */
export async function placeNode(context: PlaceContext): Promise<Placement> {
  const tests = await testFiles(context.dir, NODE_TESTS, context.changed);
  const imports = await testImports(context.dir, tests, resolveNode);
  const [a, b] = distinctNumbers();
  const n = distinctNumbers()[0];
  const body = {
    ok: `assert.ok(${a} === ${b});`,
    equal: `assert.equal(${a}, ${b});`,
    strictEqual: `assert.strictEqual(${a}, ${b});`,
    deepStrictEqual: `assert.deepStrictEqual([${a}], [${b}]);`,
    strict: `strict.equal(${a}, ${b});`,
    throws: "assert.throws(() => {});",
    throw: `throw new Error("finishline canary ${context.token}");`,
  };
  const canary = canaryNames("node", context.token, Object.keys(body));
  const lines = [
    'import { test } from "node:test";',
    'import assert from "node:assert";',
    'import strict from "node:assert/strict";',
    ...imports.modules.map((file) =>
      `try { await import(${
        JSON.stringify(pathToFileURL(file).href)
      }); } catch { /* loads alone or not at all */ }`
    ),
    `test(${JSON.stringify(canary.mustPass)}, () => { assert.strictEqual(${n}, ${n}); });`,
    ...canary.mustFail.map((name, index) =>
      `test(${JSON.stringify(name)}, () => { ${Object.values(body)[index]} });`
    ),
    "",
  ];
  const file = path.join(context.dir, `finishline-canary-${context.token}.test.mjs`);
  await context.write(file, lines.join("\n"));
  const line = await runnerLine(context, "node", NODE_OPTIONS);
  const options = line?.options ?? ["--test"];
  // tsx when the check runs its tests with tsx: the modules the canary imports may be TypeScript.
  const program = line?.program.split("/").pop() === "tsx" ? line.program : "node";
  return [{
    canary,
    command: commandLine(line?.env ?? [], [program, ...options, path.basename(file)]),
    cwd: context.dir,
  }];
}

/** Where a node_modules runner's canary goes and runs: beside a test file, from the folder with its binary. */
async function nodeModulesPlace(
  context: PlaceContext,
  runner: "jest" | "vitest" | "mocha",
  pattern: RegExp,
): Promise<
  { tests: string[]; file: string; cwd: string; binary: string } | { why: string }
> {
  const tests = await testFiles(context.dir, pattern, context.changed);
  if (tests.length === 0) return { why: `no ${runner} test file was found` };
  const folder = path.join(context.dir, path.dirname(tests[0]));
  const binary = path.join("node_modules", ".bin", runner);
  const cwd = nearest(context.dir, folder, (at) => isFile(path.join(at, binary)));
  if (!cwd) return { why: `no ${binary} was found above ${path.dirname(tests[0]) || "."}` };
  return { tests, file: path.join(folder, besideName(tests[0], context.token)), cwd, binary };
}

/** The check's options and variables for the runner, when the check runs it from the copy's root. */
async function lineAt(
  context: PlaceContext,
  runner: TestRunner,
  table: RunnerOptions,
  cwd: string,
): Promise<{ env: string[]; options: string[] }> {
  const line = cwd === context.dir ? await runnerLine(context, runner, table) : undefined;
  return line ?? { env: [], options: [] };
}

/**
 * jest: a test file beside the first test file, CommonJS (jest's transform
 * takes it as it takes the tests), declared and asserted through jest's
 * globals as a setup file leaves them, run by exact path
 * (`--runTestsByPath`).
 */
export async function placeJest(context: PlaceContext): Promise<Placement> {
  const where = await nodeModulesPlace(context, "jest", JEST_TESTS);
  if ("why" in where) return where;
  const imports = await testImports(context.dir, where.tests, resolveNode);
  const canary = await writeCanary(context, "jest", where.file, {
    esm: false,
    // The names the tests use, as the tests find them.
    header: [
      'const { expect, test } = typeof globalThis.test === "function" ? globalThis : require("@jest/globals");',
    ],
    test: "test",
    styles: (a, b) => ({
      expect_toBe: `expect(${a}).toBe(${b});`,
      expect_toEqual: `expect([${a}]).toEqual([${b}]);`,
      expect_toThrow: "expect(() => {}).toThrow();",
      node_assert: `require("node:assert").strictEqual(${a}, ${b});`,
      throw: `throw new Error("finishline canary ${context.token}");`,
    }),
    pass: (n) => `expect(${n}).toBe(${n});`,
  }, imports);
  const line = await lineAt(context, "jest", JEST_OPTIONS, where.cwd);
  const words = [where.binary, path.relative(where.cwd, where.file), "--runTestsByPath"];
  return [{ canary, command: commandLine(line.env, [...words, ...line.options]), cwd: where.cwd }];
}

/** vitest: an ES module beside the first test file, through vitest's own and global `test` and `expect`. */
export async function placeVitest(context: PlaceContext): Promise<Placement> {
  const where = await nodeModulesPlace(context, "vitest", VITEST_TESTS);
  if ("why" in where) return where;
  const imports = await testImports(context.dir, where.tests, resolveNode);
  imports.libraries = imports.libraries.filter((library) => library !== "vitest");
  const canary = await writeCanary(context, "vitest", where.file, {
    esm: true,
    // vitest's own, or its globals when the configuration turns them on (a setup file may have replaced them).
    header: [
      'import * as __finishlineVitest from "vitest";',
      "const { expect, test } = globalThis.expect ? globalThis : __finishlineVitest;",
      "const { assert } = __finishlineVitest;",
    ],
    test: "test",
    styles: (a, b) => ({
      expect_toBe: `expect(${a}).toBe(${b});`,
      expect_toEqual: `expect([${a}]).toEqual([${b}]);`,
      expect_toThrow: "expect(() => {}).toThrow();",
      assert: `assert.strictEqual(${a}, ${b});`,
      throw: `throw new Error("finishline canary ${context.token}");`,
    }),
    pass: (n) => `expect(${n}).toBe(${n});`,
  }, imports);
  const line = await lineAt(context, "vitest", VITEST_OPTIONS, where.cwd);
  const words = [where.binary, "run", path.relative(where.cwd, where.file)];
  return [{ canary, command: commandLine(line.env, [...words, ...line.options]), cwd: where.cwd }];
}

/**
 * mocha: a test file beside the first test file, in its module system, run
 * alone (its configured spec files are ignored, its required modules, root
 * hooks and `--file`s are not).
 */
export async function placeMocha(context: PlaceContext): Promise<Placement> {
  const where = await nodeModulesPlace(context, "mocha", MOCHA_TESTS);
  if ("why" in where) return where;
  const imports = await testImports(context.dir, where.tests, resolveNode);
  const esm = isEsm(context.dir, where.file);
  const nodeAssert = esm ? '(await import("node:assert")).default' : 'require("node:assert")';
  const canary = await writeCanary(context, "mocha", where.file, {
    esm,
    // The BDD interface's `it`, or the TDD and QUnit interfaces' `test`.
    header: ["const test = globalThis.it ?? globalThis.test;"],
    test: "test",
    styles: (a, b) => ({
      node_assert: `${nodeAssert}.strictEqual(${a}, ${b});`,
      throw: `throw new Error("finishline canary ${context.token}");`,
    }),
    pass: (n) => `${nodeAssert}.strictEqual(${n}, ${n});`,
  }, imports);
  const line = await lineAt(context, "mocha", MOCHA_OPTIONS, where.cwd);
  // mocha adds its configured spec files to those it is given: every file but the canary is ignored.
  const alone = `**/!(${path.basename(where.file)})`;
  const words = [where.binary, path.relative(where.cwd, where.file), "--ignore", alone];
  return [{ canary, command: commandLine(line.env, [...words, ...line.options]), cwd: where.cwd }];
}

/** deno test: a test module beside the first test file, asserting through `node:assert` and the tests' libraries by their specifiers. */
export async function placeDeno(context: PlaceContext): Promise<Placement> {
  const tests = await testFiles(context.dir, DENO_TESTS, context.changed);
  if (tests.length === 0) return { why: "no deno test file was found" };
  const imports = await testImports(context.dir, tests, resolveExact);
  const file = path.join(context.dir, path.dirname(tests[0]), besideName(tests[0], context.token));
  const canary = await writeCanary(context, "deno", file, {
    esm: true,
    header: [],
    test: "Deno.test",
    styles: (a, b) => ({
      node_assert: `(await import("node:assert")).default.strictEqual(${a}, ${b});`,
      throw: `throw new Error("finishline canary ${context.token}");`,
    }),
    pass: (n) => `if (${n} !== ${n}) throw new Error("unreachable");`,
  }, imports);
  const line = await runnerLine(context, "deno", DENO_OPTIONS);
  // Without a check's line, the permissions the suite most likely runs with.
  const options = line?.options ?? ["-A"];
  // The canary is new at every run, so its type check is never cached: seconds for nothing it tests.
  const check = options.some((option) => /^--(?:no-)?check\b/.test(option)) ? [] : ["--no-check"];
  const words = ["deno", "test", ...check, ...options, path.relative(context.dir, file)];
  return [{ canary, command: commandLine(line?.env ?? [], words), cwd: context.dir }];
}
