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
} from "./common/definition/mod.ts";
export {
  COMPLETION_TYPES,
  DEFAULT_FINISH_MODEL,
  DEFAULT_PROTECTED_GLOBS,
  RUNNER_CONFIG_GLOBS,
} from "./common/definition/mod.ts";
export type {
  CheckEvidence,
  ChecksEvidence,
  CompletionCriteria,
  CompletionHandler,
  CompletionHandlerFactory,
  Declaration,
  DetectedAction,
  GitEvidence,
  HandlerFactoryContext,
  IterationSummary,
  ReviewedDeclaration,
  RunOutcome,
  TestCounts,
  TokenUsage,
  ToolCall,
  WorkerTestEvidence,
} from "./common/completion/types.ts";
export { COMPLETE_TASK_TOOL, type CompleteTaskCall } from "./common/complete_task_call.ts";
export {
  createCompletionHandler,
  type CreateHandlerOptions,
  DEFAULT_MAX_ITERATIONS,
  iterationCap,
} from "./common/completion/factory.ts";
export {
  getRegisteredHandler,
  registerCompletionHandler,
  registeredTypes,
  unregisterCompletionHandler,
} from "./common/completion/registry.ts";
export type { CustomHandlerContext } from "./common/completion/custom.ts";
export type { RunInputs } from "./common/completion/run_inputs.ts";
export { IterateCompletionHandler } from "./common/completion/iterate.ts";
export { ManualCompletionHandler } from "./common/completion/manual.ts";
export { BaseHandler, type HandlerContext } from "./common/completion/base_handler.ts";
export {
  type AgentListEntry,
  listAgents,
  loadDefinition,
  type LoadDefinitionOptions,
  parseDefinition,
  type ParseDefinitionOptions,
} from "./common/definition/mod.ts";
export { UsageError } from "./common/errors.ts";
export {
  argsToVariables,
  fillTemplate,
  PromptResolver,
  type PromptResolverOptions,
  type PromptVariables,
  stripFrontMatter,
  toVariableName,
} from "./common/prompt_resolver.ts";
export {
  type ActionOptions,
  type AgentMessage,
  type ApiRetry,
  emptySummary,
  extractActions,
  SummaryBuilder,
} from "./common/summary.ts";
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
} from "./common/backends/types.ts";
export { ClaudeBackend, type ClaudeBackendOptions } from "./common/backends/claude.ts";
export { AcpBackend, type AcpCommand } from "./common/backends/acp.ts";
export { AgentSetupError, SessionGoneError } from "./common/backends/types.ts";
export {
  ACP_PRESETS,
  BACKEND_NAMES,
  type BackendSetting,
  resolveBackend,
} from "./common/backends/presets.ts";
export { RunLog } from "./common/log.ts";
export {
  isSecretName,
  REDACTED,
  Redactor,
  redactorOfProcess,
  type RedactorOptions,
} from "./common/redact.ts";
export { redactingWriter, writeRedactedFile } from "./common/sinks.ts";
export { redactingBackend } from "./common/backends/redacting.ts";
export {
  incomplete,
  ok,
  type RunGitEvidence,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  TaskCompletionResult,
  type VerificationRecord,
} from "./common/checks/types.ts";
export {
  type AskModelOptions,
  checkerContext,
  type CheckerContextParts,
  type CheckerSession,
  DEFAULT_ASK_SYSTEM,
  type ModelAdapter,
  modelAdapter,
  type SessionIteration,
  type SessionToolCall,
  type TentativeOutput,
  tentativeOutputOf,
  toolResults,
} from "./common/checks/context.ts";
export {
  type Filesystem,
  OutsideRepositoryError,
  RepoFilesystem,
} from "./common/checks/filesystem.ts";
export { checkerName, CompositeChecker, type CompositeResult } from "./common/checks/composite.ts";
export { CommandChecker, type CommandCheckerOptions } from "./common/checks/command.ts";
export { FilesChecker } from "./common/checks/files.ts";
export { GitChecker, type GitCheckerOptions } from "./common/checks/git.ts";
export { latestPlan, PlanChecker, type PlanItem } from "./common/checks/plan.ts";
export { JudgeChecker, type JudgeCheckerOptions, parseVerdict } from "./common/checks/judge.ts";
export { buildVerifier, type BuildVerifierOptions, verify } from "./common/checks/verifier.ts";
export {
  type CheckHint,
  detectChecks,
  type DetectedCheck,
  type Detection,
  type DetectOptions,
  formatDetection,
  type SkippedCandidate,
} from "./common/checks/detect.ts";
export {
  parseTestReport,
  testCounts,
  type TestReport,
  type TestRunner,
  testsRun,
} from "./common/checks/test_report.ts";
export {
  CHECK_ENVIRONMENT,
  type CheckRun,
  type CheckVariable,
  describeCheckEnvironment,
  describeRun,
  type RepoCheck,
  runRepoCheck,
} from "./common/checks/check_run.ts";
export {
  changedProtectedFiles,
  isProtected,
  type ProtectedChange,
  type ProtectOptions,
} from "./common/checks/protected_files.ts";
export {
  type BaselineResult,
  runInWorktree,
  snapshotCommit,
  snapshotTree,
} from "./common/checks/worktree_run.ts";
export { RepoChecksChecker, type RepoChecksOptions } from "./common/checks/repo_checks.ts";
export type { HeldOutTest, Reproduction } from "./common/checks/reproduction.ts";
export type { ReproductionRecord, VerifierCost } from "./iterator/loop/reproduce.ts";
export type {
  DeclarationReviewer,
  ReviewAnswer,
  ReviewRequest,
} from "./common/checks/declarations.ts";
export type { IndependentCost } from "./iterator/loop/independent.ts";
export { IssueCompletionHandler, type IssueHandlerOptions } from "./common/completion/issue.ts";
export {
  boardPhase,
  lastReview,
  ProjectCompletionHandler,
  type ProjectHandlerOptions,
  type ProjectPhase,
} from "./common/completion/project.ts";
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
} from "./common/github.ts";
export {
  type GitFault,
  type GitOptions,
  GitRepo,
  type RepoState,
  type TreeStatus,
} from "./common/git.ts";
export {
  MISSING_CODE,
  runShell,
  runTool,
  type ShellResult,
  TIMEOUT_CODE,
  type ToolOptions,
  type ToolResult,
} from "./common/process.ts";
export { type LockHolder, RunLock } from "./common/run_lock.ts";
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
} from "./common/store/mod.ts";
export {
  createEmbedder,
  type Embedder,
  type EmbeddingPurpose,
  HttpEmbedder,
  type HttpEmbedderOptions,
  LexicalEmbedder,
  type LexicalOptions,
} from "./common/embeddings/mod.ts";
export {
  type FinishOptions,
  type FinishReport,
  type FinishSettings,
  runFinish,
} from "./iterator/finish.ts";
export {
  EXIT_CODES,
  type PullRequestGate,
  type RunEvent,
  runIterations,
  type RunOptions,
  type RunResult,
  type RunStatus,
  type SessionFaultFacts,
} from "./iterator/runner.ts";
export type { ProbeState, ProbeStatus } from "./iterator/status_probe.ts";
