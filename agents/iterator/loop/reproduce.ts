/**
 * The verifier session of `verify.reproduce: "held-out"`: beside the
 * worker's first session, a separate session on a worktree of the starting
 * commit writes tests that reproduce the task, from the task's text and the
 * detected checks only (never the worker's transcript). The gate keeps them
 * when they fail on the starting commit, holds them out of the worker's
 * tree, and needs them to pass on the final commit.
 *
 * @module
 */

import type { AgentMessage, SessionRequest } from "../../common/backends/types.ts";
import type { Reproduction } from "../../common/checks/reproduction.ts";
import { firstLine } from "../../common/errors.ts";
import type { AgentSessions } from "./agent_sessions.ts";
import type { RunState } from "./state.ts";

/** Marks the verifier's system prompt (scripted servers route on it). */
export const VERIFIER_MARKER = "[finishline verifier session]";

/** What the worker is told, in its system prompt, when a verifier runs. */
export const HELD_OUT_NOTICE =
  "A held-out acceptance test for this task is being written from the task's text by a separate verifier; you will not see it. When you claim the task is done it runs on a clean copy of your final commit, beside the repository's checks, and must pass: make the code do what the task asks for every input, not only for the inputs of the tests you can see.";

/** The verifier's cost, for the report: apart from the worker's. */
export interface VerifierCost {
  /** Model requests (assistant messages). */
  requests: number;
  /** What the verifier session cost, in USD, as the agent reported it. */
  costUsd: number;
  /** Input and output tokens of its requests. */
  tokens: { input: number; output: number };
  /** Wall time of the verifier session, in milliseconds. */
  durationMs: number;
}

/** The reproduction of a run, as the log and the report record it. */
export type ReproductionRecord = Reproduction & { cost: VerifierCost };

/** The verifier's instructions, appended to its system prompt. */
const VERIFIER_SYSTEM = `${VERIFIER_MARKER}
You are the verifier of a coding task, not its worker. Another agent will do the task later; you never change the code under test. Your only job: write one or a few tests, in the repository's own test framework and layout, that pass once the task is done and fail now, on this commit, because the behaviour the task asks for is missing (an assertion that fails, not a syntax, import or build error). Put them in new test files where the repository's runner finds them. Run the repository's test command to see them fail for that reason, then stop. If the task cannot be checked by a test (documentation, refactoring, a request without observable behaviour), write nothing and say why.`;

function verifierPrompt(task: string, checks: string[]): string {
  return [
    "The task, as the worker will get it:",
    "",
    task.trim(),
    "",
    checks.length > 0
      ? `The repository's checks: ${checks.map((check) => `\`${check}\``).join(", ")}.`
      : "The repository has no detected checks.",
    "",
    "Write the reproduction tests now.",
  ].join("\n");
}

/**
 * Start the verifier beside the first session, when `verify.reproduce` is
 * `held-out` and the run has a repository and detected checks. The gate
 * waits for it at the first claim; the log gets a `reproduction` event.
 *
 * @param state The run.
 * @param sessions The run's sessions (for their settings).
 * @param task The first prompt: the task as the worker gets it.
 */
export function startReproduction(state: RunState, sessions: AgentSessions, task: string): void {
  const { git, repoChecks } = state.options;
  const commit = state.git?.baseline;
  if (state.definition.verify.reproduce !== "held-out" || !git || !commit || !repoChecks) return;
  if (state.reproduction) return;
  const cost: VerifierCost = {
    requests: 0,
    costUsd: 0,
    tokens: { input: 0, output: 0 },
    durationMs: 0,
  };
  const started = state.now();
  const verify = state.definition.verify;
  state.reproduction = repoChecks.startReproduction(git, commit, async (dir) => {
    const request: SessionRequest = {
      ...sessions.settings(0),
      prompt: verifierPrompt(task, repoChecks.checks.map((check) => check.command)),
      systemPromptAppend: VERIFIER_SYSTEM,
      cwd: dir,
      allowedTools: ["Bash", "Read", "Write", "Edit", "Glob", "Grep"],
      disallowedTools: [],
      permissionMode: "acceptEdits",
      maxTurns: verify.reproduceMaxTurns,
      maxBudgetUsd: verify.reproduceMaxCostUsd,
      signal: AbortSignal.any([state.signal, state.stopVerifier.signal]),
    };
    try {
      for await (const message of state.options.backend.session(request)) count(cost, message);
    } catch (error) {
      return `the verifier session failed: ${firstLine(error)}`;
    } finally {
      cost.durationMs = Math.round(state.now() - started);
    }
    if (cost.costUsd >= verify.reproduceMaxCostUsd) {
      return `the verifier reached its budget ($${verify.reproduceMaxCostUsd})`;
    }
    return undefined;
  }).then((reproduction) => {
    const record: ReproductionRecord = { ...reproduction, cost };
    state.emit({ type: "reproduction", reproduction: record });
    return record;
  }, (error) => {
    const record: ReproductionRecord = {
      kept: false,
      why: `it failed: ${firstLine(error)}`,
      notes: [],
      cost,
    };
    state.emit({ type: "reproduction", reproduction: record });
    return record;
  });
}

/** Adds a message's requests, cost and tokens to the verifier's account. */
function count(cost: VerifierCost, message: AgentMessage): void {
  if (message.type === "assistant") cost.requests++;
  if (message.type !== "result") return;
  if (typeof message.total_cost_usd === "number") cost.costUsd += message.total_cost_usd;
  const usage = message.usage as Record<string, unknown> | undefined;
  if (usage) {
    cost.tokens.input += typeof usage.input_tokens === "number" ? usage.input_tokens : 0;
    cost.tokens.output += typeof usage.output_tokens === "number" ? usage.output_tokens : 0;
  }
}
