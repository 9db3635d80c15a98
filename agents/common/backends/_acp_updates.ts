/**
 * Agent Client Protocol session updates and permission requests, in the
 * runner's terms: updates become Claude Agent SDK shaped messages for the
 * summary builder, and permission requests are answered from the session's
 * allowed tools and permission mode. Private to the backends folder.
 *
 * @module
 */

import type * as acp from "@agentclientprotocol/sdk";
import { COMPLETE_TASK_NAME, COMPLETE_TASK_TOOL } from "../complete_task.ts";
import type { AgentMessage, SessionSettings } from "./types.ts";

/** The tool name an update names: Claude's own name when given, else the title. */
export function toolName(call: { title?: string | null; _meta?: unknown }): string {
  const meta = (call._meta ?? {}) as { claudeCode?: { toolName?: unknown } };
  const name = typeof meta.claudeCode?.toolName === "string"
    ? meta.claudeCode.toolName
    : call.title ?? "tool";
  return name.includes(COMPLETE_TASK_NAME) ? COMPLETE_TASK_TOOL : name;
}

/**
 * Turns session updates into SDK shaped messages. Text chunks are joined into
 * one text block until something else comes (so a keyword split over chunks
 * is still found); a tool call is reported once its input is known.
 */
export class UpdateTranslator {
  #text = "";
  readonly #tools = new Map<string, { name: string; input: unknown; sent: boolean }>();
  readonly #emit: (message: AgentMessage) => void;
  readonly #sessionId: string;

  /**
   * @param sessionId The session the updates belong to.
   * @param emit Receives the messages.
   */
  constructor(sessionId: string, emit: (message: AgentMessage) => void) {
    this.#sessionId = sessionId;
    this.#emit = emit;
  }

  /**
   * Take one update.
   *
   * @param update The update.
   */
  add(update: acp.SessionUpdate): void {
    if (update.sessionUpdate === "agent_message_chunk") {
      if (update.content.type === "text") this.#text += update.content.text;
      return;
    }
    if (update.sessionUpdate === "tool_call") {
      this.flush();
      this.#tools.set(update.toolCallId, {
        name: toolName(update),
        input: update.rawInput ?? {},
        sent: false,
      });
      if (isFilled(update.rawInput)) this.#sendTool(update.toolCallId);
    } else if (update.sessionUpdate === "tool_call_update") {
      this.#flushText();
      this.#toolUpdate(update);
    } else if (update.sessionUpdate === "usage_update") {
      if (update.cost?.currency === "USD") this.costUsd = update.cost.amount;
    } else if (update.sessionUpdate === "plan") {
      this.flush();
      this.#assistant({ type: "tool_use", name: "plan", input: { entries: update.entries } });
    }
  }

  /** The session's cost so far in USD, as the agent last reported it. */
  costUsd = 0;

  /** Report the text and the tool calls gathered so far. */
  flush(): void {
    this.#flushText();
    for (const id of this.#tools.keys()) this.#sendTool(id);
  }

  #flushText(): void {
    if (this.#text.trim() !== "") this.#assistant({ type: "text", text: this.#text });
    this.#text = "";
  }

  #toolUpdate(update: acp.ToolCallUpdate): void {
    const tool = this.#tools.get(update.toolCallId);
    if (tool && isFilled(update.rawInput)) tool.input = update.rawInput;
    if (isFilled(update.rawInput) || update.status === "completed" || update.status === "failed") {
      this.#sendTool(update.toolCallId);
    }
    if (update.status !== "failed") return;
    this.#emit({
      type: "user",
      session_id: this.#sessionId,
      message: {
        content: [{
          type: "tool_result",
          tool_use_id: update.toolCallId,
          is_error: true,
          content: typeof update.rawOutput === "string"
            ? update.rawOutput
            : JSON.stringify(update.rawOutput ?? update.content ?? ""),
        }],
      },
    });
  }

  #sendTool(id: string): void {
    const tool = this.#tools.get(id);
    if (!tool || tool.sent) return;
    tool.sent = true;
    this.#assistant({ type: "tool_use", id, name: tool.name, input: tool.input });
  }

  #assistant(block: Record<string, unknown>): void {
    this.#emit({
      type: "assistant",
      session_id: this.#sessionId,
      parent_tool_use_id: null,
      message: { content: [block] },
    });
  }
}

function isFilled(input: unknown): boolean {
  return typeof input === "object" && input !== null && Object.keys(input).length > 0;
}

/** Whether a tool name is in a list of tool rules (`Bash`, `Bash(git:*)`, `mcp__x__y`). */
function listed(rules: string[], name: string): boolean {
  return rules.some((rule) => rule.split("(")[0] === name);
}

/**
 * The option to pick for a permission request: allow when the permission mode
 * or the allowed tools allow the tool, and it is neither disallowed nor a
 * refused command; reject otherwise.
 *
 * @param request The agent's request.
 * @param settings The session's settings.
 * @returns The response.
 */
export function permissionAnswer(
  request: acp.RequestPermissionRequest,
  settings: Pick<
    SessionSettings,
    "allowedTools" | "disallowedTools" | "permissionMode" | "refuseCommands"
  >,
): acp.RequestPermissionResponse {
  const name = toolName(request.toolCall);
  const input = (request.toolCall.rawInput ?? {}) as { command?: unknown };
  const command = typeof input.command === "string" ? input.command : "";
  const refused = (settings.refuseCommands ?? []).some((refusal) =>
    command !== "" && new RegExp(refusal.pattern).test(command)
  );
  const edit = request.toolCall.kind === "edit";
  const allow = !refused && !listed(settings.disallowedTools, name) &&
    (settings.permissionMode === "bypassPermissions" || name === COMPLETE_TASK_TOOL ||
      (settings.permissionMode === "acceptEdits" && edit) ||
      listed(settings.allowedTools, name));
  const kinds = allow ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
  const option = request.options.find((candidate) => kinds.includes(candidate.kind));
  return option
    ? { outcome: { outcome: "selected", optionId: option.optionId } }
    : { outcome: { outcome: "cancelled" } };
}
