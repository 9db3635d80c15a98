/**
 * Every path-typed field of agent.json refuses an escape. The test walks the
 * published schema (agents/schemas/agent.schema.json) for every field that
 * names a path (by its name or its description), so a new path field fails
 * here until it is added to the table below with a way to try it; then each
 * field is given an absolute path out, a `..` path out and a symlink out,
 * and the real CLI (`--dry-run`, which reads every file the run would) must
 * refuse it: one line naming the field, exit 2, nothing written, nothing
 * from the file outside quoted.
 */

import assert from "node:assert/strict";
import { FilesChecker } from "../../agents/checks/files.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";

const SCHEMA = new URL("../../agents/schemas/agent.schema.json", import.meta.url);
const MARKER = "MARKER-outside-path-fields-91d2";

/** A field, found in the schema: its dotted path (`[]` for array items) and description. */
interface Field {
  path: string;
  description: string;
}

/** Every string (or string array) field whose name or description says it is a path. */
function pathFields(node: unknown, at: string[] = [], found: Field[] = []): Field[] {
  if (!node || typeof node !== "object") return found;
  const schema = node as Record<string, unknown>;
  const name = at.at(-1) ?? "";
  const description = typeof schema.description === "string" ? schema.description : "";
  const items = schema.items as Record<string, unknown> | undefined;
  const stringy = schema.type === "string" || (schema.type === "array" && items?.type === "string");
  if (
    stringy && name !== "$schema" &&
    (/(path|paths|dir|directory|folder|file|registry)$/i.test(name) ||
      /relative to/i.test(description))
  ) {
    found.push({ path: at.join("."), description });
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === "properties") {
      for (const [property, child] of Object.entries(value as Record<string, unknown>)) {
        pathFields(child, [...at, property], found);
      }
    } else if (key === "items" && schema.type === "array" && items?.type !== "string") {
      pathFields(value, [...at.slice(0, -1), `${name}[]`], found);
    } else if (["anyOf", "oneOf", "allOf"].includes(key) && Array.isArray(value)) {
      for (const child of value) pathFields(child, at, found);
    } else if (["$defs", "definitions", "then", "else"].includes(key)) {
      if (key === "then" || key === "else") pathFields(value, at, found);
      else for (const child of Object.values(value as object)) pathFields(child, at, found);
    }
  }
  return found;
}

/** How a field is tried: the agent.json that sets it to `value`, and what it must be. */
interface Trial {
  /** `file` or `folder` in the agent folder, or the `log` folder (relative to the repository). */
  kind: "file" | "folder" | "log";
  definition: (value: string) => Record<string, unknown>;
}

const iterate = { completionConfig: { maxIterations: 1 } };

/** Every path field of the schema, and how to try it. */
const TRIALS: Record<string, Trial> = {
  "behavior.systemPromptPath": {
    kind: "file",
    definition: (value) => ({ behavior: { ...iterate, systemPromptPath: value } }),
  },
  "behavior.completionConfig.handlerPath": {
    kind: "file",
    definition: (value) => ({
      behavior: {
        completionType: "custom",
        completionConfig: { handlerPath: value, maxIterations: 1 },
      },
    }),
  },
  "prompts.registry": {
    kind: "file",
    definition: (value) => ({ behavior: iterate, prompts: { registry: value } }),
  },
  "prompts.fallbackDir": {
    kind: "folder",
    definition: (value) => ({ behavior: iterate, prompts: { fallbackDir: value } }),
  },
  "logging.directory": {
    kind: "log",
    definition: (value) => ({ behavior: iterate, logging: { directory: value } }),
  },
  "verify.checks[].path": {
    kind: "file",
    definition: (value) => ({
      behavior: iterate,
      verify: { checks: [{ type: "custom", path: value }] },
    }),
  },
  // Checked where the run uses it (the paths need not exist yet): tried below.
  "verify.checks[].paths": {
    kind: "log",
    definition: (value) => ({
      behavior: iterate,
      verify: { checks: [{ type: "files", paths: [value] }] },
    }),
  },
};

