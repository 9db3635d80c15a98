/**
 * Run the real Claude Code binary offline, against a scripted model.
 *
 * {@linkcode ScriptedModelServer} is a local server that speaks the Anthropic
 * Messages API (streaming SSE included) and answers each Claude Code session from a
 * script of turns: text, tool uses (which Claude Code really runs), function steps
 * that look at the request, and faults. Point the Agent SDK's child process at it with
 * {@linkcode ScriptedModelServer.env}, then assert on what happened on disk and on the
 * recorded requests.
 *
 * Only main-loop requests advance a session's script; subagents, prompt suggestions,
 * prompt hooks and other side requests get a short neutral reply (see
 * {@linkcode isSideRequest}). A session resumed with the SDK's `resume` option keeps
 * its session id, so its script continues where it stopped.
 *
 * {@linkcode ScriptedResponsesServer} answers from the same scripts over the OpenAI
 * Responses API and Chat Completions API, for agents such as Codex (a custom model
 * provider whose `base_url` is `${server.url}/v1`), and {@linkcode ScriptedGeminiServer}
 * over the Gemini API, for Gemini CLI (`GOOGLE_GEMINI_BASE_URL` set to `server.url`).
 *
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { query } from "@anthropic-ai/claude-agent-sdk";
 * import { ScriptedModelServer, textTurn, toolTurn } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[toolTurn("Bash", { command: "echo hi > out.txt" }), textTurn("Wrote out.txt.")]],
 * });
 * const home = await Deno.makeTempDir();
 * const cwd = await Deno.makeTempDir();
 * try {
 *   for await (
 *     const _message of query({
 *       prompt: "Write out.txt",
 *       options: {
 *         cwd,
 *         env: { ...Deno.env.toObject(), ...server.env(home) },
 *         permissionMode: "default",
 *         allowedTools: ["Bash"],
 *         settingSources: [],
 *       },
 *     })
 *   ) {}
 *   assert.equal(await Deno.readTextFile(`${cwd}/out.txt`), "hi\n");
 * } finally {
 *   await Deno.remove(home, { recursive: true });
 *   await Deno.remove(cwd, { recursive: true });
 * }
 * ```
 *
 * @module
 */

export {
  type HangFault,
  type HttpFault,
  type MalformedFault,
  type ResetFault,
  type ScriptedFault,
} from "./faults.ts";
export {
  type RecordedRequest,
  type ScriptedToolUse,
  type ScriptedTurn,
  type ScriptedUsage,
  type ScriptStep,
  type SessionContext,
  type SessionScript,
  textTurn,
  toolTurn,
  type TurnContext,
} from "./script.ts";
export { ScriptedModelServer, type ScriptedServerOptions } from "./scripted_server.ts";
export {
  ScriptedResponsesServer,
  type ScriptedResponsesServerOptions,
} from "./scripted_responses_server.ts";
export {
  ScriptedGeminiServer,
  type ScriptedGeminiServerOptions,
} from "./scripted_gemini_server.ts";
export { scriptsByPrompt } from "./prompt_scripts.ts";
export { isSideRequest } from "./side_requests.ts";
export {
  acceptDeclarations,
  roleOf,
  roleScript,
  type RoleScripts,
  type SessionRole,
} from "./roles.ts";
export { type Filesystem, InMemoryFilesystem } from "./in_memory_filesystem.ts";
export { checkerTestContext } from "./checker_context.ts";
export { mockPromptResolver, mockSummary } from "./seed_doubles.ts";
export {
  projectItemsReply,
  type SampleHandlerOptions,
  sampleIssue,
  sampleIssueHandler,
  type SampleIssueHandlerOptions,
  sampleProject,
  sampleProjectHandler,
  type SampleProjectHandlerOptions,
  sampleProjectItems,
  type StandInGh,
  standInGh,
  type StandInPortOptions,
  type StandInReply,
} from "./stand_ins.ts";
// The types the stand-ins take and give: the GitHub port's and the handlers'.
export type {
  GhComment,
  GhFault,
  GhIssue,
  GhListedIssue,
  GhProject,
  GhProjectItem,
  GitHubCli,
  GitHubOptions,
} from "../github/port.ts";
export type {
  PullRequestCheck,
  PullRequestChecks,
  WaitForChecksOptions,
} from "../github/_pull_requests.ts";
export type { IssueCompletionHandler } from "../completion/issue.ts";
export type { ProjectCompletionHandler, ProjectPhase } from "../completion/project.ts";
