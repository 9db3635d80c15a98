import { TaskCompletionHandler } from "../../agents/completion/task.ts";
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentDefinition } from "../../agents/definition/definition_types.ts";
import { IssueCompletionHandler } from "../../agents/completion/issue.ts";
import { IterateCompletionHandler } from "../../agents/completion/iterate.ts";
import { ManualCompletionHandler } from "../../agents/completion/manual.ts";
import { ProjectCompletionHandler, type ProjectPhase } from "../../agents/completion/project.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { parseDefinition } from "../../agents/definition/parse.ts";
import { UsageError } from "../../agents/support/errors.ts";
import { type GhComment, type GhProjectItem, GitHubCli } from "../../agents/github/port.ts";
import {
  argsToVariables,
  BUILTIN_PROMPTS_DIR,
  fillTemplate,
  PromptResolver,
  type PromptVariables,
  stripFrontMatter,
  toVariableName,
} from "../../agents/prompts/resolver.ts";
import { emptySummary } from "../../agents/record/iteration.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-prompts-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function write(
  root: string,
  relative: string,
  text: string,
): Promise<void> {
  const file = path.join(root, relative);
  await Deno.mkdir(path.dirname(file), { recursive: true });
  await Deno.writeTextFile(file, text);
}

function dirUrl(dir: string): URL {
  return pathToFileURL(`${dir}/`);
}

/** Asserts that `text` says `phrase`, however `deno fmt` wrapped the template. */
function assertSays(text: string, phrase: string): void {
  const flat = (value: string) => value.replace(/\s+/g, " ");
  assert.ok(
    flat(text).includes(flat(phrase)),
    `expected the text to say ${JSON.stringify(phrase)}:\n${text}`,
  );
}

/** Asserts a UsageError (exit code 2, one line) and returns its message. */
async function usageErrorOf(fn: () => Promise<unknown>): Promise<string> {
  let message = "";
  await assert.rejects(fn, (error: unknown) => {
    assert.ok(
      error instanceof UsageError,
      `expected a UsageError, got ${error}`,
    );
    assert.equal(error.exitCode, 2);
    assert.ok(!error.message.includes("\n"), `not one line: ${error.message}`);
    message = error.message;
    return true;
  });
  return message;
}

const ITERATE_VARIABLES: PromptVariables = {
  task: "Tidy the README",
  max_iterations: 4,
  iteration: 2,
  remaining: 2,
  previous_summary: "### Iteration 1",
  verification_feedback: "(none)",
  learnings: "(no learnings from earlier runs)",
};

