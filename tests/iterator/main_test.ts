/**
 * The CLI's entry: what it does with no arguments, and what it loads before
 * a command needs it (the module graph as Deno reads it, `deno info --json`).
 */

import assert from "node:assert/strict";
import { main } from "../../agents/iterator/main.ts";
import { SqliteStore } from "../../agents/store/mod.ts";

const ROOT = new URL("../../", import.meta.url);

interface GraphModule {
  specifier: string;
  kind?: string;
  npmPackage?: string;
  dependencies?: Array<{ code?: { specifier?: string }; isDynamic?: boolean }>;
}

/** The modules `deno run` of an entry loads: code imports only; with `dynamic`, the analyzable dynamic ones too. */
async function loaded(entry: string, options: { dynamic: boolean }): Promise<Set<string>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL(entry, ROOT).pathname],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    roots: string[];
    modules: GraphModule[];
  };
  const modules = new Map(info.modules.map((module) => [module.specifier, module]));
  const seen = new Set<string>();
  const todo = [...info.roots];
  while (todo.length > 0) {
    const specifier = todo.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    const module = modules.get(specifier);
    if (module?.kind === "npm" && module.npmPackage) seen.add(`npm:${module.npmPackage}`);
    for (const dependency of module?.dependencies ?? []) {
      if (dependency.isDynamic && !options.dynamic) continue;
      if (dependency.code?.specifier) todo.push(dependency.code.specifier);
    }
  }
  return new Set([...seen].map((specifier) => specifier.replace(ROOT.href, "")));
}

Deno.test("no arguments prints the help and a hint about --task and --issue, exit 2, and runs nothing", async () => {
  let stdout = "";
  let stderr = "";
  const code = await main([], {
    stdout: (text) => stdout += text,
    stderr: (text) => stderr += text,
  });
  assert.equal(code, 2);
  assert.equal(stdout, "");
  assert.match(stderr, /^finishline: run a coding agent in iterations/);
  assert.match(stderr, /\nUsage:\n/);
  assert.match(
    stderr,
    /\nNothing to do: give a task \(--task "[^"]+"\) or a GitHub issue \(--issue 42\)\n$/,
  );
});

Deno.test("--help, --version and completions load the flags only: no run machinery, no npm package, no node: module", async () => {
  const modules = await loaded("agents/iterator/main.ts", { dynamic: false });
  // The first node: module starts Deno's Node layer, a start-up of its own.
  const machinery = [...modules].filter((path) =>
    /^agents\/(loop|evidence|checks|finish|store|embeddings|git|github|backends\/(claude|acp|model_access))|^npm:|^node:/
      .test(path) || path === "agents/support/sinks.ts"
  );
  assert.deepEqual(machinery, [], "loaded before any command needs it");
  assert.ok(modules.has("agents/iterator/flags/table.ts"));
  // What a run needs is still there, loaded when the command runs.
  const all = await loaded("agents/iterator/main.ts", { dynamic: true });
  for (const path of ["agents/loop/runner.ts", "agents/iterator/run/command.ts"]) {
    assert.ok(all.has(path), path);
  }
});

Deno.test("runs loads the run history, not the agent definitions (their schema, zod, jsonc-parser)", async () => {
  const modules = await loaded("agents/iterator/commands/history.ts", { dynamic: false });
  assert.ok(modules.has("agents/store/mod.ts"));
  const definitions = [...modules].filter((path) =>
    /^agents\/definition\/|^npm:(zod|jsonc-parser)@/.test(path)
  );
  assert.deepEqual(definitions, [], "loaded by learnings search alone");
});

Deno.test("the library entry never reaches the Agent SDK's package (Claude Code's binaries) through its module graph", async () => {
  for (const entry of ["agents/mod.ts", "agents/iterator/main.ts"]) {
    const all = await loaded(entry, { dynamic: true });
    const sdk = [...all].filter((path) => path.includes("@anthropic-ai/claude-agent-sdk"));
    assert.deepEqual(sdk, [], entry);
    // The backend is there: it imports the SDK at its first session.
    assert.ok(all.has("agents/backends/claude.ts"), entry);
  }
});

Deno.test("runs is a table with a header, the task, and totals; coloured only where asked (FORCE_COLOR, NO_COLOR)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "finishline-runs-" });
  try {
    const storePath = `${dir}/state.db`;
    const store = SqliteStore.open(storePath);
    try {
      for (
        const [id, argv, status] of [
          ["11111111-run", ["--task", "Fix the failing add test"], "completed"],
          ["22222222-run", ["--issue", "42"], "max_iterations"],
        ] as const
      ) {
        store.createRun({
          id,
          agent: "iterator",
          handler: argv[0] === "--task" ? "task" : "issue",
          argv: [...argv],
          cwd: dir,
          startedAt: "2026-11-28T10:00:00.000Z",
          baseline: null,
          branch: null,
          maxIterations: 10,
          cleanup: {},
        });
        store.setRunStatus(id, status, `${status} for a reason`);
      }
    } finally {
      store.close();
    }
    const runs = async (env: Record<string, string>) => {
      const output = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("agents/iterator/main.ts", ROOT).pathname,
          "runs",
          "--store",
          storePath,
        ],
        cwd: dir,
        env,
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      return new TextDecoder().decode(output.stdout);
    };
    const plain = await runs({ NO_COLOR: "1" });
    const lines = plain.trimEnd().split("\n");
    assert.match(lines[0], /^RUN +STARTED +OUTCOME +ITER +COST +TIME +TASK$/);
    assert.ok(
      lines.some((line) => /^\S{8} .* completed .* Fix the failing add test$/.test(line)),
      plain,
    );
    assert.ok(lines.some((line) => /^\S{8} .* max_iterations .* issue #42$/.test(line)), plain);
    assert.match(
      lines.at(-1)!,
      /^2 runs \(1 completed, 1 max_iterations\): 0 iterations, \$0\.0000, /,
    );
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(plain, /\x1b\[/, "NO_COLOR: no escape codes");
    const forced = await runs({ FORCE_COLOR: "1" });
    assert.ok(forced.includes("\x1b[32mcompleted"), "FORCE_COLOR: the outcome in green");
    // deno-lint-ignore no-control-regex
    assert.equal(forced.replace(/\x1b\[[0-9;]*m/g, ""), plain, "the same text under the colour");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
