import assert from "node:assert/strict";
import path from "node:path";
import type { AgentDefinition } from "../../agents/definition/definition_types.ts";
import { checkHandler, loadCustomHandler } from "../../agents/completion/custom.ts";
import { createCompletionHandler } from "../../agents/completion/factory.ts";
import { firstLine, UsageError } from "../../agents/support/errors.ts";
import { PromptResolver } from "../../agents/prompts/resolver.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { definitionOf, dirUrl, usageErrorOf, withTempDir, write } from "./_helpers.ts";

const HANDLER_PATH = "completion/handler.ts";
const SHOWN = `.agent/x/${HANDLER_PATH}`;
const FIELD = "behavior.completionConfig.handlerPath";

function customDefinition(handlerPath = HANDLER_PATH): AgentDefinition {
  return definitionOf({
    name: "x",
    behavior: {
      completionType: "custom",
      completionConfig: { handlerPath, maxIterations: 6 },
    },
    parameters: {
      topic: { type: "string" },
      targetDecisions: { type: "number", default: 2 },
    },
  });
}

/** Writes `.agent/x/<relative>` below the repo `cwd` and returns the agent folder. */
async function writeAgentFile(
  cwd: string,
  relative: string,
  source: string,
): Promise<string> {
  await write(cwd, path.join(".agent/x", relative), source);
  return path.join(cwd, ".agent/x");
}

/** Builds the custom handler of agent "x" in the repo `cwd`, as a run does. */
async function load(
  cwd: string,
  definition: AgentDefinition = customDefinition(),
  args: Record<string, unknown> = {},
) {
  return await createCompletionHandler(definition, args, {
    agentDir: dirUrl(path.join(cwd, ".agent/x")),
    cwd,
  });
}

/**
 * A facilitator handler in the shape of the completion handler design: it
 * counts decision actions up to `args.targetDecisions` and builds its first
 * prompt through `context.resolver`.
 */
const FACILITATOR = `
export default function createHandler(definition, args, context) {
  let decisions = 0;
  const target = args.targetDecisions ?? 3;
  return {
    type: "custom",
    async buildInitialPrompt(runArgs) {
      return await context.resolver.resolve("kickoff", {
        topic: runArgs.topic,
        target_decisions: target,
        agent_name: definition.name,
      });
    },
    async buildContinuationPrompt(iteration) {
      return "Iteration " + iteration + ": " + decisions + "/" + target + " decisions";
    },
    buildCompletionCriteria() {
      return {
        short: target + " decisions",
        detailed: "Reach " + target + " decisions within " + context.maxIterations + " iterations",
      };
    },
    async isComplete(summary) {
      decisions += summary.detectedActions.filter((a) => a.type === "decision").length;
      return decisions >= target;
    },
    async getCompletionDescription() {
      return "Achieved " + decisions + " decisions";
    },
  };
}
`;

/** A module that records it was imported, to prove a refused path never runs. */
function markerModule(marker: string): string {
  return `Deno.writeTextFileSync(${JSON.stringify(marker)}, "imported");
export default () => { throw new Error("must not be called"); };
`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await Deno.lstat(file);
    return true;
  } catch {
    return false;
  }
}

