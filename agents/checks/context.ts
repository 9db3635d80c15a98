/**
 * The checker context's parts beyond the summaries, as the task completion
 * checkers design defines them: the session (this iteration's summary and
 * messages, and the earlier ones), the tentative output, the model adapter,
 * and the function that puts a whole context together.
 *
 * @module
 */

import type { AgentBackend } from "../backends/port.ts";
import type { CompleteTaskCall } from "../record/complete_task_call.ts";
import type { AgentMessage, IterationSummary } from "../record/iteration.ts";
import { ask } from "./ask.ts";
import { type Filesystem, RepoFilesystem } from "./filesystem.ts";
import type {
  ModelAdapter,
  SessionIteration,
  SessionToolCall,
  TaskCompletionContext,
  TentativeOutput,
} from "./checker_contract.ts";

/** The system prompt of a checker's question when it gives none. */
export const DEFAULT_ASK_SYSTEM =
  "You are a careful reviewer helping decide whether a coding task is complete. You have no tools: answer from what the question gives you, briefly.";

/**
 * The adapter a checker gets: one question, one tool-less session on the
 * run's backend (the judge checker asks the same way).
 *
 * @param backend The run's backend.
 * @param defaults The working directory, the agent's model, and the run's signal.
 * @returns The adapter.
 * @example A stand-in backend that answers every question
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AgentBackend } from "@finishline/agents";
 * import { modelAdapter } from "./context.ts";
 *
 * const backend: AgentBackend = {
 *   name: "scripted",
 *   async *session(request) {
 *     const text = request.prompt.includes("TODO") ? "INCOMPLETE: a TODO is left" : "COMPLETE";
 *     yield { type: "assistant", message: { content: [{ type: "text", text }] } };
 *   },
 * };
 * const adapter = modelAdapter(backend, { cwd: Deno.cwd() });
 * assert.equal(await adapter.ask("Is this done? // TODO"), "INCOMPLETE: a TODO is left");
 * ```
 */
export function modelAdapter(
  backend: AgentBackend,
  defaults: { cwd: string; model?: string; signal?: AbortSignal },
): ModelAdapter {
  return {
    ask: (prompt, options = {}) => {
      const timeout = AbortSignal.timeout((options.timeoutSeconds ?? 180) * 1000);
      return ask(backend, prompt, {
        system: options.system ?? DEFAULT_ASK_SYSTEM,
        cwd: defaults.cwd,
        model: options.model ?? defaults.model,
        signal: defaults.signal ? AbortSignal.any([defaults.signal, timeout]) : timeout,
      });
    },
  };
}

/**
 * The tentative output of an iteration: the complete_task report when the
 * agent made one, else its last text.
 *
 * @param summary The iteration.
 * @param completeTask The complete_task call being checked, when there is one.
 * @returns The report, the text, or undefined when the agent said nothing.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 * import { tentativeOutputOf } from "./context.ts";
 *
 * const summary = { ...emptySummary(1), assistantResponses: ["Reading.", "All tests pass."] };
 * assert.equal(tentativeOutputOf(summary), "All tests pass.");
 * assert.equal(tentativeOutputOf(emptySummary(2)), undefined);
 * ```
 */
export function tentativeOutputOf(
  summary: IterationSummary,
  completeTask?: CompleteTaskCall,
): TentativeOutput {
  return completeTask ?? summary.completeTask ?? summary.assistantResponses.at(-1);
}

/**
 * The tool calls in a list of messages, each with its result, in order:
 * what a checker looks at to find, say, the last test run.
 *
 * @param messages Messages of one iteration (`context.session.messages`).
 * @returns The tool calls and their results.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolResults } from "@finishline/agents";
 *
 * const calls = toolResults([
 *   {
 *     type: "assistant",
 *     message: { content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "deno test" } }] },
 *   },
 *   {
 *     type: "user",
 *     message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "ok | 3 passed | 0 failed" }] },
 *   },
 * ]);
 * assert.deepEqual(calls, [
 *   { name: "Bash", input: { command: "deno test" }, output: "ok | 3 passed | 0 failed", isError: false },
 * ]);
 * ```
 */