Deno.test("prompt resolver", async (t) => {
  await t.step(
    "falls back to the built-in registry when the agent has none",
    async () => {
      await withTempDir(async (dir) => {
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        assert.equal(await resolver.has("initial_iterate"), true);
        assert.equal(await resolver.has("no_such_key"), false);
        const text = await resolver.resolve(
          "initial_iterate",
          ITERATE_VARIABLES,
        );
        const builtin = stripFrontMatter(
          await Deno.readTextFile(
            new URL("initial_iterate.md", BUILTIN_PROMPTS_DIR),
          ),
        );
        assert.equal(
          text,
          fillTemplate(builtin, ITERATE_VARIABLES).text.trim(),
        );
        assert.match(text, /^# Task\n\nTidy the README\n/);
        assertSays(text, "This run has 4 iterations");
      });
    },
  );

  await t.step(
    "uses the agent registry before the built-in one, relative to the registry file",
    async () => {
      await withTempDir(async (dir) => {
        await write(
          dir,
          "config/prompts.json",
          JSON.stringify({
            $schema: "ignored",
            version: "1",
            prompts: { initial_iterate: "../templates/start.md" },
          }),
        );
        await write(dir, "templates/start.md", "Agent start: {uv-task}\n");
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          registry: "config/prompts.json",
          cwd: dir,
        });
        assert.equal(
          await resolver.resolve("initial_iterate", { task: "Ship it" }),
          "Agent start: Ship it",
        );
        // Keys the agent registry leaves out still come from the built-ins.
        assertSays(
          await resolver.resolve("continuation_iterate", ITERATE_VARIABLES),
          "This is iteration 2 of 4 (2 left after this one)",
        );
      });
    },
  );

  await t.step(
    "accepts a flat registry without the prompts wrapper",
    async () => {
      await withTempDir(async (dir) => {
        await write(
          dir,
          "prompts/registry.json",
          JSON.stringify({ version: "1", kickoff: "kickoff.md" }),
        );
        await write(dir, "prompts/kickoff.md", "Kick off {uv-topic}");
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        assert.equal(
          await resolver.resolve("kickoff", { topic: "pricing" }),
          "Kick off pricing",
        );
        assert.equal(await resolver.has("version"), false);
      });
    },
  );

  await t.step(
    "uses <agentDir>/<fallbackDir>/<key>.md before the built-in template",
    async () => {
      await withTempDir(async (dir) => {
        await write(
          dir,
          "my-prompts/continuation_iterate.md",
          "Go on with {uv-task} ({uv-iteration})",
        );
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          fallbackDir: "my-prompts",
          cwd: dir,
        });
        assert.equal(
          await resolver.resolve("continuation_iterate", ITERATE_VARIABLES),
          "Go on with Tidy the README (2)",
        );
        assert.equal(await resolver.has("continuation_iterate"), true);
      });
    },
  );

  await t.step(
    "uses prompts/<key>.md by default and prefers a registry entry over it",
    async () => {
      await withTempDir(async (dir) => {
        await write(dir, "prompts/initial_manual.md", "fallback {uv-task}");
        await write(dir, "prompts/initial_iterate.md", "fallback {uv-task}");
        await write(
          dir,
          "prompts/registry.json",
          JSON.stringify({ prompts: { initial_iterate: "chosen.md" } }),
        );
        await write(dir, "prompts/chosen.md", "registry {uv-task}");
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        assert.equal(
          await resolver.resolve("initial_manual", { task: "t" }),
          "fallback t",
        );
        assert.equal(
          await resolver.resolve("initial_iterate", { task: "t" }),
          "registry t",
        );
      });
    },
  );

  await t.step(
    "refuses a fallbackDir that leaves the agent folder",
    async () => {
      await withTempDir(async (dir) => {
        await write(dir, "shared/initial_iterate.md", "outside {uv-task}");
        const agentDir = path.join(dir, "agent");
        await Deno.mkdir(agentDir);
        const message = await usageErrorOf(() =>
          PromptResolver.create({
            agentDir: dirUrl(agentDir),
            fallbackDir: "../shared",
            cwd: dir,
          })
        );
        assert.equal(
          message,
          'Refusing "prompts.fallbackDir" "../shared": it must stay inside the agent folder "agent/"',
        );
      });
    },
  );

  await t.step("systemPromptPath replaces the system key", async () => {
    await withTempDir(async (dir) => {
      await write(
        dir,
        "prompts/registry.json",
        JSON.stringify({ prompts: { system: "registry-system.md" } }),
      );
      await write(dir, "prompts/registry-system.md", "from the registry");
      await write(dir, "prompts/system.md", "from the fallback folder");
      await write(dir, "system/custom.md", "You are {uv-agent_name}.");
      const withPath = await PromptResolver.create({
        agentDir: dirUrl(dir),
        systemPromptPath: "system/custom.md",
        cwd: dir,
      });
      assert.equal(
        await withPath.resolve("system", { agent_name: "reviewer" }),
        "You are reviewer.",
      );
      const withoutPath = await PromptResolver.create({
        agentDir: dirUrl(dir),
        cwd: dir,
      });
      assert.equal(
        await withoutPath.resolve("system", {}),
        "from the registry",
      );
    });
  });

  await t.step(
    "without any override the system key is the built-in system prompt",
    async () => {
      await withTempDir(async (dir) => {
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        const text = await resolver.resolve("system", {
          agent_name: "iterator",
          completion_criteria: "Run 3 iterations.",
          complete_task_instructions: "Call complete_task before you stop.",
        });
        assert.ok(text.startsWith('You are "iterator",'), text);
        assertSays(text, '"iterator", an autonomous coding agent');
        assert.match(
          text,
          /## When the work is finished\n\nRun 3 iterations\.\n\nCall complete_task before you stop\.$/,
        );
        // Without complete_task (requireCompleteTask: false) the criteria end it.
        const without = await resolver.resolve("system", {
          agent_name: "iterator",
          completion_criteria: "Run 3 iterations.",
          complete_task_instructions: "",
        });
        assert.match(without, /\n\nRun 3 iterations\.$/);
      });
    },
  );

  await t.step(
    "a missing variable is an error naming the variables and the template file",
    async () => {
      await withTempDir(async (dir) => {
        await write(
          dir,
          "prompts/greet.md",
          "Hi {uv-name}, see {uv-link} and {uv-name} again; {uv-ok}",
        );
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        const message = await usageErrorOf(() =>
          resolver.resolve("greet", { ok: "fine", "uv-link": undefined })
        );
        assert.equal(
          message,
          'Cannot fill prompt template "prompts/greet.md" (key "greet"): no value for "uv-name", "uv-link"',
        );
      });
    },
  );

  await t.step(
    "a missing variable in a built-in template names the built-in file",
    async () => {
      await withTempDir(async (dir) => {
        const resolver = await PromptResolver.create({
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        const message = await usageErrorOf(() =>
          resolver.resolve("initial_iterate", { task: "t" })
        );
        assert.match(
          message,
          /^Cannot fill prompt template ".*prompts\/initial_iterate\.md" \(key "initial_iterate"\): no value for "uv-max_iterations", "uv-learnings"$/,
        );
      });
    },
  );

  await t.step(
    "an unknown key is an error naming the key and the registries",
    async () => {
      await withTempDir(async (dir) => {
        await write(dir, "config/registry.json", JSON.stringify({}));
        const withRegistry = await PromptResolver.create({
          agentDir: dirUrl(dir),
          registry: "config/registry.json",
          cwd: dir,
        });
        assert.equal(
          await usageErrorOf(() => withRegistry.resolve("kickof", {})),
          'Unknown prompt key "kickof": not in "config/registry.json" or the built-in registry "prompts/registry.json"',
        );
        const withoutRegistry = await PromptResolver.create({
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        assert.equal(
          await usageErrorOf(() => withoutRegistry.resolve("kickof", {})),
          'Unknown prompt key "kickof": not in the built-in registry "prompts/registry.json"',
        );
      });
    },
  );

  await t.step(
    "a registry entry whose file is missing is an error naming the entry and the file",
    async () => {
      await withTempDir(async (dir) => {
        await write(
          dir,
          "prompts/registry.json",
          JSON.stringify({ prompts: { kickoff: "gone.md" } }),
        );
        assert.equal(
          await usageErrorOf(() => PromptResolver.create({ agentDir: dirUrl(dir), cwd: dir })),
          'Cannot load "prompts.registry" entry "kickoff" "prompts/gone.md": file not found',
        );
      });
    },
  );

  await t.step("values are inserted literally, never expanded", async () => {
    await withTempDir(async (dir) => {
      await write(dir, "prompts/echo.md", "A={uv-a} B={uv-b} C={uv-c}");
      const resolver = await PromptResolver.create({
        agentDir: dirUrl(dir),
        cwd: dir,
      });
      const text = await resolver.resolve("echo", {
        a: "{uv-b} {uv-undefined_name}",
        b: "$& $1 $$ $` $' $<x>",
        c: "{uv-c}",
      });
      assert.equal(
        text,
        "A={uv-b} {uv-undefined_name} B=$& $1 $$ $` $' $<x> C={uv-c}",
      );
    });
  });
});

Deno.test("fillTemplate fills placeholders in one pass", async (t) => {
  await t.step("accepts keys with and without the uv- prefix", () => {
    const { text, missing } = fillTemplate(
      "{uv-a}/{uv-b}/{uv-c}/{uv-d}",
      { a: 1, "uv-b": true, c: "x", "uv-d": 0 },
    );
    assert.equal(text, "1/true/x/0");
    assert.deepEqual(missing, []);
  });

  await t.step("reports each missing name once and keeps it in place", () => {
    const { text, missing } = fillTemplate("{uv-x} {uv-y} {uv-x}", {
      y: undefined,
    });
    assert.equal(text, "{uv-x} {uv-y} {uv-x}");
    assert.deepEqual(missing, ["x", "y"]);
  });

  await t.step("leaves text that is not a placeholder alone", () => {
    const template = "{uv-} {uv-a b} {task} {{uv-a}} uv-a";
    assert.equal(
      fillTemplate(template, { a: "A" }).text,
      "{uv-} {uv-a b} {task} {A} uv-a",
    );
  });
});

Deno.test("stripFrontMatter removes YAML front matter", async (t) => {
  const cases: Array<[string, string, string]> = [
    ["front matter", "---\ntitle: x\nlist:\n  - a\n---\nHello", "Hello"],
    ["CRLF line endings", "---\r\ntitle: x\r\n---\r\nHello", "Hello"],
    ["a byte order mark", "\uFEFF---\ntitle: x\n---\nHello", "Hello"],
    ["empty front matter", "---\n---\nHello", "Hello"],
    ["front matter and nothing else", "---\ntitle: x\n---", ""],
    ["no front matter", "Hello\n---\nWorld", "Hello\n---\nWorld"],
    ["an unclosed fence", "---\nHello\nWorld", "---\nHello\nWorld"],
    [
      "a second fenced block after the front matter",
      "---\na: 1\n---\nBody\n---\nMore",
      "Body\n---\nMore",
    ],
  ];
  for (const [name, input, expected] of cases) {
    await t.step(name, () => assert.equal(stripFrontMatter(input), expected));
  }

  await t.step("through the resolver", async () => {
    await withTempDir(async (dir) => {
      await write(
        dir,
        "prompts/doc.md",
        "---\ndescription: {uv-not_a_variable}\n---\n\nBody {uv-a}\n",
      );
      const resolver = await PromptResolver.create({
        agentDir: dirUrl(dir),
        cwd: dir,
      });
      assert.equal(await resolver.resolve("doc", { a: "1" }), "Body 1");
    });
  });
});

Deno.test("a malformed prompt registry is a one-line error naming it", async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "a JSON syntax error",
      '{\n"kickoff": x\n}',
      /^Cannot load prompt registry "prompts\/registry\.json": not valid JSON at line 2, column 12: unexpected character$/,
    ],
    [
      "a truncated file",
      '{ "prompts": ',
      /^Cannot load prompt registry "prompts\/registry\.json": not valid JSON at line 1, column 14: unexpected end of file, expected a value$/,
    ],
    [
      "an array",
      '["kickoff.md"]',
      /^Cannot load prompt registry "prompts\/registry\.json": expected an object mapping prompt keys to template paths$/,
    ],
    [
      "an entry that is not a path",
      '{ "prompts": { "kickoff": 3 } }',
      /^Cannot load prompt registry "prompts\/registry\.json": "kickoff": expected a template path \(string\)$/,
    ],
    [
      "an empty path",
      '{ "prompts": { "kickoff": "" } }',
      /"kickoff": expected a template path \(string\)$/,
    ],
  ];
  for (const [name, text, pattern] of cases) {
    await t.step(name, async () => {
      await withTempDir(async (dir) => {
        await write(dir, "prompts/registry.json", text);
        const message = await usageErrorOf(() =>
          PromptResolver.create({ agentDir: dirUrl(dir), cwd: dir })
        );
        assert.match(message, pattern);
      });
    });
  }

  await t.step("a missing built-in registry", async () => {
    await withTempDir(async (dir) => {
      const message = await usageErrorOf(() =>
        PromptResolver.create({
          agentDir: dirUrl(dir),
          builtinDir: dirUrl(path.join(dir, "builtin")),
          cwd: dir,
        })
      );
      assert.equal(
        message,
        'Cannot read prompt registry "builtin/registry.json": file not found',
      );
    });
  });
});