Deno.test("custom handler module from the agent folder decides completion", async (t) => {
  await t.step(
    "its default export builds a handler that uses the resolver",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgentFile(cwd, HANDLER_PATH, FACILITATOR);
        await writeAgentFile(
          cwd,
          "prompts/kickoff.md",
          "---\ndescription: first prompt\n---\n{uv-agent_name} facilitates {uv-topic}: {uv-target_decisions} decisions",
        );
        const handler = await load(cwd, customDefinition(), {
          topic: "pricing",
          targetDecisions: 2,
        });
        assert.equal(
          await handler.buildInitialPrompt({ topic: "pricing" }),
          "x facilitates pricing: 2 decisions",
        );
        assert.deepEqual(handler.buildCompletionCriteria(), {
          short: "2 decisions",
          detailed: "Reach 2 decisions within 6 iterations",
        });
        const decision = { type: "decision", text: "Ship monthly plans" };
        const note = { type: "note", text: "Ask finance" };
        assert.equal(
          await handler.isComplete({
            ...emptySummary(1),
            detectedActions: [decision, note],
          }),
          false,
        );
        assert.equal(
          await handler.buildContinuationPrompt(2, []),
          "Iteration 2: 1/2 decisions",
        );
        assert.equal(
          await handler.isComplete({
            ...emptySummary(2),
            detectedActions: [decision],
          }),
          true,
        );
        assert.equal(
          await handler.getCompletionDescription(emptySummary(2)),
          "Achieved 2 decisions",
        );
      });
    },
  );

  await t.step(
    "the factory gets the definition, the arguments and the context",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgentFile(
          cwd,
          HANDLER_PATH,
          `export default function (...received) {
  const [definition, args, context] = received;
  const seen = {
    count: received.length,
    name: definition.name,
    args,
    maxIterations: context.maxIterations,
    agentDir: context.agentDir.href,
    cwd: context.cwd,
    resolver: typeof context.resolver.resolve,
  };
  return {
    type: "custom",
    buildInitialPrompt: async () => "",
    buildContinuationPrompt: async () => "",
    buildCompletionCriteria: () => ({ short: "seen", detailed: JSON.stringify(seen) }),
    isComplete: async () => false,
    getCompletionDescription: async () => "",
  };
}
`,
        );
        const handler = await load(cwd, customDefinition(), { topic: "t" });
        assert.deepEqual(
          JSON.parse(handler.buildCompletionCriteria().detailed),
          {
            count: 3,
            name: "x",
            args: { topic: "t" },
            maxIterations: 6,
            agentDir: dirUrl(path.join(cwd, ".agent/x")).href,
            cwd,
            resolver: "function",
          },
        );
      });
    },
  );

  await t.step(
    "an async factory and a two-argument factory both work",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgentFile(
          cwd,
          HANDLER_PATH,
          `class Handler {
  type = "custom";
  async buildInitialPrompt() { return "go"; }
  async buildContinuationPrompt() { return "again"; }
  buildCompletionCriteria() { return { short: "s", detailed: "d" }; }
  async isComplete(summary) { return summary.iteration >= 2; }
  async getCompletionDescription() { return "two"; }
}
export default async function createHandler(definition, args) {
  await Promise.resolve();
  return new Handler();
}
`,
        );
        const handler = await load(cwd);
        assert.equal(await handler.isComplete(emptySummary(1)), false);
        assert.equal(await handler.isComplete(emptySummary(2)), true);
      });
    },
  );

  await t.step(
    "a symlink that stays inside the agent folder is fine",
    async () => {
      await withTempDir(async (cwd) => {
        const agentDir = await writeAgentFile(cwd, "lib/real.ts", FACILITATOR);
        await Deno.mkdir(path.join(agentDir, "completion"));
        await Deno.symlink(
          path.join(agentDir, "lib/real.ts"),
          path.join(agentDir, HANDLER_PATH),
        );
        const handler = await load(cwd, customDefinition(), {
          targetDecisions: 1,
        });
        assert.equal(handler.buildCompletionCriteria().short, "1 decisions");
      });
    },
  );

  await t.step("an agent folder that is itself a symlink is fine", async () => {
    await withTempDir(async (cwd) => {
      await write(cwd, "elsewhere/x/completion/handler.ts", FACILITATOR);
      await Deno.mkdir(path.join(cwd, ".agent"));
      await Deno.symlink(
        path.join(cwd, "elsewhere/x"),
        path.join(cwd, ".agent/x"),
      );
      const handler = await load(cwd);
      assert.equal(handler.buildCompletionCriteria().short, "3 decisions");
    });
  });
});

