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
  const goal = String(args.goal ?? "").trim();
  // With --issue N, --project N or --keyword the built-in handlers run instead.
  if (goal === "") throw new Error('Flag "--goal" is required: say what the agent should achieve');
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

/** The Deno the workflow installs: the version finishline's own CI runs on (`.ci/run`). */
const WORKFLOW_DENO_VERSION = "2.9.6";

/** The finishline the workflow runs: this package, at this version. */
const WORKFLOW_FINISHLINE: string = `jsr:@finishline/agents@${VERSION}/iterator`;

/**
 * Check a `--trigger-label` value: GitHub labels are 1 to 50 characters, on
 * one line; `${{` is refused, as the workflow would evaluate it.
 *
 * @param label The label name.
 * @throws {UsageError} When GitHub would not accept it as a label name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkTriggerLabel } from "./init.ts";
 * checkTriggerLabel("agent:go");
 * assert.throws(() => checkTriggerLabel(""), /--trigger-label/);
 * ```
 */
export function checkTriggerLabel(label: string): void {
  // deno-lint-ignore no-control-regex
  const control = /[\u0000-\u001f\u007f]/.test(label);
  if (label.trim() === "" || [...label].length > 50 || control || label.includes("${{")) {
    throw new UsageError(
      `Flag "--trigger-label" expects a GitHub label name (1 to 50 characters, one line, no "\${{"), got ${
        JSON.stringify(label)
      }`,
    );
  }
}

/**
 * The GitHub Actions workflow that runs the agent on issues, one job per
 * issue: a `plan` job lists the issues (the one just labelled, or by hand
 * every open issue with the label), and a `run` job, a matrix over them with
 * one concurrency group per issue, runs the pinned finishline with
 * `--issue N`, uploads the report and log, and comments the outcome.
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
  checkTriggerLabel(triggerLabel);
  return [workflowHeader(agent, triggerLabel), planJob(triggerLabel), runJob(agent)].join("\n");
}

/** A string literal of a workflow expression (single quotes, doubled inside). */
function expressionString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function workflowHeader(agent: string, label: string): string {
  return `# Runs the finishline agent "${agent}" on GitHub issues, one job per issue.
# Starts when an open issue gets the label ${JSON.stringify(label)} (that issue), or by hand
# (Actions > finishline > Run workflow: every open issue with the label).
# Needs the repository secret ANTHROPIC_API_KEY, and for the pull requests the setting
# Settings > Actions > General > "Allow GitHub Actions to create and approve pull requests".
# Written by finishline ${VERSION} (--init ${agent} --github-actions).
name: finishline

on:
  issues:
    types: [labeled]
  workflow_dispatch:
    inputs:
      limit:
        description: "At most this many issues"
        required: false
        default: "20"
        type: string

permissions:
  contents: write
  issues: write
  pull-requests: write
`;
}

function planJob(label: string): string {
  const condition = `github.event_name == 'workflow_dispatch' || ` +
    `(github.event.label.name == ${expressionString(label)} && github.event.issue.state == 'open')`;
  return `jobs:
  plan:
    name: Pick the issues
    if: ${JSON.stringify(condition)}
    runs-on: ubuntu-latest
    outputs:
      issues: \${{ steps.pick.outputs.issues }}
    steps:
      - name: List the open issues with the label
        id: pick
        env:
          GH_TOKEN: \${{ secrets.GITHUB_TOKEN }}
          GH_REPO: \${{ github.repository }}
          EVENT: \${{ github.event_name }}
          LABELED: \${{ github.event.issue.number }}
          LABEL: ${JSON.stringify(label)}
          LIMIT: \${{ inputs.limit }}
        run: |
          set -o pipefail
          if [ "$EVENT" = "issues" ]; then
            issues="[$LABELED]"
          else
            issues=$(gh issue list --label "$LABEL" --state open --limit "\${LIMIT:-20}" \\
              --json number | jq -c '[.[].number]')
          fi
          echo "issues=$issues" >> "$GITHUB_OUTPUT"
`;
}

function runJob(agent: string): string {
  return `  run:
    name: "Issue #\${{ matrix.issue }}"
    needs: plan
    if: needs.plan.outputs.issues != '[]'
    runs-on: ubuntu-latest
    timeout-minutes: 120
    strategy:
      fail-fast: false
      max-parallel: 10
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
          deno-version: v${WORKFLOW_DENO_VERSION}
${agentStep(agent)}${reportSteps(agent)}`;
}

function agentStep(agent: string): string {
  return `      - name: Run the agent
        env:
          ANTHROPIC_API_KEY: \${{ secrets.ANTHROPIC_API_KEY }}
          GH_TOKEN: \${{ secrets.GITHUB_TOKEN }}
          ISSUE: \${{ matrix.issue }}
        run: |
          git config user.name "finishline"
          git config user.email "finishline@users.noreply.github.com"
          code=0
          deno run -A ${WORKFLOW_FINISHLINE} --agent ${agent} --issue "$ISSUE" \\
            --worktree --create-pr --json > finishline-result.json 2> finishline.log || code=$?
          cat finishline.log >&2
          exit "$code"
`;
}

function reportSteps(agent: string): string {
  return `      - name: Upload the run report and log
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: finishline-issue-\${{ matrix.issue }}
          path: |
            finishline-result.json
            finishline.log
            .agent/${agent}/logs/
          include-hidden-files: true
          if-no-files-found: warn
      - name: Comment the outcome on the issue
        if: always()
        env:
          GH_TOKEN: \${{ secrets.GITHUB_TOKEN }}
          ISSUE: \${{ matrix.issue }}
          RUN_URL: \${{ github.server_url }}/\${{ github.repository }}/actions/runs/\${{ github.run_id }}
        run: |
          field() { jq -r "$1 // empty" finishline-result.json 2>/dev/null || true; }
          status=$(field .status)
          body="finishline: **\${status:-no result}**"
          reason=$(field .completionReason)
          if [ -n "$reason" ]; then body="$body: $reason"; fi
          body="$body (iterations: $(field .iterations), cost: \\$$(field .costUsd))"
          pr=$(field '.worktree.pullRequest // .pullRequest')
          if [ -n "$pr" ]; then body="$body"$'\\n\\n'"Pull request: $pr"; fi
          body="$body"$'\\n\\n'"Report and log: artifact finishline-issue-$ISSUE of $RUN_URL"
          gh issue comment "$ISSUE" --body "$body"
`;
}
