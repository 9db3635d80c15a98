/**
 * Sessions that are not the worker's: the verifier, who writes the held-out
 * reproduction test, and the reviewer, who judges the worker's declarations.
 * Neither sees the worker's transcript. They run on `verify.reproduceBackend`
 * and `verify.reproduceModel` when set (else the run's backend and model),
 * under their own turn and cost caps, and their cost is counted apart from
 * the worker's.
 *
 * @module
 */

import type { AgentMessage, SessionRequest } from "../backends/port.ts";
import { firstLine } from "../support/errors.ts";
import type { RunState } from "./state.ts";
import type { IndependentCost } from "./independent_cost.ts";

/** What an independent session is asked, beyond what every one of them gets. */
export interface IndependentAsk {
  /** The prompt. */
  prompt: string;
  /** Its instructions, appended to the agent's system prompt. */
  instructions: string;
  /** The folder it works in (a worktree or clean copy, never the worker's checkout). */
  cwd: string;
  /** The tools it may use. */
  tools: string[];
  /** Its turn cap. */
  maxTurns: number;
  /** Its cost cap in USD. */
  maxBudgetUsd: number;
  /** Aborts it besides the run's end. */
  signal?: AbortSignal;
}

/** How an independent session ended. */
export interface IndependentEnd {
  /** Its last text block, where its answer is. */
  lastText: string;
  /** Why it did not end normally, after its name: "session failed: ...", "reached its budget ($1)". */
  problem?: string;
}

/**
 * Run one independent session to its end, counting it into `cost`.
 *
 * @param state The run.
 * @param ask The prompt, instructions, folder, tools and caps.
 * @param cost The account it is counted into.
 * @returns Its last text, and what went wrong, if anything.
 */
export async function runIndependent(
  state: RunState,
  ask: IndependentAsk,
  cost: IndependentCost,
): Promise<IndependentEnd> {
  const { behavior, options } = state;
  const verify = state.definition.verify;
  const backend = state.independentBackend;
  const request: SessionRequest = {
    // Only Claude Code reads an appended system prompt; other agents read the instructions first.
    prompt: /^claude/.test(backend.name) ? ask.prompt : `${ask.instructions}\n\n${ask.prompt}`,
    systemPromptAppend: ask.instructions,
    cwd: ask.cwd,
    allowedTools: ask.tools,
    disallowedTools: [],
    permissionMode: "acceptEdits",
    // A backend other than the run's does not take the run's model.
    model: verify.reproduceModel ?? (verify.reproduceBackend ? undefined : behavior.model),
    maxTurns: ask.maxTurns,
    maxBudgetUsd: ask.maxBudgetUsd,
    settingSources: behavior.settingSources,
    env: options.env,
    refuseCommands: options.refuseCommands,
    // Its own sandbox: a private home and /tmp of its own, the worker's checkout not there.
    sandbox: verify.sandbox,
    network: verify.network,
    signal: AbortSignal.any([
      state.signal,
      state.stopVerifier.signal,
      ...(ask.signal ? [ask.signal] : []),
    ]),
  };
  const started = state.now();
  const before = cost.costUsd;
  let lastText = "";
  try {
    // An agent process that dies before its first answer (two starting at once, a first
    // run's set-up) gets one more try: nothing was done yet.
    for (let attempt = 1;; attempt++) {
      cost.sessions++;
      const requests = cost.requests;
      try {
        for await (const message of backend.session(request)) {
          count(cost, message);
          lastText = textOf(message) ?? lastText;
        }
        break;
      } catch (error) {
        if (attempt < 2 && cost.requests === requests && !request.signal.aborted) continue;
        return { lastText, problem: `session failed: ${firstLine(error)}` };
      }
    }
  } finally {
    cost.durationMs += Math.round(state.now() - started);
  }
  if (cost.costUsd - before >= ask.maxBudgetUsd) {
    return { lastText, problem: `reached its budget ($${ask.maxBudgetUsd})` };
  }
  return { lastText };
}

/** Adds a message's requests, cost and tokens to the account. */
function count(cost: IndependentCost, message: AgentMessage): void {
  if (message.type === "assistant") cost.requests++;
  if (message.type !== "result") return;
  if (typeof message.total_cost_usd === "number") cost.costUsd += message.total_cost_usd;
  const usage = message.usage as Record<string, unknown> | undefined;
  if (usage) {
    cost.tokens.input += typeof usage.input_tokens === "number" ? usage.input_tokens : 0;
    cost.tokens.output += typeof usage.output_tokens === "number" ? usage.output_tokens : 0;
  }
}

/** The text of an assistant message's last text block, if it has one. */
function textOf(message: AgentMessage): string | undefined {
  if (message.type !== "assistant") return undefined;
  const content = (message.message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((block) =>
    block && typeof block === "object" && (block as { type?: unknown }).type === "text" &&
      typeof (block as { text?: unknown }).text === "string"
      ? [(block as { text: string }).text]
      : []
  );
  return texts.length > 0 ? texts.join("\n") : undefined;
}
