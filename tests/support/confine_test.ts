/**
 * Nothing outside the agent folder is read: every file an agent definition
 * names (system prompt, prompt registry, registry entries, fallback folder,
 * handlers, checkers) is refused when it leads outside `.agent/<name>/`, by
 * an absolute path, `..`, a symlinked file or a symlinked folder, with one
 * line that names the field and never quotes the file.
 */

import assert from "node:assert/strict";
import path from "node:path";
import { confinePath } from "../../agents/support/confine.ts";
import { loadDefinition } from "../../agents/definition/load.ts";
import { UsageError } from "../../agents/support/errors.ts";
import {
  BUILTIN_PROMPTS_DIR,
  PromptResolver,
  type PromptResolverOptions,
} from "../../agents/prompts/resolver.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";
import { dirUrl, withTempDir, write } from "../completion/_helpers.ts";

/** What the file outside holds; it must never show up in a message. */
const MARKER = "MARKER-outside-7f3c";
const SECRET = `root:x:0:0:${MARKER}:/root:/bin/bash\n${MARKER} {uv-task}\n`;

/** A refused escape: its one line, exit code 2, never the marker. */
async function refusal(fn: () => Promise<unknown>): Promise<string> {
  let message = "";
  await assert.rejects(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.equal(error.exitCode, 2);
    message = error.message;
    return true;
  });
  assert.ok(!message.includes("\n"), `not one line: ${message}`);
  assert.ok(!message.includes(MARKER), `the file was quoted: ${message}`);
  return message;
}

/** The working directory of a test: `.agent/x/` and, beside it, `outside/initial_iterate.md`. */
interface Layout {
  cwd: string;
  agentDir: string;
  outside: string;
}

async function withLayout(fn: (layout: Layout) => Promise<void>): Promise<void> {
  await withTempDir(async (cwd) => {
    const agentDir = path.join(cwd, ".agent/x");
    await Deno.mkdir(agentDir, { recursive: true });
    const outside = path.join(cwd, "outside");
    await write(outside, "initial_iterate.md", SECRET);
    await fn({ cwd, agentDir, outside });
  });
}

function create(layout: Layout, options: Partial<PromptResolverOptions>): Promise<PromptResolver> {
  return PromptResolver.create({ agentDir: dirUrl(layout.agentDir), cwd: layout.cwd, ...options });
}

/** Writes the agent's registry with one entry for `initial_iterate`. */
async function registryEntry(layout: Layout, template: string): Promise<void> {
  await write(
    layout.agentDir,
    "prompts/registry.json",
    JSON.stringify({ prompts: { initial_iterate: template } }),
  );
}

interface Escape {
  /** The agent.json field that leads outside. */
  field: string;
  /** How it leads outside. */
  how: string;
  /** Arranges the escape; returns the resolver options that name it. */
  arrange: (layout: Layout) => Promise<Partial<PromptResolverOptions>>;
  /** The message, with `<cwd>` for the working directory. */
  message: string;
}

