/**
 * One question to the model outside the agent's work: a session without
 * tools, one prompt, one turn, its text back. The judge checker and the
 * learning extraction ask this way.
 *
 * @module
 */

import type { AgentBackend } from "../backends/port.ts";
import { SummaryBuilder } from "../loop/summary_builder.ts";

/** Options of {@linkcode ask}. */
export interface AskOptions {
  /** Appended to the system prompt: who the model is and how to answer. */
  system: string;
  /** Working directory of the session. */
  cwd: string;
  /** Model; the backend's default when absent. */
  model?: string;
  /** Stops the session (a timeout, an interrupt). */
  signal: AbortSignal;
}

/**
 * Ask the model one question in a session with no tools and no settings.
 *
 * @param backend The backend that runs the session.
 * @param prompt The question.
 * @param options System prompt, working directory, model and signal.
 * @returns The model's text, its text blocks joined by newlines.
 * @throws {Error} When the session fails; the caller decides what that means.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { AgentBackend } from "@finishline/agents";
 * import { ask } from "./ask.ts";
 *
 * const backend: AgentBackend = {
 *   name: "scripted",
 *   async *session(request) {
 *     assert.deepEqual(request.tools, []);
 *     yield { type: "assistant", message: { content: [{ type: "text", text: "42" }] } };
 *   },
 * };
 * const reply = await ask(backend, "What is six times seven?", {
 *   system: "Reply with a number only.",
 *   cwd: Deno.cwd(),
 *   signal: AbortSignal.timeout(5_000),
 * });
 * assert.equal(reply, "42");
 * ```
 */
export async function ask(
  backend: AgentBackend,
  prompt: string,
  options: AskOptions,
): Promise<string> {
  const builder = new SummaryBuilder(0, { enabled: false });
  for await (
    const message of backend.session({
      prompt,
      systemPromptAppend: options.system,
      cwd: options.cwd,
      tools: [],
      allowedTools: [],
      disallowedTools: [],
      permissionMode: "default",
      model: options.model,
      maxTurns: 1,
      settingSources: [],
      signal: options.signal,
    })
  ) {
    builder.add(message);
  }
  return builder.current.assistantResponses.join("\n");
}
