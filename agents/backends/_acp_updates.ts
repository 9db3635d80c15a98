/**
 * Agent Client Protocol session updates and permission requests, in the
 * runner's terms: updates become Claude Agent SDK shaped messages for the
 * summary builder, and permission requests are answered from the session's
 * allowed tools and permission mode. Private to the backends folder.
 *
 * @module
 */

import type * as acp from "@agentclientprotocol/sdk";
import { COMPLETE_TASK_NAME, COMPLETE_TASK_TOOL } from "../record/complete_task_tool.ts";
import { FINISH_TOOL } from "../record/finish_call.ts";
import type { AgentMessage, SessionSettings } from "./port.ts";

/**
 * The tool name an update names, in Claude Code's terms: Claude's own name
 * when given; else the Claude tool its ACP kind stands for (Codex titles a
 * call with its command, "git status" or "Read a.txt"; opencode's `bash` is
 * `Bash`); else complete_task (or finishline's finish) when the title names it; else the title.
 */
export function toolName(
  call: { title?: string | null; kind?: acp.ToolKind | null; _meta?: unknown },
): string {
  const meta = (call._meta ?? {}) as { claudeCode?: { toolName?: unknown } };
  const claude = meta.claudeCode?.toolName;
  if (typeof claude === "string") {
    return claude.includes(COMPLETE_TASK_NAME) ? COMPLETE_TASK_TOOL : finishOr(claude);
  }
  // By kind first: a shell command that mentions complete_task is still a shell command.
  const byKind = KIND_TOOLS[call.kind ?? ""]?.[0];
  if (byKind) return byKind;
  const title = call.title ?? "tool";
  return title.includes(COMPLETE_TASK_NAME) ? COMPLETE_TASK_TOOL : finishOr(title);
}

/** The finish tool when a name is finishline's (`finishline_finish`, `finishline/finish`), else the name. */
function finishOr(name: string): string {
  return /finishline[\W_]{1,2}finish\b/.test(name) ? FINISH_TOOL : name;
}

/**
 * Turns session updates into SDK shaped messages. Text chunks are joined into
 * one text block until something else comes (so a keyword split over chunks
 * is still found); a tool call is reported once its input is known.
 */
export class UpdateTranslator {
  #text = "";
  readonly #tools = new Map<string, Tool>();
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
      this.#tools.set(update.toolCallId, newTool(update));
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
    // Gemini CLI sends no tool_call for a call it asked permission for: its first update is the end.
    if (!this.#tools.has(update.toolCallId)) this.#tools.set(update.toolCallId, newTool(update));
    const tool = this.#tools.get(update.toolCallId)!;
    if (isFilled(update.rawInput)) tool.input = update.rawInput;
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
    // Gemini CLI sends no rawInput; its title for a shell call is the command.
    const input = !isFilled(tool.input) && tool.kind === "execute" && tool.title
      ? { command: tool.title }
      : tool.input;
    this.#assistant({ type: "tool_use", id, name: tool.name, input });
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

/** A tool call as the translator keeps it until it is reported. */
interface Tool {
  name: string;
  input: unknown;
  kind?: string | null;
  title?: string | null;
  sent: boolean;
}

function newTool(update: acp.ToolCall | acp.ToolCallUpdate): Tool {
  return {
    name: toolName(update),
    input: update.rawInput ?? {},
    kind: update.kind,
    title: update.title,
    sent: false,
  };
}

function isFilled(input: unknown): boolean {
  return typeof input === "object" && input !== null && Object.keys(input).length > 0;
}

/** Whether a tool name is in a list of tool rules (`Bash`, `Bash(git:*)`, `mcp__x__y`). */
function listed(rules: string[], names: string[]): boolean {
  return rules.some((rule) => names.includes(rule.split("(")[0]));
}

/**
 * The Claude Code tool names that stand for an ACP tool kind. Definitions name
 * Claude's tools; other agents name theirs as they like (opencode `bash`,
 * Codex the command itself), but every ACP agent gives a call its kind.
 */
const KIND_TOOLS: Readonly<Record<string, readonly string[]>> = {
  execute: ["Bash"],
  edit: ["Edit", "Write", "MultiEdit", "NotebookEdit"],
  delete: ["Edit", "Write"],
  move: ["Edit", "Write"],
  read: ["Read"],
  search: ["Grep", "Glob"],
  fetch: ["WebFetch", "WebSearch"],
};

/**
 * The command a tool call runs: `command` or `cmd` of its raw input, a string
 * or an argument list; else, for a shell call without raw input (Gemini CLI
 * sends none), its title, which is the command.
 */
function commandOf(call: acp.ToolCallUpdate): string {
  const input = (call.rawInput ?? {}) as { command?: unknown; cmd?: unknown };
  const command = input.command ?? input.cmd;
  if (typeof command === "string") return command;
  if (Array.isArray(command)) return command.map(String).join(" ");
  return call.kind === "execute" && !isFilled(call.rawInput) ? call.title ?? "" : "";
}

/**
 * The option to pick for a permission request: allow when the permission mode
 * or the allowed tools allow the tool, and it is neither disallowed nor a
 * refused command; reject otherwise. A tool is matched by its own name and by
 * the Claude Code tools its ACP kind stands for (`execute` is `Bash`, `edit`
 * is `Edit` and `Write`, ...), so `"allowedTools": ["Bash"]` lets opencode's
 * `bash` run and `"disallowedTools": ["Bash"]` stops Codex's commands.
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
  const names = [name, ...(KIND_TOOLS[request.toolCall.kind ?? ""] ?? [])];
  const command = commandOf(request.toolCall);
  const refused = (settings.refuseCommands ?? []).some((refusal) =>
    command !== "" && new RegExp(refusal.pattern).test(command)
  );
  const edit = ["edit", "delete", "move"].includes(request.toolCall.kind ?? "");
  const allow = !refused && !listed(settings.disallowedTools, names) &&
    (settings.permissionMode === "bypassPermissions" || name === COMPLETE_TASK_TOOL ||
      name === FINISH_TOOL ||
      (settings.permissionMode === "acceptEdits" && edit) ||
      listed(settings.allowedTools, names));
  const kinds = allow ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
  // Once before always: an "always" answer would let later calls (Gemini CLI: later commands) skip
  // the refusals.
  const option = kinds.map((kind) => request.options.find((candidate) => candidate.kind === kind))
    .find((candidate) => candidate !== undefined);
  return option
    ? { outcome: { outcome: "selected", optionId: option.optionId } }
    : { outcome: { outcome: "cancelled" } };
}

/**
 * The tokens of a prompt turn: the response's `usage`; else Gemini CLI's
 * `_meta.quota.token_count` (Gemini CLI 0.61 reports tokens only there).
 *
 * @param response The `session/prompt` response.
 * @returns Input, output and cache-read tokens (0 when not reported).
 */
export function promptUsage(
  response: acp.PromptResponse,
): { input: number; output: number; cacheRead: number } {
  if (response.usage) {
    return {
      input: response.usage.inputTokens,
      output: response.usage.outputTokens,
      cacheRead: response.usage.cachedReadTokens ?? 0,
    };
  }
  const quota = (response._meta?.quota ?? {}) as {
    token_count?: { input_tokens?: unknown; output_tokens?: unknown };
  };
  const count = quota.token_count ?? {};
  const number = (value: unknown) => typeof value === "number" ? value : 0;
  return { input: number(count.input_tokens), output: number(count.output_tokens), cacheRead: 0 };
}