Deno.test("a custom handler that cannot be loaded is a UsageError naming the file", async (t) => {
  const cases: Array<[string, string, string | RegExp]> = [
    [
      "a module that throws on import",
      `throw new Error("DATABASE_URL is not set\\nsecond line");\nexport default () => ({});\n`,
      `Cannot load custom handler "${SHOWN}": DATABASE_URL is not set`,
    ],
    [
      "a module with a syntax error",
      `export default function createHandler( {\n  return {;\n}\n`,
      new RegExp(
        `^Cannot load custom handler "${SHOWN}": .*(SyntaxError|parse)`,
      ),
    ],
    [
      "a module without a default export",
      `export function createHandler() { return {}; }\n`,
      `Cannot load custom handler "${SHOWN}": expected a default export that is a factory function (definition, args) => CompletionHandler`,
    ],
    [
      "a default export that is not a function",
      `export default { isComplete: async () => true };\n`,
      `Cannot load custom handler "${SHOWN}": expected a default export that is a factory function (definition, args) => CompletionHandler`,
    ],
    [
      "a factory that throws",
      `export default (definition, args) => {\n  if (!args.topic) throw new TypeError("--topic is required");\n};\n`,
      `Custom handler factory "${SHOWN}" failed: --topic is required`,
    ],
    [
      "an async factory that rejects",
      `export default async () => { throw "plain string"; };\n`,
      `Custom handler factory "${SHOWN}" failed: plain string`,
    ],
    [
      "a factory returning an object that lacks methods",
      `export default () => ({\n  type: "custom",\n  buildInitialPrompt: async () => "",\n  buildCompletionCriteria: () => ({ short: "", detailed: "" }),\n  isComplete: true,\n});\n`,
      `Custom handler "${SHOWN}": the handler lacks buildContinuationPrompt(), isComplete(), getCompletionDescription()`,
    ],
    [
      "a factory returning nothing",
      `export default () => {};\n`,
      `Custom handler "${SHOWN}": the factory returned undefined, expected a CompletionHandler object`,
    ],
    [
      "a factory returning null",
      `export default () => null;\n`,
      `Custom handler "${SHOWN}": the factory returned null, expected a CompletionHandler object`,
    ],
  ];
  for (const [name, source, expected] of cases) {
    await t.step(name, async () => {
      await withTempDir(async (cwd) => {
        await writeAgentFile(cwd, HANDLER_PATH, source);
        const message = await usageErrorOf(() => load(cwd));
        if (typeof expected === "string") assert.equal(message, expected);
        else assert.match(message, expected);
      });
    });
  }

  await t.step("a handlerPath whose file does not exist", async () => {
    await withTempDir(async (cwd) => {
      await Deno.mkdir(path.join(cwd, ".agent/x"), { recursive: true });
      assert.equal(
        await usageErrorOf(() => load(cwd)),
        `Cannot load "${FIELD}" "${SHOWN}": file not found`,
      );
    });
  });

  await t.step("a custom definition without handlerPath", async () => {
    const base = customDefinition();
    const definition = {
      ...base,
      behavior: { ...base.behavior, completionConfig: {} },
    };
    await withTempDir(async (cwd) => {
      assert.equal(
        await usageErrorOf(() => load(cwd, definition)),
        `Agent "x" has completionType "custom" but no "${FIELD}"`,
      );
    });
  });
});

