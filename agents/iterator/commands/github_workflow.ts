/**
 * The GitHub Actions workflow `--init NAME --github-actions` writes: one job
 * per labelled issue, the pinned finishline, the OS sandbox set up on the
 * Ubuntu runner, Deno's folder cached, the log streamed as the run goes.
 *
 * @module
 */

import { UsageError } from "../../support/errors.ts";
import { VERSION } from "../../support/version.ts";

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
 * import { checkTriggerLabel } from "./github_workflow.ts";
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
 * import { githubWorkflow } from "./github_workflow.ts";
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
      # finishline and its npm packages (the Claude Code binary among them), downloaded once.
      - uses: actions/cache@v4
        with:
          path: ~/.cache/deno
          key: finishline-deno-${VERSION}-\${{ runner.os }}-\${{ runner.arch }}
${sandboxStep()}${agentStep(agent)}${reportSteps(agent)}`;
}

/**
 * The OS sandbox every agent session runs in: bubblewrap, socat and ripgrep
 * from Ubuntu; and unprivileged user namespaces, which Ubuntu 24.04 and
 * later restrict through AppArmor and bubblewrap needs.
 */
function sandboxStep(): string {
  return `      - name: Set up the sandbox (bubblewrap, user namespaces)
        run: |
          sudo apt-get update -q
          sudo apt-get install -y -q bubblewrap socat ripgrep
          if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then
            sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0
          fi
          bwrap --unshare-user --ro-bind / / true
`;
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
          set -o pipefail
          # The result to a file, the log to the job's output as it goes and to a file.
          deno run -A ${WORKFLOW_FINISHLINE} --agent ${agent} --issue "$ISSUE" \\
            --worktree --create-pr --json 2>&1 > finishline-result.json | tee finishline.log >&2
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