const ESCAPES: Escape[] = [
  {
    field: "behavior.systemPromptPath",
    how: "an absolute path",
    arrange: (l) => Promise.resolve({ systemPromptPath: `${l.outside}/initial_iterate.md` }),
    message:
      'Refusing "behavior.systemPromptPath" "<cwd>/outside/initial_iterate.md": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "behavior.systemPromptPath",
    how: "a file: URL",
    arrange: (l) => Promise.resolve({ systemPromptPath: `file://${l.outside}/initial_iterate.md` }),
    message:
      'Refusing "behavior.systemPromptPath" "file://<cwd>/outside/initial_iterate.md": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "behavior.systemPromptPath",
    how: "..",
    arrange: () =>
      Promise.resolve({ systemPromptPath: "prompts/../../../outside/initial_iterate.md" }),
    message:
      'Refusing "behavior.systemPromptPath" "prompts/../../../outside/initial_iterate.md": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "behavior.systemPromptPath",
    how: "a symlinked file",
    arrange: async (l) => {
      await Deno.symlink(`${l.outside}/initial_iterate.md`, `${l.agentDir}/system.md`);
      return { systemPromptPath: "system.md" };
    },
    message:
      'Refusing "behavior.systemPromptPath" ".agent/x/system.md": it resolves outside the agent folder (to "<cwd>/outside/initial_iterate.md")',
  },
  {
    field: "behavior.systemPromptPath",
    how: "a symlinked folder",
    arrange: async (l) => {
      await Deno.symlink(l.outside, `${l.agentDir}/prompts`);
      return { systemPromptPath: "prompts/initial_iterate.md" };
    },
    message:
      'Refusing "behavior.systemPromptPath" ".agent/x/prompts/initial_iterate.md": it resolves outside the agent folder (to "<cwd>/outside/initial_iterate.md")',
  },
  {
    field: "prompts.registry",
    how: "an absolute path",
    arrange: (l) => Promise.resolve({ registry: `${l.outside}/initial_iterate.md` }),
    message:
      'Refusing "prompts.registry" "<cwd>/outside/initial_iterate.md": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "prompts.registry",
    how: "..",
    arrange: () => Promise.resolve({ registry: "../../outside/initial_iterate.md" }),
    message:
      'Refusing "prompts.registry" "../../outside/initial_iterate.md": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "prompts.registry",
    how: "a symlinked file",
    arrange: async (l) => {
      await Deno.mkdir(`${l.agentDir}/prompts`);
      await Deno.symlink(`${l.outside}/initial_iterate.md`, `${l.agentDir}/prompts/registry.json`);
      return {};
    },
    message:
      'Refusing "prompts.registry" ".agent/x/prompts/registry.json": it resolves outside the agent folder (to "<cwd>/outside/initial_iterate.md")',
  },
  {
    field: "prompts.registry",
    how: "a symlinked folder",
    arrange: async (l) => {
      await Deno.symlink(l.outside, `${l.agentDir}/config`);
      return { registry: "config/initial_iterate.md" };
    },
    message:
      'Refusing "prompts.registry" ".agent/x/config/initial_iterate.md": it resolves outside the agent folder (to "<cwd>/outside/initial_iterate.md")',
  },
  {
    field: "prompts.registry",
    how: "an entry with an absolute path",
    arrange: async (l) => {
      await registryEntry(l, `${l.outside}/initial_iterate.md`);
      return {};
    },
    message:
      'Refusing "prompts.registry" entry "initial_iterate" "<cwd>/outside/initial_iterate.md": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "prompts.registry",
    how: "an entry with ..",
    arrange: async (l) => {
      await registryEntry(l, "../../../outside/initial_iterate.md");
      return {};
    },
    message:
      'Refusing "prompts.registry" entry "initial_iterate" "../../../outside/initial_iterate.md": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "prompts.registry",
    how: "an entry that is a symlinked file",
    arrange: async (l) => {
      await registryEntry(l, "start.md");
      await Deno.symlink(`${l.outside}/initial_iterate.md`, `${l.agentDir}/prompts/start.md`);
      return {};
    },
    message:
      'Refusing "prompts.registry" entry "initial_iterate" ".agent/x/prompts/start.md": it resolves outside the agent folder (to "<cwd>/outside/initial_iterate.md")',
  },
  {
    field: "prompts.registry",
    how: "an entry through a symlinked folder",
    arrange: async (l) => {
      await registryEntry(l, "../shared/initial_iterate.md");
      await Deno.symlink(l.outside, `${l.agentDir}/shared`);
      return {};
    },
    message:
      'Refusing "prompts.registry" entry "initial_iterate" ".agent/x/shared/initial_iterate.md": it resolves outside the agent folder (to "<cwd>/outside/initial_iterate.md")',
  },
  {
    field: "prompts.fallbackDir",
    how: "an absolute path",
    arrange: (l) => Promise.resolve({ fallbackDir: l.outside }),
    message:
      'Refusing "prompts.fallbackDir" "<cwd>/outside": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "prompts.fallbackDir",
    how: "..",
    arrange: () => Promise.resolve({ fallbackDir: "../../outside" }),
    message:
      'Refusing "prompts.fallbackDir" "../../outside": it must stay inside the agent folder ".agent/x/"',
  },
  {
    field: "prompts.fallbackDir",
    how: "a symlinked <key>.md in it",
    arrange: async (l) => {
      await Deno.mkdir(`${l.agentDir}/prompts`);
      await Deno.symlink(
        `${l.outside}/initial_iterate.md`,
        `${l.agentDir}/prompts/initial_iterate.md`,
      );
      return {};
    },
    message:
      'Refusing "prompts.fallbackDir" ".agent/x/prompts/initial_iterate.md": it resolves outside the agent folder (to "<cwd>/outside/initial_iterate.md")',
  },
  {
    field: "prompts.fallbackDir",
    how: "a symlinked folder",
    arrange: async (l) => {
      await Deno.symlink(l.outside, `${l.agentDir}/prompts`);
      return {};
    },
    message:
      'Refusing "prompts.fallbackDir" ".agent/x/prompts": it resolves outside the agent folder (to "<cwd>/outside")',
  },
];

