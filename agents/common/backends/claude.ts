/**
 * The Claude Code backend: one session is one `query()` of the Claude Agent
 * SDK, which runs the Claude Code binary it ships.
 *
 * @module
 */

import { z } from "zod";
import { COMPLETE_TASK_TOOL } from "../summary.ts";
import type {
  AgentBackend,
  AgentMessage,
  CompleteTaskCall,
  SessionRequest,
  StopDecision,
  StopEvent,
} from "./types.ts";

type Sdk = typeof import("@anthropic-ai/claude-agent-sdk");

/** The tool description the agent reads. */
const COMPLETE_TASK_DESCRIPTION =
  "Call this to finish the task. Required before you stop. Restate the original request, say what you did, and pick a status: " +
  "success (every part of the request is done and committed), blocked (an obstacle you cannot remove; say what in remaining_work), " +
  "or partial (some parts done; say what is left in remaining_work). With success, finishline verifies the work at once and the " +
  "result tells you whether the checks passed; if they did not, fix the problems and call complete_task again.";

const completeTaskShape = {
  status: z.enum(["success", "blocked", "partial"]).describe("success, blocked or partial"),
  original_request_summary: z.string().describe("Restate what was asked, in your own words"),
  summary: z.string().describe("What you accomplished"),
  remaining_work: z.string().optional().describe("For blocked or partial: what is left, and why"),
  learned: z.array(z.string()).optional().describe("What you learned that would help next time"),
  skills_used: z.array(z.string()).optional().describe("Skills or techniques that helped"),
  new_skills_needed: z.array(z.string()).optional().describe("Skills you wished you had"),
  files_modified: z.array(z.string()).optional().describe("Files you changed"),
  next_steps: z.string().optional().describe("What should happen next"),
};

function completeTaskServer(sdk: Sdk, request: SessionRequest) {
  const onCompleteTask = request.onCompleteTask;
  if (!onCompleteTask) return undefined;
  return sdk.createSdkMcpServer({
    name: "finishline",
    version: "0.1.0",
    alwaysLoad: true,
    tools: [
      sdk.tool("complete_task", COMPLETE_TASK_DESCRIPTION, completeTaskShape, async (input) => {
        const text = await onCompleteTask(input as CompleteTaskCall);
        return { content: [{ type: "text" as const, text }] };
      }),
    ],
  });
}

function stopHook(onStop: (event: StopEvent) => Promise<StopDecision>) {
  return async (input: unknown) => {
    const record = (input ?? {}) as Record<string, unknown>;
    const decision = await onStop({
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

/** Options for {@linkcode ClaudeBackend}. */
export interface ClaudeBackendOptions {
  /** Path to a Claude Code executable; the SDK's bundled one when absent. */
  executable?: string;
}

/**
 * Runs sessions through `query()` of `@anthropic-ai/claude-agent-sdk`. The SDK
 * is imported on first use, so commands that run no agent do not pay for it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ClaudeBackend } from "@finishline/agents";
 *
 * // Nothing is imported or started until the first session.
 * const backend = new ClaudeBackend({ executable: "/usr/local/bin/claude" });
 * assert.equal(backend.name, "claude");
 * ```
 */
export class ClaudeBackend implements AgentBackend {
  /** Always "claude". */
  readonly name = "claude";
  #options: ClaudeBackendOptions;

  /**
   * Create the backend; the SDK is loaded by the first session.
   *
   * @param options Backend settings.
   */
  constructor(options: ClaudeBackendOptions = {}) {
    this.#options = options;
  }

  /**
   * Run one Claude Code session.
   *
   * @param request Prompt and settings.
   * @returns The SDK's messages.
   * @example
   * ```ts ignore
   * // Needs Claude Code and an API key (or a ScriptedModelServer from
   * // @finishline/agents/testing in ANTHROPIC_BASE_URL).
   * import { ClaudeBackend, SummaryBuilder } from "@finishline/agents";
   *
   * const builder = new SummaryBuilder(1);
   * for await (
   *   const message of new ClaudeBackend().session({
   *     prompt: "List the files in this folder",
   *     systemPromptAppend: "",
   *     cwd: Deno.cwd(),
   *     allowedTools: ["Bash"],
   *     disallowedTools: [],
   *     permissionMode: "default",
   *     settingSources: [],
   *     signal: AbortSignal.timeout(120_000),
   *   })
   * ) {
   *   builder.add(message);
   * }
   * console.log(builder.finish(0).assistantResponses.at(-1));
   * ```
   */
  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    const sdk = await import("@anthropic-ai/claude-agent-sdk");
    const extra = completeTaskServer(sdk, request);
    const controller = new AbortController();
    const abort = () => controller.abort(request.signal.reason);
    if (request.signal.aborted) abort();
    request.signal.addEventListener("abort", abort, { once: true });
    try {
      const bypass = request.permissionMode === "bypassPermissions";
      const messages = sdk.query({
        prompt: request.prompt,
        options: {
          abortController: controller,
          cwd: request.cwd,
          tools: request.tools,
          allowedTools: extra
            ? [...request.allowedTools, COMPLETE_TASK_TOOL]
            : request.allowedTools,
          mcpServers: extra ? { finishline: extra } : undefined,
          hooks: request.onStop ? { Stop: [{ hooks: [stopHook(request.onStop)] }] } : undefined,
          disallowedTools: request.disallowedTools,
          permissionMode: request.permissionMode,
          allowDangerouslySkipPermissions: bypass || undefined,
          model: request.model,
          maxTurns: request.maxTurns,
          maxBudgetUsd: request.maxBudgetUsd,
          resume: request.resume,
          settingSources: request.settingSources,
          systemPrompt: {
            type: "preset",
            preset: "claude_code",
            append: request.systemPromptAppend,
          },
          env: { ...Deno.env.toObject(), ...request.env },
          pathToClaudeCodeExecutable: this.#options.executable,
          stderr: request.stderr,
        },
      });
      for await (const message of messages) {
        yield message as unknown as AgentMessage;
      }
    } finally {
      request.signal.removeEventListener("abort", abort);
    }
  }
}
