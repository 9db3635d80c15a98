/**
 * finishline: run a coding agent (Claude Code, through the Claude Agent SDK)
 * in iterations until a pluggable completion handler, backed by evidence,
 * says the work is finished.
 *
 * This entry is the public contract, for people who write their own
 * handlers and checkers or embed the runner: the completion handler contract
 * and the iteration record it reads, the handler factory and registry, the
 * checker contract, definition loading, the prompt resolver, the iteration
 * loop (`runIterations`) and the agent backend port. Everything else is finishline's own plumbing, importable
 * inside the repository only, so that it can change without breaking you.
 * `@finishline/agents/kit` holds the handler and checker contracts alone,
 * with no npm package in its graph; `@finishline/agents/testing` the kit for
 * testing agents offline.
 *
 * @example Build a handler from a definition and ask it whether an iteration finished the work
 * ```ts
 * import assert from "node:assert/strict";
 * import { createCompletionHandler, emptySummary, parseDefinition } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   `{ "name": "demo", "behavior": { "completionType": "manual",
 *      "completionConfig": { "completionKeyword": "DONE" } } }`,
 *   { displayPath: "demo/agent.json" },
 * );
 * const handler = await createCompletionHandler(definition, {}, {
 *   agentDir: new URL("file:///nonexistent/"),
 * });
 * assert.equal(handler.type, "manual");
 * const summary = { ...emptySummary(1), assistantResponses: ["Tests pass. DONE"] };
 * assert.equal(await handler.isComplete(summary), true);
 * ```
 *
 * @module
 */

export type {
  CompletionCriteria,
  CompletionHandler,
  CompletionHandlerFactory,
  HandlerFactory,
  HandlerFactoryContext,
  RunOutcome,
} from "./completion/handler_contract.ts";
export { type AgentMessage, emptySummary, type IterationSummary } from "./record/iteration.ts";
export { COMPLETE_TASK_TOOL, type CompleteTaskCall } from "./record/complete_task_call.ts";
export { createCompletionHandler, type CreateHandlerOptions } from "./completion/factory.ts";
export {
  getRegisteredHandler,
  registerCompletionHandler,
  unregisterCompletionHandler,
} from "./completion/registry.ts";
export { IterateCompletionHandler } from "./completion/iterate.ts";
export { ManualCompletionHandler } from "./completion/manual.ts";
export { BaseHandler, type HandlerContext } from "./completion/base_handler.ts";
export {
  type CheckerSession,
  incomplete,
  type ModelAdapter,
  ok,
  type SessionToolCall,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  TaskCompletionResult,
  type TentativeOutput,
} from "./checks/checker_contract.ts";
export { type Filesystem, OutsideRepositoryError } from "./checks/filesystem.ts";
export { toolResults } from "./checks/context.ts";
export { latestPlan, PlanChecker } from "./checks/plan.ts";
export { CompositeChecker } from "./checks/composite.ts";
export { parseTestReport } from "./evidence/run/test_report.ts";
export {
  type AgentDefinition,
  listAgents,
  loadDefinition,
  type LoadedDefinition,
  parseDefinition,
} from "./definition/mod.ts";
export { UsageError } from "./support/errors.ts";
export { fillTemplate, PromptResolver, type PromptVariables } from "./prompts/resolver.ts";
export {
  EXIT_CODES,
  runIterations,
  type RunOptions,
  type RunResult,
  type RunStatus,
} from "./loop/runner.ts";
export type {
  AgentBackend,
  AgentConversation,
  CommandRefusal,
  ConversationTurn,
  ProcessSettings,
  SessionPermissionMode,
  SessionRequest,
  SessionSettings,
  StopDecision,
  StopEvent,
} from "./backends/port.ts";
export { ClaudeBackend } from "./backends/claude.ts";
export { AcpBackend } from "./backends/acp.ts";
