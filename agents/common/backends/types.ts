/**
 * The agent backend port: runs one agent session and yields its messages.
 * The loop depends on this port only, so agents other than Claude Code can
 * be added as backends.
 *
 * @module
 */

import type { SettingSource } from "../agent_definition.ts";
import type { CompleteTaskCall } from "../completion/types.ts";
import type { AgentMessage } from "../summary.ts";

export type { AgentMessage, CompleteTaskCall };

/** What the agent's stop looks like to a stop hook. */
export interface StopEvent {
  /** True when the agent is already continuing because a stop hook sent it back. */
  stopHookActive: boolean;
  /** The agent's last message. */
  lastAssistantMessage?: string;
  /** Background tasks still running in the session. */
  backgroundTasks: Array<{ id?: string; description?: string; status?: string }>;
}

/** A stop hook's answer: let the agent stop, or send it back with a reason. */
export type StopDecision = { block: false } | { block: true; reason: string };

/** Permission modes a session may run in. */
export type SessionPermissionMode =
  | "default"
  | "acceptEdits"
  | "plan"
  | "bypassPermissions";

/** Everything one agent session needs. */
export interface SessionRequest {
  /** The user prompt. */
  prompt: string;
  /** Text appended to the agent's own system prompt. */
  systemPromptAppend: string;
  /** Working directory of the agent. */
  cwd: string;
  /** Built-in tools the agent has at all; `[]` gives it none (the judge). @default Claude Code's full set */
  tools?: string[];
  /** Tools allowed without asking. */
  allowedTools: string[];
  /** Tools removed from the agent's context. */
  disallowedTools: string[];
  /** Permission mode. */
  permissionMode: SessionPermissionMode;
  /** Model name. */
  model?: string;
  /** Turn cap for the session. */
  maxTurns?: number;
  /** Cost cap for the session in USD. */
  maxBudgetUsd?: number;
  /** Session to resume (the `continue` session mode). */
  resume?: string;
  /** Agent setting sources. */
  settingSources: SettingSource[];
  /** Extra environment for the agent process, over the parent's. */
  env?: Record<string, string>;
  /** Aborts the session. */
  signal: AbortSignal;
  /** Receives the agent process's stderr. */
  stderr?: (text: string) => void;
  /**
   * Offer the agent the complete_task tool; called with each call's input,
   * and its answer is the tool result the agent reads.
   */
  onCompleteTask?: (call: CompleteTaskCall) => Promise<string>;
  /** Called when the agent tries to stop; may send it back. */
  onStop?: (event: StopEvent) => Promise<StopDecision>;
}

/** Runs agent sessions. */
export interface AgentBackend {
  /** Backend name for logs (`claude`). */
  readonly name: string;
  /**
   * Run one session and yield its messages, ending after the result message.
   *
   * @param request The session's prompt and settings.
   * @returns The session's messages.
   */
  session(request: SessionRequest): AsyncIterable<AgentMessage>;
}