Deno.test(`every file an agent names is refused when it leads outside the agent folder (${ESCAPES.length} escapes)`, async (t) => {
  for (const escape of ESCAPES) {
    await t.step(`${escape.field}: ${escape.how}`, async () => {
      await withLayout(async (layout) => {
        const options = await escape.arrange(layout);
        const message = await refusal(() => create(layout, options));
        const cwd = await Deno.realPath(layout.cwd);
        assert.equal(message, escape.message.replaceAll("<cwd>", cwd));
        assert.ok(message.includes(`"${escape.field}"`), message);
      });
    });
  }

  await t.step("behavior.systemPromptPath: refused even where it is not needed yet", async () => {
    // The resolver checks every path when it is created, before any key is asked for.
    await withLayout(async (layout) => {
      await refusal(() => create(layout, { systemPromptPath: "/etc/passwd" }));
    });
  });

  await t.step(
    "a fallback key that climbs out of the folder is refused when asked for",
    async () => {
      await withLayout(async (layout) => {
        await write(layout.agentDir, "prompts/kept.md", "inside");
        const resolver = await create(layout, {});
        const message = await refusal(() =>
          resolver.resolve("../../../outside/initial_iterate", {})
        );
        assert.match(
          message,
          /^Refusing "prompts\.fallbackDir" "\.\.\/\.\.\/\.\.\/outside\/initial_iterate\.md": it must stay inside the agent folder/,
        );
      });
    },
  );

  await t.step("a custom handler through a symlinked folder", async () => {
    await withLayout(async (layout) => {
      await write(layout.outside, "handler.ts", `export default () => "${MARKER}";\n`);
      await Deno.symlink(layout.outside, `${layout.agentDir}/completion`);
      const message = await refusal(() =>
        confinePath(dirUrl(layout.agentDir), "completion/handler.ts", {
          field: "behavior.completionConfig.handlerPath",
          cwd: layout.cwd,
        })
      );
      assert.match(
        message,
        /^Refusing "behavior\.completionConfig\.handlerPath" "\.agent\/x\/completion\/handler\.ts": it resolves outside the agent folder/,
      );
    });
  });
});

