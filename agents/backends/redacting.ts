/**
 * The model requests as a redacted sink: a backend wrapper that redacts every
 * text finishline sends to an agent (prompts, system prompts, complete_task
 * answers, stop-hook reasons), so that a secret in a task, an issue or a
 * check's output never reaches the model provider through finishline.
 *
 * @module
 */

import { type Redactor, redactorOfProcess } from "../support/redact.ts";
import type {
  AgentBackend,
  AgentConversation,
  AgentMessage,
  ConversationTurn,
  ProcessSettings,
  SessionRequest,
  SessionSettings,
} from "./port.ts";

const REDACTING = Symbol("redacting");

/**
 * Wrap a backend so that everything sent through it is redacted first. A
 * backend wrapped already is returned as it is.
 *
 * @param backend The backend.
 * @param redactor The redactor. @default the process's
 * @returns The wrapped backend.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AgentBackend, type SessionRequest } from "@finishline/agents";
 * import { Redactor } from "../support/redact.ts";
 * import { redactingBackend } from "./redacting.ts";
 *
 * const seen: string[] = [];
 * const inner: AgentBackend = {
 *   name: "stand-in",
 *   async *session(request: SessionRequest) {
 *     seen.push(request.prompt);
 *     yield { type: "result", subtype: "success", total_cost_usd: 0 };
 *   },
 * };
 * const backend = redactingBackend(inner, new Redactor({ DEPLOY_TOKEN: "s3cr3t-value-42" }));
 * for await (
 *   const _ of backend.session({
 *     prompt: "deploy with s3cr3t-value-42",
 *     systemPromptAppend: "",
 *     cwd: ".",
 *     allowedTools: [],
 *     disallowedTools: [],
 *     permissionMode: "default",
 *     settingSources: [],
 *     signal: new AbortController().signal,
 *   })
 * );
 * assert.deepEqual(seen, ["deploy with [redacted]"]);
 * assert.equal(redactingBackend(backend), backend);
 * ```
 */
export function redactingBackend(
  backend: AgentBackend,
  redactor: Redactor = redactorOfProcess(),
): AgentBackend {
  if ((backend as { [REDACTING]?: true })[REDACTING]) return backend;
  const wrapped: AgentBackend & { [REDACTING]: true } = {
    [REDACTING]: true,
    name: backend.name,
    session: (request: SessionRequest): AsyncIterable<AgentMessage> =>
      backend.session(redactTurn(redactSettings(request, redactor), redactor)),
  };
  if (backend.warm) {
    wrapped.warm = (settings: ProcessSettings) => backend.warm!(redactSettings(settings, redactor));
  }
  if (backend.conversation) {
    wrapped.conversation = (settings: ProcessSettings): AgentConversation => {
      const conversation = backend.conversation!(redactSettings(settings, redactor));
      return {
        get sessionId() {
          return conversation.sessionId;
        },
        send: (turn: ConversationTurn) => conversation.send(redactTurn(turn, redactor)),
        close: () => conversation.close(),
      };
    };
  }
  if (backend.release) wrapped.release = () => backend.release!();
  return wrapped;
}

function redactSettings<T extends SessionSettings>(settings: T, redactor: Redactor): T {
  return {
    ...settings,
    systemPromptAppend: redactor.redact(settings.systemPromptAppend),
    ...(settings.systemPrompt !== undefined
      ? { systemPrompt: redactor.redact(settings.systemPrompt) }
      : {}),
  };
}

function redactTurn<T extends ConversationTurn>(turn: T, redactor: Redactor): T {
  const { onCompleteTask, onFinish, onStop } = turn;
  return {
    ...turn,
    prompt: redactor.redact(turn.prompt),
    onCompleteTask: onCompleteTask &&
      (async (call) => redactor.redact(await onCompleteTask(call))),
    onFinish: onFinish && (async (call) => redactor.redact(await onFinish(call))),
    onStop: onStop && (async (event) => {
      const decision = await onStop(event);
      return decision.block ? { block: true, reason: redactor.redact(decision.reason) } : decision;
    }),
  };
}