Deno.test("every path field of the agent.json schema is in this test's table", async () => {
  const schema = JSON.parse(await Deno.readTextFile(SCHEMA));
  const found = [...new Set(pathFields(schema).map((field) => field.path))].sort();
  assert.deepEqual(
    found,
    Object.keys(TRIALS).sort(),
    "a path field of agent.json is not tried for escapes: add it to TRIALS",
  );
});

Deno.test("every path field refuses an absolute path, a '..' path and a symlink that lead out", async (t) => {
  await using outside = await tempDir("finishline-outside-");
  await Deno.writeTextFile(`${outside.path}/file.md`, `${MARKER} {uv-task}\n`);
  await Deno.writeTextFile(`${outside.path}/registry.json`, `{"prompts": {}}`);
  await Deno.writeTextFile(
    `${outside.path}/h.ts`,
    `export default () => { throw "${MARKER}"; };\n`,
  );
  for (const [field, trial] of Object.entries(TRIALS)) {
    if (field === "verify.checks[].paths") continue;
    const target = trial.kind === "file" ? "file.md" : "";
    const escapes: Record<string, string> = {
      absolute: `${outside.path}/${target}`,
      "..": trial.kind === "log" ? "../outside-log" : `../../../outside/${target}`,
      symlink: trial.kind === "log" ? "linked-logs" : `linked${target ? ".md" : ""}`,
    };
    for (const [escape, value] of Object.entries(escapes)) {
      await t.step(`${field}: ${escape}`, async () => {
        await using repo = await tempRepo();
        await Deno.mkdir(`${repo.path}/.agent/x`, { recursive: true });
        const linkAt = trial.kind === "log" ? repo.path : `${repo.path}/.agent/x`;
        await Deno.symlink(
          trial.kind === "file" ? `${outside.path}/file.md` : outside.path,
          `${linkAt}/${escapes.symlink}`,
        );
        await Deno.writeTextFile(
          `${repo.path}/.agent/x/agent.json`,
          JSON.stringify({ name: "x", ...trial.definition(value) }),
        );
        await git(repo.path, "add", "-A");
        await git(repo.path, "commit", "-qm", "fixture");
        const run = await runCli(["--agent", "x", "--task", "t", "--dry-run"], { cwd: repo.path });
        assert.equal(run.code, 2, run.stderr + run.stdout);
        const lines = run.stderr.trim().split("\n");
        assert.equal(lines.length, 1, run.stderr);
        const leaf = field.split(".").at(-1)!.replace("[]", "");
        assert.ok(lines[0].includes(leaf), `the line names ${leaf}: ${lines[0]}`);
        assert.ok(!run.stderr.includes(MARKER) && !run.stdout.includes(MARKER), "nothing quoted");
        assert.equal(await git(repo.path, "status", "--porcelain", "--ignored"), "");
        await assert.rejects(Deno.stat(`${repo.path}/.agent/.finishline`));
        assert.deepEqual(
          [...Deno.readDirSync(outside.path)].map((entry) => entry.name).sort(),
          ["file.md", "h.ts", "registry.json"],
          "nothing written outside",
        );
      });
    }
  }
});

Deno.test("a files check refuses a path out as written, and counts a symlink out as missing", async () => {
  await using repo = await tempRepo();
  await using outside = await tempDir("finishline-outside-");
  await Deno.writeTextFile(`${outside.path}/exists.txt`, "x");
  for (const value of [`${outside.path}/exists.txt`, "../outside/exists.txt"]) {
    await Deno.mkdir(`${repo.path}/.agent/x`, { recursive: true });
    await Deno.writeTextFile(
      `${repo.path}/.agent/x/agent.json`,
      JSON.stringify({ name: "x", ...TRIALS["verify.checks[].paths"].definition(value) }),
    );
    const run = await runCli(["--agent", "x", "--task", "t", "--dry-run"], { cwd: repo.path });
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /"verify\.checks\[0\]\.paths\[0\]": expected a relative path that stays inside/,
    );
  }
  await Deno.symlink(`${outside.path}/exists.txt`, `${repo.path}/linked.txt`);
  await Deno.writeTextFile(`${repo.path}/inside.txt`, "x");
  const result = await new FilesChecker(["linked.txt", "inside.txt"]).check(
    { cwd: repo.path } as never,
  );
  assert.equal(result.complete, false);
  assert.match(result.feedback ?? "", /Missing required files: linked\.txt$/);
});