Deno.test("a bad file an agent names is one line with exit 2, never its content", async (t) => {
  await t.step("a symlink loop as the system prompt", async () => {
    await withLayout(async (layout) => {
      await Deno.symlink(`${layout.agentDir}/b.md`, `${layout.agentDir}/a.md`);
      await Deno.symlink(`${layout.agentDir}/a.md`, `${layout.agentDir}/b.md`);
      assert.equal(
        await refusal(() => create(layout, { systemPromptPath: "a.md" })),
        'Cannot load "behavior.systemPromptPath" ".agent/x/a.md": it is a loop of symbolic links',
      );
    });
  });

  await t.step(
    "a symlink loop as the registry, even though a missing registry is fine",
    async () => {
      await withLayout(async (layout) => {
        await Deno.symlink(`${layout.agentDir}/loop.json`, `${layout.agentDir}/loop.json`);
        assert.equal(
          await refusal(() => create(layout, { registry: "loop.json" })),
          'Cannot load "prompts.registry" ".agent/x/loop.json": it is a loop of symbolic links',
        );
      });
    },
  );

  await t.step("a symlink loop as a registry entry", async () => {
    await withLayout(async (layout) => {
      await registryEntry(layout, "loop.md");
      await Deno.symlink(
        `${layout.agentDir}/prompts/loop.md`,
        `${layout.agentDir}/prompts/loop.md`,
      );
      assert.equal(
        await refusal(() => create(layout, {})),
        'Cannot load "prompts.registry" entry "initial_iterate" ".agent/x/prompts/loop.md": it is a loop of symbolic links',
      );
    });
  });

  await t.step("a missing system prompt", async () => {
    await withLayout(async (layout) => {
      assert.equal(
        await refusal(() => create(layout, { systemPromptPath: "prompts/system.md" })),
        'Cannot load "behavior.systemPromptPath" ".agent/x/prompts/system.md": file not found',
      );
    });
  });

  await t.step("a missing registry entry", async () => {
    await withLayout(async (layout) => {
      await registryEntry(layout, "gone.md");
      assert.equal(
        await refusal(() => create(layout, {})),
        'Cannot load "prompts.registry" entry "initial_iterate" ".agent/x/prompts/gone.md": file not found',
      );
    });
  });

  await t.step("a folder as the system prompt", async () => {
    await withLayout(async (layout) => {
      await Deno.mkdir(`${layout.agentDir}/prompts`);
      assert.equal(
        await refusal(() => create(layout, { systemPromptPath: "prompts" })),
        'Cannot load "behavior.systemPromptPath" ".agent/x/prompts": expected a file, found a folder',
      );
    });
  });

  await t.step("a folder as the registry", async () => {
    await withLayout(async (layout) => {
      await Deno.mkdir(`${layout.agentDir}/prompts/registry.json`, { recursive: true });
      assert.equal(
        await refusal(() => create(layout, {})),
        'Cannot load "prompts.registry" ".agent/x/prompts/registry.json": expected a file, found a folder',
      );
    });
  });

  await t.step("a file as the fallback folder", async () => {
    await withLayout(async (layout) => {
      await write(layout.agentDir, "notes.md", "a file");
      assert.equal(
        await refusal(() => create(layout, { fallbackDir: "notes.md" })),
        'Cannot load "prompts.fallbackDir" ".agent/x/notes.md": expected a folder, found a file',
      );
    });
  });

  await t.step("a registry that is not JSON names the line and column, not the text", async () => {
    await withLayout(async (layout) => {
      await write(layout.agentDir, "prompts/registry.json", `{\n  "prompts": {\n    ${SECRET}`);
      assert.equal(
        await refusal(() => create(layout, {})),
        'Cannot load prompt registry ".agent/x/prompts/registry.json": not valid JSON at line 3, column 5: unexpected character',
      );
    });
  });

  await t.step(
    "a registry that is text, like /etc/passwd, says only that it is not JSON",
    async () => {
      await withLayout(async (layout) => {
        await write(layout.agentDir, "prompts/registry.json", SECRET);
        const message = await refusal(() => create(layout, {}));
        assert.match(
          message,
          /^Cannot load prompt registry "\.agent\/x\/prompts\/registry\.json": not valid JSON at line 1, column 1: /,
        );
      });
    },
  );
});

