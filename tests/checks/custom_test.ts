import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadCustomChecker } from "../../agents/checks/custom.ts";
import { UsageError } from "../../agents/support/errors.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { tempDir } from "../_helpers.ts";
import { contextOf } from "./_helpers.ts";

const FIELD = "verify.checks[0].path";

/** A project folder with an agent folder `.agent/demo/` holding `files`. */
async function agentWith(root: string, files: Record<string, string>): Promise<URL> {
  const dir = join(root, ".agent", "demo");
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await Deno.writeTextFile(join(dir, name), text);
  }
  return pathToFileURL(`${dir}/`);
}

/** The message of the UsageError `fn` rejects with. */
async function usageErrorOf(fn: () => Promise<unknown>): Promise<string> {
  let message = "";
  await assert.rejects(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.ok(!error.message.includes("\n"), `one line: ${error.message}`);
    message = error.message;
    return true;
  });
  return message;
}

Deno.test("loadCustomChecker loads a checker module from the agent folder", async (t) => {
  await using root = await tempDir();
  const agentDir = await agentWith(root.path, {
    "object.ts": `export default {
      name: "changelog",
      check: (context) => ({ complete: context.summary.iteration > 1, feedback: "iteration " + context.summary.iteration }),
    };\n`,
    "class.ts": `class Counter {
      #seen = 0;
      check() { this.#seen++; return { complete: this.#seen >= 2, feedback: "seen " + this.#seen }; }
    }
    export default new Counter();\n`,
    "factory.ts": `export default (options) => ({
      name: "threshold",
      check: () => ({ complete: options.min <= 3, feedback: "min " + options.min }),
    });\n`,
    "async_factory.ts": `export default async (options) => {
      await Promise.resolve();
      return { check: () => ({ complete: true, feedback: JSON.stringify(options) }) };
    };\n`,
  });
  const base = { agentDir, cwd: root.path, field: FIELD };

  await t.step("a module exporting a checker object, called with the context", async () => {
    const checker = await loadCustomChecker("object.ts", base);
    assert.equal(checker.name, "changelog");
    assert.deepEqual(await checker.check(contextOf()), {
      complete: false,
      feedback: "iteration 1",
    });
  });

  await t.step("a checker object keeps its own this", async () => {
    const checker = await loadCustomChecker("class.ts", base);
    assert.equal((await checker.check(contextOf())).complete, false);
    assert.deepEqual(await checker.check(contextOf()), { complete: true, feedback: "seen 2" });
  });

  await t.step("a module exporting a factory receives the options", async () => {
    const passing = await loadCustomChecker("factory.ts", { ...base, options: { min: 2 } });
    assert.equal(passing.name, "threshold");
    assert.deepEqual(await passing.check(contextOf()), { complete: true, feedback: "min 2" });
    const failing = await loadCustomChecker("factory.ts", { ...base, options: { min: 5 } });
    assert.equal((await failing.check(contextOf())).complete, false);
  });

  await t.step("an async factory is awaited, with {} when no options are given", async () => {
    const checker = await loadCustomChecker("async_factory.ts", base);
    assert.deepEqual(await checker.check(contextOf()), { complete: true, feedback: "{}" });
  });

  await t.step("the configured name wins, then the checker's, then the file's name", async () => {
    assert.equal((await loadCustomChecker("object.ts", { ...base, name: "mine" })).name, "mine");
    assert.equal((await loadCustomChecker("async_factory.ts", base)).name, "async_factory");
  });
});

