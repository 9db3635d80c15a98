/**
 * finishline: run a coding agent (Claude Code, through the Claude Agent SDK)
 * in iterations until a pluggable completion handler, backed by evidence,
 * says the work is finished.
 *
 * This entry exports the contracts (completion handlers, iteration
 * summaries, backends), the handler factory and registry, the prompt
 * resolver, the definition loader and the iteration loop, for people who
 * write their own handlers or embed the runner.
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
  ActionsConfig,
  AgentBehavior,
  AgentDefinition,
  BackendName,
  CheckConfig,
  CircuitBreakerConfig,
  CommandCheckConfig,
  CompletionConfig,
  CompletionType,
  CustomCheckConfig,
  DefinitionPermissionMode,
  EmbeddingsConfig,
  FilesCheckConfig,
  FinishConfig,
  GitCheckConfig,
  GitConfig,
  GithubConfig,
  JudgeCheckConfig,
  LearningsConfig,
  LoadedDefinition,
  LoggingConfig,
  ParameterSpec,
  ParameterValidation,
  PlanCheckConfig,
  ProbeConfig,
  PromptsConfig,
  ReproduceMode,
  RetryConfig,
  SettingSource,
  VerifyConfig,
} from "./definition/mod.ts";
export {
  COMPLETION_TYPES,
  DEFAULT_FINISH_MODEL,
  DEFAULT_PROTECTED_GLOBS,
  RUNNER_CONFIG_GLOBS,
} from "./definition/mod.ts";
export type {
  CompletionCriteria,
  CompletionHandler,
  CompletionHandlerFactory,
  HandlerFactoryContext,
  RunOutcome,
} from "./completion/handler_contract.ts";
export type {
  CheckEvidence,
  ChecksEvidence,
  Declaration,
  DetectedAction,
  GitEvidence,
  IterationSummary,
  ReviewedDeclaration,
  TestCounts,
  TokenUsage,
  ToolCall,
  WorkerTestEvidence,
} from "./record/iteration.ts";
export { COMPLETE_TASK_TOOL, type CompleteTaskCall } from "./record/complete_task_call.ts";
export {
  createCompletionHandler,
  type CreateHandlerOptions,
  DEFAULT_MAX_ITERATIONS,
  iterationCap,
} from "./completion/factory.ts";
export {
  getRegisteredHandler,
  registerCompletionHandler,
  registeredTypes,
  unregisterCompletionHandler,
} from "./completion/registry.ts";
export type { CustomHandlerContext } from "./completion/custom.ts";
export type { RunInputs } from "./completion/run_inputs.ts";
export { IterateCompletionHandler } from "./completion/iterate.ts";
export { ManualCompletionHandler } from "./completion/manual.ts";
export { BaseHandler, type HandlerContext } from "./completion/base_handler.ts";
export {
  type AgentListEntry,
  listAgents,
  loadDefinition,
  type LoadDefinitionOptions,
  parseDefinition,
  type ParseDefinitionOptions,
} from "./definition/mod.ts";
export { UsageError } from "./support/errors.ts";
export {
  argsToVariables,
  fillTemplate,
  PromptResolver,
  type PromptResolverOptions,
  type PromptVariables,
  stripFrontMatter,
  toVariableName,
} from "./prompts/resolver.ts";
export { type ActionOptions, extractActions, SummaryBuilder } from "./loop/summary_builder.ts";
export { type AgentMessage, type ApiRetry, emptySummary } from "./record/iteration.ts";
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
export { ClaudeBackend, type ClaudeBackendOptions } from "./backends/claude.ts";
export { AcpBackend, type AcpCommand } from "./backends/acp.ts";
export { AgentSetupError, SessionGoneError } from "./backends/port.ts";
export {
  ACP_PRESETS,
  BACKEND_NAMES,
  type BackendSetting,
  resolveBackend,
} from "./backends/presets.ts";
export { RunLog } from "./support/log.ts";
export {
  isSecretName,
  REDACTED,
  Redactor,
  redactorOfProcess,
  type RedactorOptions,
} from "./support/redact.ts";
export { redactingWriter, writeRedactedFile } from "./support/sinks.ts";
export { redactingBackend } from "./backends/redacting.ts";
export {
  incomplete,
  ok,
  type RunGitEvidence,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  TaskCompletionResult,
  type VerificationRecord,
} from "./checks/checker_contract.ts";
export {
  checkerContext,
  type CheckerContextParts,
  DEFAULT_ASK_SYSTEM,
  modelAdapter,
  tentativeOutputOf,
  toolResults,
} from "./checks/context.ts";
export {
  type AskModelOptions,
  type CheckerSession,
  type ModelAdapter,
  type SessionIteration,
  type SessionToolCall,
  type TentativeOutput,
} from "./checks/checker_contract.ts";
export { type Filesystem, OutsideRepositoryError, RepoFilesystem } from "./checks/filesystem.ts";
export { checkerName, CompositeChecker, type CompositeResult } from "./checks/composite.ts";
export { CommandChecker, type CommandCheckerOptions } from "./checks/command.ts";
export { FilesChecker } from "./checks/files.ts";
export { GitChecker, type GitCheckerOptions } from "./checks/git_checker.ts";
export { latestPlan, PlanChecker, type PlanItem } from "./checks/plan.ts";
export { JudgeChecker, type JudgeCheckerOptions, parseVerdict } from "./checks/judge.ts";
export { buildVerifier, type BuildVerifierOptions, verify } from "./checks/verifier.ts";
export {
  type CheckHint,
  detectChecks,
  type DetectedCheck,
  type Detection,
  type DetectOptions,
  formatDetection,
  type SkippedCandidate,
} from "./checks/detect.ts";
export {
  parseTestReport,
  testCounts,
  type TestReport,
  type TestRunner,
  testsRun,
} from "./checks/test_report.ts";
export {
  CHECK_ENVIRONMENT,
  type CheckRun,
  type CheckVariable,
  describeCheckEnvironment,
  describeRun,
  type RepoCheck,
  runRepoCheck,
} from "./checks/check_run.ts";
export {
  changedProtectedFiles,
  isProtected,
  type ProtectedChange,
  type ProtectOptions,
} from "./checks/protected_files.ts";
export {
  type BaselineResult,
  runInWorktree,
  snapshotCommit,
  snapshotTree,
} from "./checks/worktree_run.ts";
export { RepoChecksChecker, type RepoChecksOptions } from "./checks/repo_checks.ts";
export type { HeldOutTest, Reproduction } from "./checks/reproduction.ts";
export type { ReproductionRecord, VerifierCost } from "./loop/reproduction_plan.ts";
export type { DeclarationReviewer, ReviewAnswer, ReviewRequest } from "./checks/declarations.ts";
export type { IndependentCost } from "./loop/independent_cost.ts";
export { IssueCompletionHandler, type IssueHandlerOptions } from "./completion/issue.ts";
export {
  boardPhase,
  lastReview,
  ProjectCompletionHandler,
  type ProjectHandlerOptions,
  type ProjectPhase,
} from "./completion/project.ts";
export {
  type GhComment,
  type GhFault,
  type GhIssue,
  type GhListedIssue,
  type GhProject,
  type GhProjectItem,
  GitHubCli,
  type GitHubOptions,
  type PullRequestCheck,
  type PullRequestChecks,
  type WaitForChecksOptions,
} from "./github/port.ts";
export {
  type GitFault,
  type GitOptions,
  GitRepo,
  type RepoState,
  type TreeStatus,
} from "./git/repo.ts";
export {
  MISSING_CODE,
  runShell,
  runTool,
  type ShellResult,
  TIMEOUT_CODE,
  type ToolOptions,
  type ToolResult,
} from "./support/process.ts";
export { type LockHolder, RunLock } from "./support/file_lock.ts";
export {
  type FinishRecord,
  type FinishStepData,
  type FinishUsage,
  type FoundLearning,
  type Learning,
  type NewRun,
  type NewSegment,
  type RunSegment,
  type RunStore,
  type SegmentEnd,
  type SkillLifecycle,
  type SkillRecord,
  SqliteStore,
  type StoredIteration,
  type StoredRun,
  type StoreOptions,
  type VectorOptions,
} from "./store/mod.ts";
export {
  createEmbedder,
  type Embedder,
  type EmbeddingPurpose,
  HttpEmbedder,
  type HttpEmbedderOptions,
  LexicalEmbedder,
  type LexicalOptions,
} from "./embeddings/mod.ts";
export {
  type FinishOptions,
  type FinishReport,
  type FinishSettings,
  runFinish,
} from "./finish/workflow.ts";
export {
  EXIT_CODES,
  type PullRequestGate,
  type RunEvent,
  runIterations,
  type RunOptions,
  type RunResult,
  type RunStatus,
  type SessionFaultFacts,
} from "./loop/runner.ts";
export type { ProbeState, ProbeStatus } from "./loop/status_probe.ts";