Deno.test("files inside the agent folder still resolve, symlinks that stay inside included", async (t) => {
  await t.step("a missing registry or fallback folder means every key falls back", async () => {
    await withLayout(async (layout) => {
      for (const options of [{}, { registry: "config/none.json", fallbackDir: "none" }]) {
        const resolver = await create(layout, options);
        assert.equal(await resolver.has("initial_iterate"), true);
        const system = await resolver.resolve("system", {
          agent_name: "x",
          completion_criteria: "c",
          complete_task_instructions: "",
        });
        assert.match(system, /^You are "x",/);
      }
    });
  });

  await t.step("the system prompt, the registry, its entries and the fallback folder", async () => {
    await withLayout(async (layout) => {
      const dir = layout.agentDir;
      await write(dir, "real/system.md", "System for {uv-agent_name}");
      await Deno.symlink(`${dir}/real/system.md`, `${dir}/system-link.md`);
      await write(dir, "config/registry.json", JSON.stringify({ prompts: { kickoff: "k.md" } }));
      await Deno.mkdir(`${dir}/prompts`);
      await Deno.symlink(`${dir}/config/registry.json`, `${dir}/prompts/registry.json`);
      await write(dir, "templates/kickoff.md", "Kick off {uv-task}");
      // The entry is relative to the registry as named (prompts/), not to its target.
      await Deno.symlink(`${dir}/templates/kickoff.md`, `${dir}/prompts/k.md`);
      await write(dir, "more/continuation_iterate.md", "Go on with {uv-task}");
      await Deno.symlink(`${dir}/more`, `${dir}/fallback`);
      const resolver = await create(layout, {
        systemPromptPath: "system-link.md",
        fallbackDir: "fallback",
      });
      assert.equal(await resolver.resolve("system", { agent_name: "x" }), "System for x");
      assert.equal(await resolver.resolve("kickoff", { task: "t" }), "Kick off t");
      assert.equal(await resolver.resolve("continuation_iterate", { task: "t" }), "Go on with t");
    });
  });

  await t.step("an agent folder that is itself a symlink", async () => {
    await withLayout(async (layout) => {
      await write(layout.cwd, "elsewhere/y/prompts/initial_iterate.md", "Mine: {uv-task}");
      await Deno.symlink(`${layout.cwd}/elsewhere/y`, `${layout.cwd}/.agent/y`);
      const resolver = await PromptResolver.create({
        agentDir: dirUrl(`${layout.cwd}/.agent/y`),
        cwd: layout.cwd,
      });
      assert.equal(await resolver.resolve("initial_iterate", { task: "t" }), "Mine: t");
    });
  });

  await t.step("the built-in agent resolves its packaged prompts", async () => {
    await withTempDir(async (cwd) => {
      const loaded = await loadDefinition("iterator", { cwd });
      assert.equal(loaded.builtin, true);
      const resolver = await PromptResolver.create({
        agentDir: loaded.agentDir,
        registry: loaded.definition.prompts.registry,
        fallbackDir: loaded.definition.prompts.fallbackDir,
        builtinAgent: true,
        cwd,
      });
      const packaged = await Deno.readTextFile(new URL("system.md", BUILTIN_PROMPTS_DIR));
      const system = await resolver.resolve("system", {
        agent_name: "iterator",
        completion_criteria: "c",
        complete_task_instructions: "",
      });
      assert.ok(packaged.includes("{uv-agent_name}"));
      assert.match(system, /^You are "iterator",/);
    });
  });

  await t.step("only the built-in agent may name the packaged prompts folder", async () => {
    await withTempDir(async (root) => {
      await write(root, "pkg/.agent/own/agent.json", "{}");
      await write(root, "pkg/prompts/registry.json", JSON.stringify({ prompts: {} }));
      await write(root, "pkg/prompts/system.md", "Packaged system");
      const options = {
        agentDir: dirUrl(`${root}/pkg/.agent/own`),
        builtinDir: dirUrl(`${root}/pkg/prompts`),
        systemPromptPath: "../../prompts/system.md",
        cwd: root,
      };
      const builtin = await PromptResolver.create({ ...options, builtinAgent: true });
      assert.equal(await builtin.resolve("system", {}), "Packaged system");
      assert.equal(
        await refusal(() => PromptResolver.create(options)),
        'Refusing "behavior.systemPromptPath" "../../prompts/system.md": it must stay inside the agent folder "pkg/.agent/own/"',
      );
    });
  });

  await t.step("a remote agent folder is checked by its URL", async () => {
    const agentDir = new URL("https://example.com/pkg/.agent/x/");
    const inside = await confinePath(agentDir, "prompts/system.md", {
      field: "behavior.systemPromptPath",
      cwd: "/work",
    });
    assert.equal(inside.url.href, "https://example.com/pkg/.agent/x/prompts/system.md");
    for (
      const escape of ["../y/system.md", "/pkg/system.md", "//evil.example/x.md", "%2e%2e/y.md"]
    ) {
      assert.match(
        await refusal(() =>
          confinePath(agentDir, escape, { field: "behavior.systemPromptPath", cwd: "/work" })
        ),
        /it must stay inside the agent folder "https:\/\/example\.com\/pkg\/\.agent\/x\/"$/,
      );
    }
  });
});

/** The agent.json fields of an iterate agent `x` with some paths of its own. */
function agentJson(extra: { behavior?: Record<string, unknown>; [key: string]: unknown }): string {
  return JSON.stringify({
    ...extra,
    name: "x",
    behavior: { completionConfig: { maxIterations: 1 }, ...extra.behavior },
  });
}

interface CliEscape {
  name: string;
  /** Arranges `.agent/x/` in the repository; `outside` is a folder outside it. */
  arrange: (repo: string, outside: string) => Promise<void>;
  message: RegExp;
}