Deno.test("loadCustomChecker takes a class, a module's own check, and a factory's check function", async (t) => {
  await using root = await tempDir();
  await Deno.writeTextFile(join(root.path, "output.txt"), "done\n");
  const agentDir = await agentWith(root.path, {
    "file_exists.ts": `export default class FileExistsChecker {
      constructor(options) { this.required = options.requiredFiles; }
      check(context) {
        const missing = this.required.filter((file) => !context.filesystem.exists(file));
        return missing.length > 0
          ? { complete: false, feedback: "Missing required files: " + missing.join(", ") }
          : { complete: true, feedback: "All required files exist." };
      }
    }\n`,
    "named_class.ts":
      `export default class { name = "changelog"; check() { return { complete: true }; } }\n`,
    "module_check.ts": `export const name = "stop-reason";
    export function check(context) { return { complete: context.stopReason === "complete_task", feedback: String(context.stopReason) }; }\n`,
    "returns_function.ts":
      `export default (options) => (context) => ({ complete: context.summary.iteration >= options.after });\n`,
  });
  const base = { agentDir, cwd: root.path, field: FIELD };
  const context = contextOf({ cwd: root.path });

  await t.step("a class is instantiated with the options, named after its file", async () => {
    const present = await loadCustomChecker("file_exists.ts", {
      ...base,
      options: { requiredFiles: ["output.txt"] },
    });
    assert.equal(present.name, "file_exists");
    assert.deepEqual(await present.check(context), {
      complete: true,
      feedback: "All required files exist.",
    });
    const missing = await loadCustomChecker("file_exists.ts", {
      ...base,
      options: { requiredFiles: ["output.txt", "report.md"] },
    });
    assert.deepEqual(await missing.check(context), {
      complete: false,
      feedback: "Missing required files: report.md",
    });
  });

  await t.step("a class instance's own name is kept", async () => {
    assert.equal((await loadCustomChecker("named_class.ts", base)).name, "changelog");
  });

  await t.step("a module without a default export may export check and name", async () => {
    const checker = await loadCustomChecker("module_check.ts", base);
    assert.equal(checker.name, "stop-reason");
    assert.deepEqual(await checker.check(contextOf({ stopReason: "complete_task" })), {
      complete: true,
      feedback: "complete_task",
    });
  });

  await t.step("a factory may return the check function itself", async () => {
    const checker = await loadCustomChecker("returns_function.ts", {
      ...base,
      options: { after: 2 },
    });
    assert.equal(checker.name, "returns_function");
    assert.equal((await checker.check(contextOf())).complete, false);
    assert.equal((await checker.check(contextOf({ summary: emptySummary(2) }))).complete, true);
  });
});

Deno.test("loadCustomChecker refuses bad modules with a UsageError naming the file", async (t) => {
  await using root = await tempDir();
  const agentDir = await agentWith(root.path, {
    "number.ts": "export default 42;\n",
    "no_default.ts": "export const checker = { check: () => ({ complete: true }) };\n",
    "no_check.ts": `export default { name: "x", verify: () => true };\n`,
    "factory_bad.ts": "export default () => ({ name: 'nothing to call' });\n",
    "factory_throws.ts": "export default () => { throw new Error('missing option \"min\"'); };\n",
    "syntax.ts": "export default {\n",
  });
  const base = { agentDir, cwd: root.path, field: FIELD };
  const shape =
    "expected a default export that is a checker ({ check(context) }), a class, or a factory (options) => checker";

  for (const file of ["number.ts", "no_default.ts", "no_check.ts", "factory_bad.ts"]) {
    await t.step(`${file} is not a checker`, async () => {
      const message = await usageErrorOf(() => loadCustomChecker(file, base));
      assert.equal(message, `Cannot load custom checker ".agent/demo/${file}": ${shape}`);
    });
  }

  await t.step("a factory that throws is reported with its error", async () => {
    const message = await usageErrorOf(() => loadCustomChecker("factory_throws.ts", base));
    assert.equal(
      message,
      `Custom checker factory ".agent/demo/factory_throws.ts" failed: missing option "min"`,
    );
  });

  await t.step("a module that does not load is reported with the file", async () => {
    const message = await usageErrorOf(() => loadCustomChecker("syntax.ts", base));
    assert.match(message, /^Cannot load custom checker "\.agent\/demo\/syntax\.ts": /);
  });

  await t.step("a missing module names the field and the file", async () => {
    const message = await usageErrorOf(() => loadCustomChecker("nope.ts", base));
    assert.equal(message, `Cannot load "${FIELD}" ".agent/demo/nope.ts": file not found`);
  });
});

Deno.test("loadCustomChecker refuses paths that leave the agent folder", async (t) => {
  await using root = await tempDir();
  const agentDir = await agentWith(root.path, {});
  await Deno.writeTextFile(
    join(root.path, "outside.ts"),
    "export default { check: () => ({ complete: true }) };\n",
  );
  const base = { agentDir, cwd: root.path, field: FIELD };

  await t.step("a relative path that climbs out", async () => {
    const message = await usageErrorOf(() => loadCustomChecker("../../outside.ts", base));
    assert.equal(
      message,
      `Refusing "${FIELD}" "../../outside.ts": it must stay inside the agent folder ".agent/demo/"`,
    );
  });

  await t.step("an absolute path elsewhere", async () => {
    const outside = join(root.path, "outside.ts");
    const message = await usageErrorOf(() => loadCustomChecker(outside, base));
    assert.match(
      message,
      /^Refusing "verify\.checks\[0\]\.path" ".*outside\.ts": it must stay inside/,
    );
  });

  await t.step("a symlink inside the folder that points outside", async () => {
    await Deno.symlink(join(root.path, "outside.ts"), join(root.path, ".agent/demo/link.ts"));
    const message = await usageErrorOf(() => loadCustomChecker("link.ts", base));
    assert.match(
      message,
      /^Refusing "verify\.checks\[0\]\.path" "\.agent\/demo\/link\.ts": it resolves outside the agent folder/,
    );
  });
});
