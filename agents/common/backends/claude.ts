/**
 * The Claude Code backend: one session is one `query()` of the Claude Agent
 * SDK, which runs the Claude Code binary it ships.
 *
 * @module
 */

import type { AgentBackend, AgentMessage, SessionRequest } from "./types.ts";

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
 * import { ClaudeBackend } from "./claude.ts";
 * const backend = new ClaudeBackend();
 * console.assert(backend.name === "claude");
 * ```
 */
export class ClaudeBackend implements AgentBackend {
  /** Always "claude". */
  readonly name = "claude";
  #options: ClaudeBackendOptions;

  /** @param options Backend settings. */
  constructor(options: ClaudeBackendOptions = {}) {
    this.#options = options;
  }

  /**
   * Run one Claude Code session.
   *
   * @param request Prompt and settings.
   * @returns The SDK's messages.
   */
  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    const { query } = await import("@anthropic-ai/claude-agent-sdk");
    const controller = new AbortController();
    const abort = () => controller.abort(request.signal.reason);
    if (request.signal.aborted) abort();
    request.signal.addEventListener("abort", abort, { once: true });
    try {
      const bypass = request.permissionMode === "bypassPermissions";
      const messages = query({
        prompt: request.prompt,
        options: {
          abortController: controller,
          cwd: request.cwd,
          allowedTools: request.allowedTools,
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
