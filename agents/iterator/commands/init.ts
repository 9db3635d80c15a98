/**
 * `--init NAME`: scaffold a new agent folder with agent.json, prompts and an
 * example custom completion handler.
 *
 * @module
 */

import { join, relative } from "node:path";
import { agentsHome } from "../../definition/load.ts";
import { UsageError } from "../../support/errors.ts";
import { VERSION } from "../../support/version.ts";
import { checkTriggerLabel, githubWorkflow } from "./github_workflow.ts";

export { checkTriggerLabel, githubWorkflow } from "./github_workflow.ts";

const NAME = /^[a-z][a-z0-9-]*$/;

/**
 * Create `.agent/<name>/` where agents are looked up from `cwd` (the nearest
 * `.agent/` up to the repository's root, else that root, else `cwd`). Refuses
 * to touch an existing folder.
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
  options: { cwd: string; githubActions?: boolean; triggerLabel?: string },
): Promise<string[]> {
  if (!NAME.test(name)) {
    throw new UsageError(
      `Flag "--init" expects an agent name matching ^[a-z][a-z0-9-]*$ (lowercase letters, digits, dashes), got "${name}"`,
    );
  }
  // From a subfolder, the repository's own .agent/ (where agents are looked up).
  const home = await agentsHome(options.cwd);
  const shown = (path: string) => relative(options.cwd, join(home, path));
  const dir = join(home, ".agent", name);
  const workflowFile = join(home, ".github", "workflows", "finishline.yml");
  if (options.githubActions) {
    checkTriggerLabel(options.triggerLabel ?? "finishline");
    await refuseExisting(
      workflowFile,
      `Cannot write ".github/workflows/finishline.yml": it already exists; nothing was written`,
    );
  }
  await refuseExisting(
    dir,
    `Cannot scaffold agent "${name}": ".agent/${name}" already exists; nothing was written`,
  );
  const files = templates(name);
  const created: string[] = [];
  try {
    for (const [path, text] of Object.entries(files)) {
      const full = join(dir, path);
      await Deno.mkdir(join(full, ".."), { recursive: true });
      await Deno.writeTextFile(full, text, { createNew: true });
      created.push(shown(`.agent/${name}/${path}`));
    }
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  if (options.githubActions) {
    await Deno.mkdir(join(home, ".github", "workflows"), { recursive: true });
    await Deno.writeTextFile(
      workflowFile,
      githubWorkflow(name, options.triggerLabel ?? "finishline"),
      { createNew: true },
    );
    created.push(shown(".github/workflows/finishline.yml"));
  }
  if (await ignoreStore(home)) created.push(shown(".agent/.gitignore"));
  return created;
}

async function refuseExisting(path: string, message: string): Promise<void> {
  try {
    await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  throw new UsageError(message);
}

/** Keep the run history (state.db) and worktrees, in .agent/.finishline/, out of git. */
async function ignoreStore(cwd: string): Promise<boolean> {
  const ignoreFile = join(cwd, ".agent", ".gitignore");
  let ignore = "";
  try {
    ignore = await Deno.readTextFile(ignoreFile);
  } catch {
    // no .agent/.gitignore yet
  }
  if (ignore.split("\n").some((line) => line.trim() === ".finishline/")) return false;
  const prefix = ignore === "" || ignore.endsWith("\n") ? "" : "\n";
  await Deno.writeTextFile(ignoreFile, `${prefix}.finishline/\n`, { append: true });
  return true;
}

/** Where the scaffolded handler imports the contract's types from: the package, at this version. */
const KIT = `jsr:@finishline/agents@${VERSION}/kit`;

/**
 * What to run next, after `--init NAME`: the agent on a goal, first without
 * calling a model; with `--github-actions`, what the workflow needs.
 *
 * @param name The agent's name.
 * @param options Whether a workflow was written, and how the user runs finishline.
 * @returns The lines to print.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nextSteps } from "./init.ts";
 *
 * assert.match(nextSteps("fixer", { program: "finishline" }), /finishline --agent fixer --goal/);
 * ```
 */
export function nextSteps(
  name: string,
  options: { githubActions?: boolean; program: string },
): string {
  const run = `${options.program} --agent ${name} --goal "Make the tests pass"`;
  const lines = [
    "",
    "Next, see what the agent would be sent (no model is called), then run it:",
    `  ${run} --dry-run`,
    `  ${run}`,
  ];
  if (options.githubActions) {
    lines.push(
      "  Commit .agent/ and .github/workflows/finishline.yml, add the repository secret",
      `  ANTHROPIC_API_KEY, then label an issue to start a run.`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function templates(name: string): Record<string, string> {
  return {
    "agent.json": `{
  // Agent definition for finishline. Reference: finishline's docs/agent-json.md.
  "$schema": "https://jsr.io/@finishline/agents/${VERSION}/agents/schemas/agent.schema.json",
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
    // Required by the custom handler (completion/handler.ts) only: a run with
    // --issue N takes its goal from the issue.
    "goal": {
      "type": "string",
      "description": "What the agent should achieve (not needed with --issue N)",
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
description: First prompt. Variables: finishline's docs/agent-json.md, "Prompts and variables".
---
# Goal

{uv-goal}

When the goal is reached and committed, call the complete_task tool with status success.
`,
    "prompts/continuation_custom.md": `---
description: Prompt for iterations 2 and later.
---
# Goal (iteration {uv-iteration} of at most {uv-max_iterations})

{uv-goal}

## What happened so far

{uv-previous_summary}

Continue. When the goal is reached and committed, call the complete_task tool with status success.
`,
    "completion/handler.ts":
      `// A custom completion handler for finishline. The default export is a factory
// (definition, args, context) => CompletionHandler; context.resolver fills the
// templates of this agent's prompt registry. The types are finishline's own.
import type {
  CompletionHandler,
  CompletionHandlerFactory,
  IterationSummary,
} from "${KIT}";

const createHandler: CompletionHandlerFactory = (_definition, args, context): CompletionHandler => {
  const goal = String(args.goal ?? "").trim();
  // With --issue N, --project N or --keyword the built-in handlers run instead.
  if (goal === "") throw new Error('Flag "--goal" is required: say what the agent should achieve');
  const variables = (iteration: number) => ({
    "uv-goal": goal,
    "uv-iteration": iteration,
    "uv-max_iterations": context.maxIterations,
  });
  return {
    type: "custom",
    buildInitialPrompt: () => context.resolver.resolve("initial_custom", variables(1)),
    buildContinuationPrompt: (iteration: number, summaries: IterationSummary[]) =>
      context.resolver.resolve("continuation_custom", {
        ...variables(iteration),
        "uv-previous_summary": summaries.at(-1)?.assistantResponses.at(-1) ?? "(nothing reported)",
      }),
    buildCompletionCriteria: () => ({
      short: "complete_task success",
      detailed: \`Reach the goal: \${goal}. Commit the work, then call complete_task with status success.\`,
    }),
    // Decide from the summary you are given, never from counters of your own.
    // finishline completes the run only when the evidence (the repository's checks) passes too.
    isComplete: (summary: IterationSummary) =>
      Promise.resolve(summary.completeTask?.status === "success"),
    getCompletionDescription: (summary: IterationSummary) =>
      Promise.resolve(\`Goal reached in iteration \${summary.iteration}\`),
  };
};

export default createHandler;
`,
    ".gitignore": "logs/\n",
  };
}