export function toolResults(messages: readonly AgentMessage[]): SessionToolCall[] {
  const calls: SessionToolCall[] = [];
  const byId = new Map<string, SessionToolCall>();
  for (const message of messages) {
    for (const block of contentOf(message)) {
      if (block.type === "tool_use" && typeof block.name === "string") {
        const call = { name: block.name, input: block.input, output: "", isError: false };
        calls.push(call);
        if (typeof block.id === "string") byId.set(block.id, call);
      } else if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
        const call = byId.get(block.tool_use_id);
        if (!call) continue;
        call.output = textOf(block.content);
        call.isError = block.is_error === true;
      }
    }
  }
  return calls;
}

/** What {@linkcode checkerContext} puts together: the context's own facts, and the iterations. */
export interface CheckerContextParts extends
  Pick<
    TaskCompletionContext,
    | "definition"
    | "cwd"
    | "agentDir"
    | "git"
    | "backend"
    | "stopReason"
    | "completeTask"
    | "signal"
    | "onCheck"
  > {
  /** The iteration being checked, with its messages. */
  current: SessionIteration;
  /** The earlier iterations, oldest first. */
  previous: readonly SessionIteration[];
  /** The filesystem. @default {a RepoFilesystem on the repository's root, else on `cwd`} */
  filesystem?: Filesystem;
}

/**
 * Put a checker context together: the session, the tentative output, the
 * repository's filesystem, the adapter, and the fields older checkers read
 * (`summary`, `previous`, `cwd`, ...).
 *
 * @param parts The iteration, the run's facts and the stop reason.
 * @returns The context.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary, parseDefinition } from "@finishline/agents";
 * import { checkerContext } from "./context.ts";
 *
 * const context = checkerContext({
 *   current: { summary: { ...emptySummary(2), assistantResponses: ["Done."] }, messages: [] },
 *   previous: [{ summary: emptySummary(1), messages: [] }],
 *   definition: parseDefinition(
 *     '{ "name": "demo", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
 *     { displayPath: "agent.json" },
 *   ),
 *   cwd: Deno.cwd(),
 *   agentDir: new URL("file:///nonexistent/"),
 *   stopReason: "end_turn",
 * });
 * assert.equal(context.session.summary.iteration, 2);
 * assert.equal(context.previous.length, 1);
 * assert.equal(context.tentativeOutput, "Done.");
 * assert.equal(context.filesystem?.exists("deno.json"), true);
 * assert.equal(context.adapter, undefined);
 * ```
 */
export function checkerContext(parts: CheckerContextParts): TaskCompletionContext {
  const { current, previous, definition, cwd, backend, signal } = parts;
  return {
    session: { ...current, previous },
    summary: current.summary,
    previous: previous.map((earlier) => earlier.summary),
    tentativeOutput: tentativeOutputOf(current.summary, parts.completeTask),
    filesystem: parts.filesystem ?? new RepoFilesystem(parts.git?.repo.root ?? cwd),
    adapter: backend
      ? modelAdapter(backend, { cwd, model: definition.behavior.model, signal })
      : undefined,
    stopReason: parts.stopReason,
    definition,
    cwd,
    agentDir: parts.agentDir,
    git: parts.git,
    backend,
    completeTask: parts.completeTask,
    signal,
    ...(parts.onCheck ? { onCheck: parts.onCheck } : {}),
  };
}

function contentOf(message: AgentMessage): Array<Record<string, unknown>> {
  const inner = message.message as { content?: unknown } | undefined;
  return Array.isArray(inner?.content)
    ? inner.content.filter((block): block is Record<string, unknown> =>
      typeof block === "object" && block !== null
    )
    : [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => typeof part?.text === "string" ? part.text : "")
    .filter((text) => text !== "")
    .join("\n");
}