Deno.test("a custom handler outside the agent folder is refused before it is imported", async (t) => {
  await t.step("a handlerPath with ../", async () => {
    await withTempDir(async (cwd) => {
      const marker = path.join(cwd, "imported");
      await write(cwd, ".agent/evil.ts", markerModule(marker));
      await Deno.mkdir(path.join(cwd, ".agent/x"));
      assert.equal(
        await usageErrorOf(() => load(cwd, customDefinition("../evil.ts"))),
        `Refusing "${FIELD}" "../evil.ts": it must stay inside the agent folder ".agent/x/"`,
      );
      assert.equal(await exists(marker), false);
    });
  });

  await t.step(
    "a handlerPath that climbs out through a subfolder",
    async () => {
      await withTempDir(async (cwd) => {
        const marker = path.join(cwd, "imported");
        await write(cwd, ".agent/evil.ts", markerModule(marker));
        await Deno.mkdir(path.join(cwd, ".agent/x"));
        const message = await usageErrorOf(() =>
          load(cwd, customDefinition("completion/../../evil.ts"))
        );
        assert.match(message, /must stay inside the agent folder/);
        assert.equal(await exists(marker), false);
      });
    },
  );

  await t.step("an absolute handlerPath", async () => {
    await withTempDir(async (cwd) => {
      const marker = path.join(cwd, "imported");
      const evil = await write(cwd, "evil.ts", markerModule(marker));
      await Deno.mkdir(path.join(cwd, ".agent/x"), { recursive: true });
      for (const handlerPath of [evil, `file://${evil}`]) {
        const message = await usageErrorOf(() => load(cwd, customDefinition(handlerPath)));
        assert.match(
          message,
          /must stay inside the agent folder ".agent\/x\/"$/,
        );
      }
      assert.equal(await exists(marker), false);
    });
  });

  await t.step("a symlink inside the folder that points outside", async () => {
    await withTempDir(async (cwd) => {
      const marker = path.join(cwd, "imported");
      const evil = await write(cwd, "evil.ts", markerModule(marker));
      const agentDir = path.join(cwd, ".agent/x");
      await Deno.mkdir(path.join(agentDir, "completion"), { recursive: true });
      await Deno.symlink(evil, path.join(agentDir, HANDLER_PATH));
      const message = await usageErrorOf(() => load(cwd));
      assert.equal(
        message,
        `Refusing "${FIELD}" "${SHOWN}": it resolves outside the agent folder (to "${await Deno
          .realPath(evil)}")`,
      );
      assert.equal(await exists(marker), false);
    });
  });

  await t.step("a symlinked subfolder that points outside", async () => {
    await withTempDir(async (cwd) => {
      const marker = path.join(cwd, "imported");
      await write(cwd, "outside/handler.ts", markerModule(marker));
      const agentDir = path.join(cwd, ".agent/x");
      await Deno.mkdir(agentDir, { recursive: true });
      await Deno.symlink(
        path.join(cwd, "outside"),
        path.join(agentDir, "completion"),
      );
      const message = await usageErrorOf(() => load(cwd));
      assert.match(message, /resolves outside the agent folder/);
      assert.equal(await exists(marker), false);
    });
  });
});

Deno.test("loadCustomHandler passes the resolver it is given", async () => {
  await withTempDir(async (cwd) => {
    const agentDir = await writeAgentFile(cwd, HANDLER_PATH, FACILITATOR);
    await write(cwd, "shared/kickoff.md", "Shared kickoff for {uv-topic}");
    await write(
      cwd,
      "shared/registry.json",
      JSON.stringify({ prompts: { kickoff: "kickoff.md" } }),
    );
    const resolver = await PromptResolver.create({
      agentDir: dirUrl(cwd),
      registry: "shared/registry.json",
      cwd,
    });
    const handler = await loadCustomHandler(customDefinition(), {}, {
      resolver,
      maxIterations: 2,
      agentDir: dirUrl(agentDir),
      cwd,
    });
    assert.equal(
      await handler.buildInitialPrompt({ topic: "hiring" }),
      "Shared kickoff for hiring",
    );
    assert.match(
      handler.buildCompletionCriteria().detailed,
      /within 2 iterations/,
    );
  });
});

Deno.test("checkHandler names every missing method", async (t) => {
  await t.step("an empty object", () => {
    assert.throws(() => checkHandler({}, "h.ts"), {
      name: "UsageError",
      message:
        'Custom handler "h.ts": the handler lacks buildInitialPrompt(), buildContinuationPrompt(), buildCompletionCriteria(), isComplete(), getCompletionDescription()',
    });
  });

  await t.step("a string", () => {
    assert.throws(() => checkHandler("handler", "h.ts"), UsageError);
  });

  await t.step("a complete handler passes through unchanged", () => {
    const handler = {
      type: "custom",
      buildInitialPrompt: () => Promise.resolve(""),
      buildContinuationPrompt: () => Promise.resolve(""),
      buildCompletionCriteria: () => ({ short: "", detailed: "" }),
      isComplete: () => Promise.resolve(true),
      getCompletionDescription: () => Promise.resolve(""),
    };
    assert.equal(checkHandler(handler, "h.ts"), handler);
  });
});

Deno.test("firstLine keeps the first non-blank line of an error", () => {
  assert.equal(firstLine(new Error("\n  boom  \nstack")), "boom");
  assert.equal(firstLine("plain"), "plain");
  assert.equal(firstLine(new Error("")), "unknown error");
});
