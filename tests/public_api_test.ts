/**
 * The public API is a deliberate list: `@finishline/agents` exports the
 * contract (handlers, the iteration record, checkers, definition loading,
 * the prompt resolver, the loop, the backend port) and nothing else, so a
 * change to it shows here and is made on purpose. Plumbing stays importable
 * inside the repository only.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

/** The names an entry exports, types included, as `deno doc` documents them. */
async function exportedNames(entry: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", `${ROOT}${entry}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(output.success, `deno doc ${entry}`);
  const doc = JSON.parse(new TextDecoder().decode(output.stdout));
  const [module] = Object.values(doc.nodes) as Array<{ symbols: Array<{ name: string }> }>;
  return module.symbols.map((symbol) => symbol.name).sort();
}

const CONTRACT = [
  // The completion handler contract, the factory and the registry.
  "BaseHandler",
  "CompletionCriteria",
  "CompletionHandler",
  "CompletionHandlerFactory",
  "CreateHandlerOptions",
  "HandlerContext",
  "HandlerFactory",
  "HandlerFactoryContext",
  "IterateCompletionHandler",
  "ManualCompletionHandler",
  "RunOutcome",
  "createCompletionHandler",
  "getRegisteredHandler",
  "registerCompletionHandler",
  "unregisterCompletionHandler",
  // The iteration record.
  "AgentMessage",
  "COMPLETE_TASK_TOOL",
  "CompleteTaskCall",
  "IterationSummary",
  "emptySummary",
  // The checker contract, and the helpers the documentation's checkers use.
  "CheckerSession",
  "CompositeChecker",
  "Filesystem",
  "ModelAdapter",
  "OutsideRepositoryError",
  "SessionToolCall",
  "TaskCompletionChecker",
  "TaskCompletionContext",
  "TaskCompletionResult",
  "TentativeOutput",
  "incomplete",
  "latestPlan",
  "ok",
  "parseTestReport",
  "PlanChecker",
  "toolResults",
  // Definition loading and the prompt resolver.
  "AgentDefinition",
  "LoadedDefinition",
  "PromptResolver",
  "PromptVariables",
  "UsageError",
  "fillTemplate",
  "listAgents",
  "loadDefinition",
  "parseDefinition",
  // The loop.
  "EXIT_CODES",
  "RunOptions",
  "RunResult",
  "RunStatus",
  "runIterations",
  // The agent backend port.
  "AcpBackend",
  "AgentBackend",
  "AgentConversation",
  "ClaudeBackend",
  "CommandRefusal",
  "ConversationTurn",
  "ProcessSettings",
  "SessionPermissionMode",
  "SessionRequest",
  "SessionSettings",
  "StopDecision",
  "StopEvent",
];

// Cliffy exports about 45 names, dax about 62: the contract stays in that range.
Deno.test("@finishline/agents exports the contract, name for name, and at most 62 names", async () => {
  const names = await exportedNames("agents/mod.ts");
  assert.deepEqual(
    names,
    [...CONTRACT].sort(),
    "a change to the public API is made here on purpose",
  );
  assert.ok(names.length <= 62, `${names.length} names`);
});

Deno.test("no plumbing in the public API: the store, git, processes and locks stay inside", async () => {
  const names = new Set(await exportedNames("agents/mod.ts"));
  for (const plumbing of ["GitRepo", "SqliteStore", "runShell", "RunLock", "RunLog", "Redactor"]) {
    assert.ok(!names.has(plumbing), plumbing);
  }
});
