/**
 * The agent definition (`.agent/<name>/agent.json`): its types, the JSONC
 * parser that turns a file into an {@linkcode AgentDefinition} with defaults
 * filled in, and the lookup of local and built-in agents.
 *
 * Definitions are JSONC: comments and trailing commas are allowed. Every mistake
 * becomes a one-line `UsageError` that names the file and the field (or the
 * line and column of a syntax error), so the CLI can print it as is.
 *
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDefinition } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   `{ "name": "docs", "behavior": { "completionType": "manual",
 *      "completionConfig": { "completionKeyword": "DOCS_DONE" } } }`,
 *   { displayPath: ".agent/docs/agent.json" },
 * );
 * assert.equal(definition.behavior.permissionMode, "acceptEdits");
 * ```
 *
 * @module
 */

export * from "./definition_types.ts";
export { parseDefinition, type ParseDefinitionOptions } from "./parse.ts";
export {
  type AgentListEntry,
  listAgents,
  loadDefinition,
  type LoadDefinitionOptions,
} from "./load.ts";