Deno.test("toVariableName maps flag and parameter names to snake case", async (t) => {
  const cases: Array<[string, string]> = [
    ["--iterate-max", "iterate_max"],
    ["-m", "m"],
    ["iterate-max", "iterate_max"],
    ["iterateMax", "iterate_max"],
    ["targetDecisions", "target_decisions"],
    ["maxBudgetUSD", "max_budget_usd"],
    ["issue2Number", "issue2_number"],
    ["already_snake", "already_snake"],
    ["task", "task"],
  ];
  for (const [input, expected] of cases) {
    await t.step(`${input} -> ${expected}`, () => {
      assert.equal(toVariableName(input), expected);
    });
  }
});

Deno.test("argsToVariables turns run arguments into uv- variables", async (t) => {
  await t.step(
    "each argument under its own name and in snake case; kebab names in snake case only",
    () => {
      assert.deepEqual(
        argsToVariables({
          "iterate-max": 3,
          targetDecisions: 2,
          topic: "pricing",
          dryRun: false,
        }),
        {
          "uv-iterate_max": "3",
          "uv-target_decisions": "2",
          "uv-targetDecisions": "2",
          "uv-topic": "pricing",
          "uv-dry_run": "false",
          "uv-dryRun": "false",
        },
      );
    },
  );

  await t.step("an argument named in snake case keeps its own value", () => {
    assert.deepEqual(argsToVariables({ target_decisions: 5, targetDecisions: 2 }), {
      "uv-target_decisions": "5",
      "uv-targetDecisions": "2",
    });
  });

  await t.step("arrays are joined with a comma and a space", () => {
    assert.deepEqual(argsToVariables({ labels: ["bug", "ui", 3] }), {
      "uv-labels": "bug, ui, 3",
    });
    assert.deepEqual(argsToVariables({ labels: [] }), { "uv-labels": "" });
  });

  await t.step("objects, functions, null and undefined are left out", () => {
    assert.deepEqual(
      argsToVariables({
        config: { a: 1 },
        callback: () => 1,
        nothing: null,
        unset: undefined,
        kept: 0,
      }),
      { "uv-kept": "0" },
    );
  });

  await t.step("the result fills a template, in either spelling", () => {
    const vars = argsToVariables({ targetDecisions: 4, topic: "{uv-x}" });
    assert.deepEqual(
      fillTemplate("{uv-topic}: {uv-target_decisions} = {uv-targetDecisions}", vars),
      { text: "{uv-x}: 4 = 4", missing: [] },
    );
  });
});

