/**
 * `--init NAME`: scaffold a new agent folder with agent.json, prompts and an
 * example custom completion handler.
 *
 * @module
 */

import { join } from "node:path";
import { UsageError } from "../common/errors.ts";
import { VERSION } from "../common/version.ts";

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
  options: { cwd: string; githubActions?: boolean; triggerLabel?: string },
): Promise<string[]> {
  if (!NAME.test(name)) {
    throw new UsageError(
      `Flag "--init" expects an agent name matching ^[a-z][a-z0-9-]*$ (lowercase letters, digits, dashes), got "${name}"`,
    );
  }
  const dir = join(options.cwd, ".agent", name);
  const workflowFile = join(options.cwd, ".github", "workflows", "finishline.yml");
  if (options.githubActions) {
    try {
      await Deno.stat(workflowFile);
      throw new UsageError(
        `Cannot write ".github/workflows/finishline.yml": it already exists; nothing was written`,
      );
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
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
  if (options.githubActions) {
    await Deno.mkdir(join(options.cwd, ".github", "workflows"), { recursive: true });
    await Deno.writeTextFile(
      workflowFile,
      githubWorkflow(name, options.triggerLabel ?? "finishline"),
      { createNew: true },
    );
    created.push(".github/workflows/finishline.yml");
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

/**
 * The GitHub Actions workflow that runs the agent on issues: one job per
 * issue (a matrix), started by an issue label or by hand with a list of
 * issues; each job uploads its run report and posts it on the issue.
 *
 * @param agent The agent name.
 * @param triggerLabel The label that starts a run.
 * @returns The workflow YAML.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { githubWorkflow } from "./init.ts";
 * assert.match(githubWorkflow("fixer", "agent:go"), /types: \[labeled\]/);
 * ```
 */
export function githubWorkflow(agent: string, triggerLabel: string): string {
  const label = JSON.stringify(triggerLabel);
  return `# Runs the finishline agent "${agent}" on GitHub issues, one job per issue.
# Start it by adding the label ${label} to an issue, or by hand (Actions > finishline >
# Run workflow) with a comma-separated list of issue numbers.
# Needs the repository secret ANTHROPIC_API_KEY.
name: finishline

on:
  issues:
    types: [labeled]
  workflow_dispatch:
    inputs:
      issues:
        description: "Issue numbers, comma-separated (e.g. 12,15)"
        required: true
        type: string

permissions:
  contents: write
  issues: write
  pull-requests: write

jobs:
  plan:
    name: Pick the issues
    if: github.event_name == 'workflow_dispatch' || github.event.label.name == ${label}
    runs-on: ubuntu-latest
    outputs:
      issues: \${{ steps.pick.outputs.issues }}
    steps:
      - id: pick
        env:
          EVENT: \${{ github.event_name }}
          LABELED: \${{ github.event.issue.number }}
          REQUESTED: \${{ inputs.issues }}
        run: |
          if [ "$EVENT" = "issues" ]; then list="$LABELED"; else list="$REQUESTED"; fi
          json=$(echo "$list" | tr ', ' '\\n\\n' | grep -E '^[0-9]+$' | sort -un | jq -R 'tonumber' | jq -sc '.')
          echo "issues=$json" >> "$GITHUB_OUTPUT"

  run:
    name: Issue #\${{ matrix.issue }}
    needs: plan
    if: needs.plan.outputs.issues != '[]'
    runs-on: ubuntu-latest
    timeout-minutes: 120
    strategy:
      fail-fast: false
      matrix:
        issue: \${{ fromJSON(needs.plan.outputs.issues) }}
    concurrency:
      group: finishline-issue-\${{ matrix.issue }}
      cancel-in-progress: false
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: denoland/setup-deno@v2
        with:
          deno-version: v2.x
      - name: Run the agent
        env:
          ANTHROPIC_API_KEY: \${{ secrets.ANTHROPIC_API_KEY }}
          GH_TOKEN: \${{ github.token }}
          CI: "true"
        run: |
          git config user.name "finishline"
          git config user.email "finishline@users.noreply.github.com"
          deno run -A jsr:@finishline/agents/iterator --agent ${agent} --issue \${{ matrix.issue }} \\
            --worktree --create-pr --json > result.json
      - name: Upload the run report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: finishline-issue-\${{ matrix.issue }}
          path: |
            result.json
            .agent/${agent}/logs/
      - name: Post the report on the issue
        if: always()
        env:
          GH_TOKEN: \${{ github.token }}
        run: |
          report=$(ls -t .agent/${agent}/logs/*.md 2>/dev/null | head -n 1)
          if [ -n "$report" ]; then gh issue comment \${{ matrix.issue }} --body-file "$report"; fi
`;
}
