/**
 * The agent backend port: runs one agent session and yields its messages.
 * The loop depends on this port only, so agents other than Claude Code can
 * be added as backends.
 *
 * @module
 */

import type { NetworkSetting, SandboxMode, SettingSource } from "../definition/definition_types.ts";
import type { CompleteTaskCall } from "../record/complete_task_call.ts";
import type { FinishToolCall } from "../record/finish_call.ts";
import type { AgentMessage } from "../record/iteration.ts";

export type { AgentMessage, CompleteTaskCall, FinishToolCall };

/**
 * A fault of the agent's set-up that no retry fixes (its command is missing,
 * it does not offer the configured model): a backend throws it from
 * `session`, and the run ends at once with its message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AgentSetupError } from "./port.ts";
 *
 * const error = new AgentSetupError('cannot start "codex-acp": install it');
 * assert.equal(error.name, "AgentSetupError");
 * ```
 */
export class AgentSetupError extends Error {
  /** Always `AgentSetupError`. */
  override name = "AgentSetupError";
}

/**
 * The session a request asked to resume is gone (another machine, a cleared
 * history, an agent that cannot reopen sessions): a backend throws it from
 * `session`, and the runner starts a new session at once, whose prompt
 * carries what happened so far.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionGoneError } from "./port.ts";
 *
 * const error = new SessionGoneError("session s-1 is gone");
 * assert.equal(error.name, "SessionGoneError");
 * ```
 */
export class SessionGoneError extends Error {
  /** Always `SessionGoneError`. */
  override name = "SessionGoneError";
}

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

/** A shell command the agent may not run, and what it is told instead. */
export interface CommandRefusal {
  /** Regular expression (source) matched against the Bash tool's command. */
  pattern: string;
  /** What the agent reads instead of the command's output. */
  reason: string;
}

/** Everything one agent session needs. */
export interface SessionRequest {
  /** The user prompt. */
  prompt: string;
  /** Text appended to the agent's own system prompt. */
  systemPromptAppend: string;
  /**
   * Replaces the agent's own system prompt (then `systemPromptAppend` is
   * unused): for tool-less questions, which need none of it.
   */
  systemPrompt?: string;
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
  /** Bash commands refused before they run (a PreToolUse hook). */
  refuseCommands?: CommandRefusal[];
  /**
   * Run the agent process in the OS sandbox (its checkout, a private home
   * and /tmp): when one can be had, always, or never. @default "auto"
   */
  sandbox?: SandboxMode;
  /** What a sandboxed session reaches of the network (`verify.network`). @default "model" */
  network?: NetworkSetting;
  /** Aborts the session. */
  signal: AbortSignal;
  /** Receives the agent process's stderr. */
  stderr?: (text: string) => void;
  /**
   * Called when the session took the process warmed for it
   * ({@linkcode AgentBackend.warm}), before its prompt is sent: the moment to
   * warm the next session's process, whose start-up then overlaps all of this
   * session. Not called when the session starts its own process.
   */
  onWarmTaken?: () => void;
  /**
   * Keep the process when the session ends with a successful result: the
   * next session with the same settings and no `resume` then runs in it as a
   * new conversation (Claude Code's `/clear`: a new session id, the folder's
   * git status and `CLAUDE.md` read again, the shell back in `cwd`), with no
   * process start. A backend without that ignores it. @default false
   */
  keep?: boolean;
  /**
   * Offer the agent the complete_task tool; called with each call's input,
   * and its answer is the tool result the agent reads.
   */
  onCompleteTask?: (call: CompleteTaskCall) => Promise<string>;
  /**
   * Offer the agent the finish tool too (next to complete_task); called with
   * each call's input, and its answer (JSON) is the tool result.
   *
   * @ignore finishline's own tool, wired by the loop: a backend that leaves it out offers none.
   */
  onFinish?: (call: FinishToolCall) => Promise<string>;
  /** Called when the agent tries to stop; may send it back. */
  onStop?: (event: StopEvent) => Promise<StopDecision>;
}

/** A session's settings: everything but the prompt, the callbacks and the signal. */
export type SessionSettings = Omit<
  SessionRequest,
  "prompt" | "onCompleteTask" | "onFinish" | "onStop" | "signal"
>;

/**
 * Settings of an agent process started ahead of its prompt: a warm process
 * ({@linkcode AgentBackend.warm}) or a conversation. The callbacks come later,
 * with each prompt, so here it only says which of them the process offers.
 */
export interface ProcessSettings extends SessionSettings {
  /** Offer the complete_task tool. */
  completeTask: boolean;
  /** Offer the finish tool (with complete_task). @default false */
  finish?: boolean;
  /** Install the stop hook. */
  stopHook: boolean;
}

/** One prompt sent into a conversation, with its own callbacks and abort signal. */
export type ConversationTurn = Pick<
  SessionRequest,
  "prompt" | "onCompleteTask" | "onFinish" | "onStop" | "signal"
>;

/**
 * One agent process that takes prompt after prompt in the same session (the
 * `continue` session mode): no process start, no transcript reload.
 */
export interface AgentConversation {
  /** The session id, once the agent has reported it. */
  readonly sessionId: string | undefined;
  /**
   * Send a prompt and yield the messages it causes, ending after its result
   * message. The result's `total_cost_usd` is this turn's cost, not the
   * process's running total. Throws when the process has ended; an aborted
   * turn ends the process.
   *
   * @param turn The prompt, its callbacks and its abort signal.
   * @returns The turn's messages.
   */
  send(turn: ConversationTurn): AsyncIterable<AgentMessage>;
  /**
   * End the conversation: the process finishes what it has and exits.
   *
   * @returns Resolves once it has exited (or was killed after a grace period).
   */
  close(): Promise<void>;
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
  /**
   * Start the process of a later new session now, so that its start-up
   * overlaps other work. The next {@linkcode session} call whose settings
   * it can serve uses it; a session that resumes never does.
   *
   * @param settings The later session's settings.
   */
  warm?(settings: ProcessSettings): void;
  /**
   * Open a conversation: one process for many prompts.
   *
   * @param settings The process's settings; `resume` continues a recorded session.
   * @returns The conversation; its process starts at once and waits for the first prompt.
   */
  conversation?(settings: ProcessSettings): AgentConversation;
  /**
   * Stop warm processes and wait for the processes of finished sessions to
   * exit. Sessions can still be run afterwards.
   *
   * @returns Resolves once they are gone.
   */
  release?(): Promise<void>;
}