/**
 * The gh port with its run-time reads answered in memory, so the issue and
 * project handlers build their prompts without a process. Any other call
 * goes to a gh that does not exist and fails at once.
 */
class InMemoryGitHub extends GitHubCli {
  #items: GhProjectItem[];
  #comments: GhComment[];

  constructor(data: { items?: GhProjectItem[]; comments?: GhComment[] } = {}) {
    super({ cwd: Deno.cwd(), gh: "/nonexistent/gh", attempts: 1 });
    this.#items = data.items ?? [];
    this.#comments = data.comments ?? [];
  }

  override issueComments(_number: number): Promise<GhComment[] | undefined> {
    return Promise.resolve(this.#comments);
  }

  override projectItems(_number: number, _owner: string): Promise<GhProjectItem[] | undefined> {
    return Promise.resolve(this.#items);
  }
}

function demoDefinition(): AgentDefinition {
  return parseDefinition(
    JSON.stringify({
      name: "demo",
      behavior: { completionConfig: { maxIterations: 3 } },
    }),
    { displayPath: ".agent/demo/agent.json" },
  );
}

function item(id: string, status: string): GhProjectItem {
  return { id, title: `Write page ${id}`, status, labels: [], type: "DraftIssue" };
}

/** Board items that put a project handler in each phase it reaches from the board. */
const BOARDS: Record<Exclude<ProjectPhase, "complete">, GhProjectItem[]> = {
  preparation: [item("a", "Todo"), item("b", "Todo")],
  processing: [item("a", "Done"), item("b", "In Progress")],
  review: [item("a", "Done"), item("b", "Done")],
};

Deno.test("every built-in template resolves with the variables the handlers provide", async (t) => {
  const registry = JSON.parse(
    await Deno.readTextFile(new URL("registry.json", BUILTIN_PROMPTS_DIR)),
  ) as { prompts: Record<string, string> };
  const keys = Object.keys(registry.prompts);
  const resolver = await PromptResolver.create({
    agentDir: new URL("file:///nonexistent/finishline-agent/"),
  });
  const definition = demoDefinition();
  const args = { task: "Fix the flaky test", issue: 12, project: 3 };
  const context = { definition, args, resolver, maxIterations: 3 };
  const earlier: IterationSummary[] = [{
    ...emptySummary(1),
    assistantResponses: ["Found the cause."],
    verification: {
      passed: false,
      checker: "command",
      feedback: "deno task test exited with code 1",
      trigger: "handler",
    },
  }];
  const feedback = "command: deno task test exited with code 1";

  const issue = {
    number: 12,
    title: "Flaky date test",
    body: "It fails at midnight.",
    state: "OPEN" as const,
    labels: ["bug"],
    url: "https://github.com/octo/demo/issues/12",
  };
  const comment: GhComment = {
    id: "IC_1",
    author: "maintainer",
    body: "Use UTC in the fixture.",
    createdAt: "2025-01-02T03:04:05Z",
  };
  const project = {
    number: 3,
    title: "Docs site",
    url: "https://github.com/users/octo/projects/3",
    id: "PVT_kwHOA",
    owner: "octo",
  };

  async function projectHandler(phase: ProjectPhase): Promise<ProjectCompletionHandler> {
    const items = BOARDS[phase === "complete" ? "review" : phase];
    const handler = new ProjectCompletionHandler(context, {
      project,
      items,
      github: new InMemoryGitHub({ items }),
    });
    if (phase === "complete") {
      const passed = await handler.isComplete({
        ...emptySummary(2),
        detectedActions: [{ type: "review", result: "pass", notes: "All pages read." }],
      });
      assert.equal(passed, true);
    }
    assert.equal(handler.phase, phase);
    return handler;
  }

  /** Builds the prompt of one key the way the run does, and what it must say. */
  const builders: Record<string, () => Promise<{ text: string; says: string[] }>> = {
    system: async () => ({
      // As the iterator's main module fills it.
      text: await resolver.resolve("system", {
        ...argsToVariables(args),
        "uv-agent_name": definition.name,
        "uv-completion_criteria": "Probe criteria.",
        "uv-max_iterations": 3,
        "uv-complete_task_instructions": "Call complete_task before you stop.",
      }),
      says: ["Probe criteria.", "Call complete_task before you stop."],
    }),
    initial_iterate: async () => ({
      text: await new IterateCompletionHandler(context, 3).buildInitialPrompt(args),
      says: [args.task],
    }),
    continuation_iterate: async () => ({
      text: await new IterateCompletionHandler(context, 3).buildContinuationPrompt(2, earlier),
      says: [args.task, "Found the cause.", feedback],
    }),
    initial_manual: async () => ({
      text: await new ManualCompletionHandler(context, "ALL DONE").buildInitialPrompt(args),
      says: [args.task, "ALL DONE"],
    }),
    continuation_manual: async () => ({
      text: await new ManualCompletionHandler(context, "ALL DONE").buildContinuationPrompt(
        2,
        earlier,
      ),
      says: [args.task, "ALL DONE", feedback],
    }),
    initial_task: async () => ({
      text: await new TaskCompletionHandler(context).buildInitialPrompt(args),
      says: [args.task, "complete_task"],
    }),
    continuation_task: async () => ({
      text: await new TaskCompletionHandler(context).buildContinuationPrompt(2, earlier),
      says: [args.task, "Found the cause.", feedback],
    }),
    initial_issue: async () => ({
      text: await new IssueCompletionHandler(context, {
        issue,
        github: new InMemoryGitHub(),
      }).buildInitialPrompt(args),
      says: [issue.title, issue.body, issue.url, "bug"],
    }),
    continuation_issue: async () => ({
      text: await new IssueCompletionHandler(context, {
        issue,
        github: new InMemoryGitHub({ comments: [comment] }),
      }).buildContinuationPrompt(2, earlier),
      says: [issue.title, issue.url, "**@maintainer**", comment.body, feedback],
    }),
    initial_project: async () => ({
      text: await (await projectHandler("preparation")).buildInitialPrompt(args),
      says: [project.title, project.url, project.id, "Write page a", "Write page b"],
    }),
  };
  for (const phase of ["preparation", "processing", "review", "complete"] as const) {
    builders[`continuation_project_${phase}`] = async () => ({
      text: await (await projectHandler(phase)).buildContinuationPrompt(2, earlier),
      says: [
        project.title,
        feedback,
        ...(phase === "preparation" || phase === "processing" ? ["Write page b"] : []),
      ],
    });
  }

  await t.step(
    "the registry lists exactly the .md files in prompts/",
    async () => {
      const files: string[] = [];
      for await (const entry of Deno.readDir(BUILTIN_PROMPTS_DIR)) {
        if (entry.isFile && entry.name.endsWith(".md")) files.push(entry.name);
      }
      assert.deepEqual(
        Object.values(registry.prompts).sort(),
        files.sort(),
      );
    },
  );

  await t.step("every registry key has a handler that builds it", () => {
    assert.deepEqual(keys.toSorted(), Object.keys(builders).toSorted());
  });

  for (const key of keys) {
    await t.step(key, async () => {
      const build = builders[key];
      assert.ok(build, `unexpected built-in key "${key}"`);
      const { text, says } = await build();
      assert.ok(!text.includes("{uv-"), `unfilled placeholder in ${text}`);
      assert.ok(!text.startsWith("---"), "front matter must be stripped");
      assert.ok(!text.includes("description:"), text);
      for (const phrase of says) assertSays(text, phrase);
    });
  }
});