const CLI_ESCAPES: CliEscape[] = [
  {
    name: "an absolute behavior.systemPromptPath",
    arrange: (repo, outside) =>
      write(
        repo,
        ".agent/x/agent.json",
        agentJson({
          behavior: { systemPromptPath: `${outside}/initial_iterate.md` },
        }),
      ).then(() => {}),
    message:
      /^finishline: Refusing "behavior\.systemPromptPath" ".*\/initial_iterate\.md": it must stay inside the agent folder "\.agent\/x\/"$/,
  },
  {
    name: "a prompts.registry that is a symlink to a file outside",
    arrange: async (repo, outside) => {
      await write(repo, ".agent/x/agent.json", agentJson({ prompts: { registry: "r.json" } }));
      await Deno.symlink(`${outside}/initial_iterate.md`, `${repo}/.agent/x/r.json`);
    },
    message:
      /^finishline: Refusing "prompts\.registry" "\.agent\/x\/r\.json": it resolves outside the agent folder/,
  },
  {
    name: "a registry entry with ..",
    arrange: async (repo) => {
      await write(repo, ".agent/x/agent.json", agentJson({}));
      await write(repo, "secret.md", SECRET);
      await write(
        repo,
        ".agent/x/prompts/registry.json",
        JSON.stringify({ prompts: { initial_iterate: "../../../secret.md" } }),
      );
    },
    message:
      /^finishline: Refusing "prompts\.registry" entry "initial_iterate" "\.\.\/\.\.\/\.\.\/secret\.md": it must stay inside the agent folder "\.agent\/x\/"$/,
  },
  {
    name: "a prompts.fallbackDir that is a symlinked folder",
    arrange: async (repo, outside) => {
      await write(repo, ".agent/x/agent.json", agentJson({}));
      await Deno.symlink(outside, `${repo}/.agent/x/prompts`);
    },
    message:
      /^finishline: Refusing "prompts\.fallbackDir" "\.agent\/x\/prompts": it resolves outside the agent folder/,
  },
  {
    name: "a custom handler through a symlinked folder",
    arrange: async (repo, outside) => {
      await write(
        repo,
        ".agent/x/agent.json",
        agentJson({
          behavior: {
            completionType: "custom",
            completionConfig: { handlerPath: "completion/handler.ts", maxIterations: 1 },
          },
        }),
      );
      await write(outside, "handler.ts", `throw new Error("${MARKER}");\n`);
      await Deno.symlink(outside, `${repo}/.agent/x/completion`);
    },
    message:
      /^finishline: Refusing "behavior\.completionConfig\.handlerPath" "\.agent\/x\/completion\/handler\.ts": it resolves outside the agent folder/,
  },
  {
    name: "an absolute custom checker",
    arrange: async (repo, outside) => {
      await write(outside, "check.ts", `throw new Error("${MARKER}");\n`);
      await write(
        repo,
        ".agent/x/agent.json",
        agentJson({
          verify: { checks: [{ type: "custom", path: `${outside}/check.ts` }] },
        }),
      );
    },
    message:
      /^finishline: Refusing "verify\.checks\[0\]\.path" ".*\/check\.ts": it must stay inside the agent folder "\.agent\/x\/"$/,
  },
];

Deno.test("the CLI refuses an agent that leads outside its folder, even with --dry-run", async (t) => {
  for (const escape of CLI_ESCAPES) {
    await t.step(escape.name, async () => {
      await using repo = await tempRepo();
      await using outside = await tempDir("finishline-outside-");
      await write(outside.path, "initial_iterate.md", SECRET);
      await escape.arrange(repo.path, outside.path);
      await git(repo.path, "add", "-A");
      await git(repo.path, "commit", "-qm", "agent");
      const run = await runCli(["--agent", "x", "--task", "t", "--dry-run"], { cwd: repo.path });
      assert.equal(run.code, 2, run.stderr);
      const lines = run.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `one line: ${run.stderr}`);
      assert.match(lines[0], escape.message);
      assert.ok(!run.stdout.includes(MARKER) && !run.stderr.includes(MARKER), "the file was read");
      await assert.rejects(Deno.stat(`${repo.path}/.agent/.finishline`), "nothing written");
      assert.equal(await git(repo.path, "status", "--porcelain", "--ignored"), "");
    });
  }

  await t.step("a symlink that stays inside the agent folder works", async () => {
    await using repo = await tempRepo();
    await write(
      repo.path,
      ".agent/x/agent.json",
      agentJson({
        behavior: { systemPromptPath: "system.md" },
      }),
    );
    await write(repo.path, ".agent/x/real/system.md", "INSIDE-SYSTEM for {uv-agent_name}");
    await Deno.symlink("real/system.md", `${repo.path}/.agent/x/system.md`);
    await git(repo.path, "add", "-A");
    await git(repo.path, "commit", "-qm", "agent");
    const run = await runCli(["--agent", "x", "--task", "t", "--dry-run"], { cwd: repo.path });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /INSIDE-SYSTEM for x/);
  });
});
