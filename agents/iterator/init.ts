/**
 * `--init NAME`: scaffold a new agent folder with agent.json, prompts and an
 * example custom completion handler.
 *
 * @module
 */

import { join } from "node:path";
import { UsageError } from "../common/errors.ts";

const NAME = /^[a-z][a-z0-9-]*$/;

/**
 * Create `.agent/<name>/` in `cwd`. Refuses to touch an existing folder.
 *
 * @param name The agent name.
 * @param options The working directory.
 * @returns The created paths, relative to `cwd`.
 * @example
 * ```ts
 * import { scaffoldAgent } from "./init.ts";
 * const cwd = await Deno.makeTempDir();
 * try {
 *   const created = await scaffoldAgent("reviewer", { cwd });
 *   console.assert(created.includes(".agent/reviewer/agent.json"));
 * } finally {
 *   await Deno.remove(cwd, { recursive: true });
 * }
 * ```
 */
export async function scaffoldAgent(
  name: string,
  options: { cwd: string },
): Promise<string[]> {
  if (!NAME.test(name)) {
    throw new UsageError(
      `Flag "--init" expects an agent name matching ^[a-z][a-z0-9-]*$ (lowercase letters, digits, dashes), got "${name}"`,
    );
  }
  const dir = join(options.cwd, ".agent", name);
  try {
    await Deno.stat(dir);
    throw new UsageError(
      `Cannot scaffold agent "${name}": ".agent/${name}" already exists; nothing was written`,
    );
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const files = templates(name);
  const created: string[] = [];
  try {
    for (const [path, text] of Object.entries(files)) {
      const full = join(dir, path);
      await Deno.mkdir(join(full, ".."), { recursive: true });
      await Deno.writeTextFile(full, text, { createNew: true });
      created.push(`.agent/${name}/${path}`);
    }
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  // The run history (state.db) and worktrees live in .agent/.finishline/: keep them out of git.
  const ignoreFile = join(options.cwd, ".agent", ".gitignore");
  let ignore = "";
  try {
    ignore = await Deno.readTextFile(ignoreFile);
  } catch {
    // no .agent/.gitignore yet
  }
  if (!ignore.split("\n").some((line) => line.trim() === ".finishline/")) {
    const prefix = ignore === "" || ignore.endsWith("\n") ? "" : "\n";
    await Deno.writeTextFile(ignoreFile, `${prefix}.finishline/\n`, { append: true });
    created.push(".agent/.gitignore");
  }
  return created;
}

function templates(name: string): Record<string, string> {
  return {
    "agent.json": `{
  // Agent definition for finishline. Reference: README.md, "agent.json reference".
  "$schema": "https://jsr.io/@finishline/agents/0.1.0/agents/schemas/agent.schema.json",
  "version": "1",
  "name": "${name}",
  "displayName": "${name}",
  "description": "Describe what this agent does",
  "behavior": {
    "completionType": "custom",
    "completionConfig": {
      "maxIterations": 5,
      "handlerPath": "completion/handler.ts"
    },
    "allowedTools": ["Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite"],
    "permissionMode": "acceptEdits",
    "session": "fresh"
  },
  "prompts": {
    "registry": "prompts/registry.json"
  },
  "parameters": {
    "goal": {
      "type": "string",
      "description": "What the agent should achieve",
      "required": true,
      "cli": "--goal"
    }
  }
}
`,
    "prompts/registry.json": `{
  "prompts": {
    "initial_custom": "initial_custom.md",
    "continuation_custom": "continuation_custom.md"
  }
}
`,
    "prompts/initial_custom.md": `---
description: First prompt. Variables: README.md, "Prompt variables".
---
# Goal

{uv-goal}

When the goal is reached and committed, end your final message with this block:

\`\`\`action
{"type": "finished", "evidence": "what shows the goal is reached"}
\`\`\`
`,
    "prompts/continuation_custom.md": `---
description: Prompt for iterations 2 and later.
---
# Goal (iteration {uv-iteration} of at most {uv-max_iterations})

{uv-goal}

## What happened so far

{uv-previous_summary}

Continue. When the goal is reached and committed, emit the \`finished\` action block.
`,
    "completion/handler.ts":
      `// A custom completion handler for finishline. The default export is a factory
// (definition, args, context) => CompletionHandler; context.resolver fills the
// templates of this agent's prompt registry.

/** The parts of finishline's IterationSummary this handler reads. */
interface Summary {
  iteration: number;
  detectedActions: Array<{ type: string; [field: string]: unknown }>;
}

interface Context {
  resolver: { resolve(key: string, variables: Record<string, unknown>): Promise<string> };
  maxIterations: number;
}

export default function createHandler(
  _definition: unknown,
  args: Record<string, unknown>,
  context: Context,
) {
  const goal = String(args.goal ?? "");
  const variables = (iteration: number) => ({
    "uv-goal": goal,
    "uv-iteration": iteration,
    "uv-max_iterations": context.maxIterations,
  });
  return {
    type: "custom" as const,
    buildInitialPrompt: () => context.resolver.resolve("initial_custom", variables(1)),
    buildContinuationPrompt: (iteration: number, summaries: Array<{ assistantResponses: string[] }>) =>
      context.resolver.resolve("continuation_custom", {
        ...variables(iteration),
        "uv-previous_summary": summaries.at(-1)?.assistantResponses.at(-1) ?? "(nothing reported)",
      }),
    buildCompletionCriteria: () => ({
      short: "finished action reported",
      detailed: \`Reach the goal: \${goal}. Then emit a fenced \\\`action\\\` block {"type": "finished", "evidence": "..."}.\`,
    }),
    // Decide from the summary you are given, never from counters of your own.
    isComplete: (summary: Summary) =>
      Promise.resolve(summary.detectedActions.some((action) => action.type === "finished")),
    getCompletionDescription: (summary: Summary) =>
      Promise.resolve(\`Goal reached in iteration \${summary.iteration}\`),
  };
}
`,
    ".gitignore": "logs/\n",
  };
}
