/**
 * What a Claude Code process is given besides its settings: the SDK's types,
 * the in-process complete_task server, the Stop hook and the PreToolUse hook
 * that refuses commands, all routed to the callbacks of the current prompt.
 * Private to the backends folder.
 *
 * @module
 */

import {
  COMPLETE_TASK_DESCRIPTION,
  COMPLETE_TASK_NAME,
  COMPLETE_TASK_NOT_NOW,
  COMPLETE_TASK_SERVER,
  COMPLETE_TASK_SHAPE,
} from "../record/complete_task_tool.ts";
import {
  FINISH_DESCRIPTION,
  FINISH_NAME,
  FINISH_NOT_NOW,
  FINISH_SHAPE,
} from "../record/finish_tool.ts";
import type {
  CommandRefusal,
  CompleteTaskCall,
  FinishToolCall,
  ProcessSettings,
  StopDecision,
  StopEvent,
} from "./port.ts";
import { VERSION } from "../support/version.ts";

// The SDK's `core` entry: the same query() without the 1.4 MB bundle of its
// dependencies, so it imports in about 120 ms instead of 210 ms.
export type Sdk = typeof import("@anthropic-ai/claude-agent-sdk/core");
export type Query = ReturnType<Sdk["query"]>;
export type SpareProcess = Awaited<ReturnType<Sdk["prewarm"]>>;
export type SdkOptions = NonNullable<Parameters<Sdk["query"]>[0]["options"]>;
export type SdkUserMessage =
  Extract<Parameters<Sdk["query"]>[0]["prompt"], AsyncIterable<unknown>> extends
    AsyncIterable<infer T> ? T : never;

/**
 * Where a process's complete_task calls and stop events go. A process started
 * ahead of its prompt (warm, or a conversation) gets the callbacks of each
 * prompt as it comes.
 */
export interface Routes {
  onCompleteTask?: (call: CompleteTaskCall) => Promise<string>;
  onFinish?: (call: FinishToolCall) => Promise<string>;
  onStop?: (event: StopEvent) => Promise<StopDecision>;
}

/** How long a finished session's process gets to exit before it is killed. */
export const EXIT_GRACE_MS = 10_000;

/** An in-process MCP server of the SDK. */
export type McpServer = ReturnType<Sdk["createSdkMcpServer"]>;

/**
 * The in-process MCP server that offers complete_task (and the finish tool),
 * answering each call through the current prompt's callback.
 *
 * @param sdk The loaded SDK.
 * @param routes Where calls go.
 * @param finish Offer the finish tool too.
 * @returns The server, always loaded (never deferred behind ToolSearch).
 */
export function completeTaskServer(sdk: Sdk, routes: Routes, finish = false): McpServer {
  const finishTool = sdk.tool(FINISH_NAME, FINISH_DESCRIPTION, FINISH_SHAPE, async (input) => {
    const text = routes.onFinish
      ? await routes.onFinish(input as unknown as FinishToolCall)
      : FINISH_NOT_NOW;
    return { content: [{ type: "text" as const, text }] };
  });
  return sdk.createSdkMcpServer({
    name: COMPLETE_TASK_SERVER,
    version: VERSION,
    alwaysLoad: true,
    tools: [
      sdk.tool(
        COMPLETE_TASK_NAME,
        COMPLETE_TASK_DESCRIPTION,
        COMPLETE_TASK_SHAPE,
        async (input) => {
          const text = routes.onCompleteTask
            ? await routes.onCompleteTask(input as unknown as CompleteTaskCall)
            : COMPLETE_TASK_NOT_NOW;
          return { content: [{ type: "text" as const, text }] };
        },
      ),
      ...(finish ? [finishTool] : []),
    ],
  });
}

function stopHook(routes: Routes) {
  return async (input: unknown) => {
    if (!routes.onStop) return {};
    const record = (input ?? {}) as Record<string, unknown>;
    const decision = await routes.onStop({
      stopHookActive: record.stop_hook_active === true,
      lastAssistantMessage: typeof record.last_assistant_message === "string"
        ? record.last_assistant_message
        : undefined,
      backgroundTasks: Array.isArray(record.background_tasks)
        ? record.background_tasks as StopEvent["backgroundTasks"]
        : [],
    });
    return decision.block ? { decision: "block" as const, reason: decision.reason } : {};
  };
}

/**
 * A PreToolUse hook that refuses Bash commands matching a refusal's pattern;
 * the agent reads the reason as the tool's error.
 */
function refusalHook(refusals: CommandRefusal[]) {
  const compiled = refusals.map((refusal) => ({
    pattern: new RegExp(refusal.pattern),
    reason: refusal.reason,
  }));
  return (input: unknown) => {
    const record = (input ?? {}) as Record<string, unknown>;
    const toolInput = (record.tool_input ?? {}) as Record<string, unknown>;
    const command = typeof toolInput.command === "string" ? toolInput.command : "";
    const refused = compiled.find((refusal) => refusal.pattern.test(command));
    if (!refused) return Promise.resolve({});
    return Promise.resolve({
      hookSpecificOutput: {
        hookEventName: "PreToolUse" as const,
        permissionDecision: "deny" as const,
        permissionDecisionReason: refused.reason,
      },
    });
  };
}

/**
 * The hooks of a process: the Stop hook and the command refusals.
 *
 * @param settings The process's settings.
 * @param routes Where stop events go.
 * @returns The SDK's hooks option.
 */
export function sessionHooks(settings: ProcessSettings, routes: Routes): SdkOptions["hooks"] {
  const hooks: NonNullable<SdkOptions["hooks"]> = {};
  if (settings.stopHook) hooks.Stop = [{ hooks: [stopHook(routes)] }];
  if (settings.refuseCommands?.length) {
    hooks.PreToolUse = [{ matcher: "Bash", hooks: [refusalHook(settings.refuseCommands)] }];
  }
  return Object.keys(hooks).length > 0 ? hooks : undefined;
}
