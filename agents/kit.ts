/**
 * The kit for writing completion handlers and checkers: the contracts as
 * types, the handler registry, the checker result helpers and an in-memory
 * filesystem for tests.
 *
 * It imports no npm package, so a project that only writes a handler or a
 * checker downloads finishline's own source for it (about 210 KB), not the
 * Claude Agent SDK and its binaries. Everything here is also exported by the
 * main entry, `@finishline/agents`, or by `@finishline/agents/testing`.
 *
 * @example A checker, and a test of it on an in-memory repository
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   InMemoryFilesystem,
 *   type TaskCompletionContext,
 *   TaskCompletionResult,
 * } from "@finishline/agents/kit";
 *
 * function changelogChecker(context: Pick<TaskCompletionContext, "filesystem">) {
 *   return context.filesystem?.exists("CHANGELOG.md")
 *     ? TaskCompletionResult.ok("CHANGELOG.md is there.")
 *     : TaskCompletionResult.incomplete("Add an entry to CHANGELOG.md.");
 * }
 *
 * const empty = new InMemoryFilesystem({ "src/main.ts": "" });
 * assert.equal(changelogChecker({ filesystem: empty }).complete, false);
 * const done = new InMemoryFilesystem({ "CHANGELOG.md": "## 1.1\n" });
 * assert.equal(changelogChecker({ filesystem: done }).complete, true);
 * ```
 *
 * @module
 */

export type {
  AgentDefinition,
  CompleteTaskCall,
  CompletionCriteria,
  CompletionHandler,
  CompletionHandlerFactory,
  CompletionType,
  HandlerFactory,
  HandlerFactoryContext,
  RunOutcome,
} from "./completion/handler_contract.ts";
export type {
  ChangeProof,
  CheckEvidence,
  ChecksEvidence,
  Declaration,
  DetectedAction,
  FileProof,
  GitEvidence,
  IterationSummary,
  MutantTally,
  ReviewedDeclaration,
  SurvivingMutant,
  TestCounts,
  TokenUsage,
  ToolCall,
  WorkerTestEvidence,
} from "./record/iteration.ts";
export type { CustomHandlerContext } from "./completion/custom.ts";
export {
  getRegisteredHandler,
  registerCompletionHandler,
  unregisterCompletionHandler,
} from "./completion/registry.ts";
export { COMPLETE_TASK_TOOL } from "./record/complete_task_call.ts";
export {
  incomplete,
  ok,
  type RunGitEvidence,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  TaskCompletionResult,
  type VerificationRecord,
} from "./checks/checker_contract.ts";
export type {
  AskModelOptions,
  CheckerSession,
  ModelAdapter,
  SessionIteration,
  SessionToolCall,
  TentativeOutput,
} from "./checks/checker_contract.ts";
export { type Filesystem, OutsideRepositoryError } from "./checks/filesystem.ts";
export { InMemoryFilesystem } from "./testing/in_memory_filesystem.ts";
export { toolResults } from "./checks/context.ts";
export { latestPlan, PlanChecker, type PlanItem, type PlanType } from "./checks/plan.ts";
export { CompositeChecker, type CompositeResult } from "./checks/composite.ts";
export { parseTestReport, type TestReport, type TestRunner } from "./evidence/run/test_report.ts";
export type { GitRepo, RepoState, TreeStatus } from "./git/repo.ts";
