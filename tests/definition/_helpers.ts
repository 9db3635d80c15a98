/**
 * Helpers shared by the tests of the agent definition: parse a text with a
 * fixed display path, and build definitions that pass every per-type rule.
 *
 * @module
 */

import type { AgentDefinition } from "../../agents/definition/definition_types.ts";
import { parseDefinition } from "../../agents/definition/parse.ts";

/** The repository root, where the built-in agents and the schema are. */
export const REPO_ROOT: URL = new URL("../../", import.meta.url);
/** The path every parsed text claims to come from. */
export const DISPLAY_PATH = ".agent/x/agent.json";
/** The start of every error message about {@linkcode DISPLAY_PATH}. */
export const PREFIX = `Cannot load agent definition "${DISPLAY_PATH}": `;

/** Parses a definition as if it came from {@linkcode DISPLAY_PATH}. */
export function parse(text: string): AgentDefinition {
  return parseDefinition(text, { displayPath: DISPLAY_PATH });
}

/** A definition that passes every per-type rule, with `behavior` fields merged in. */
export function withBehavior(
  behavior: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    name: "x",
    behavior: { completionType: "issue", ...behavior },
    ...extra,
  });
}

/** The tools an agent may use when its definition names none. */
export const DEFAULT_TOOLS: string[] = [
  "Bash",
  "Read",
  "Write",
  "Edit",
  "Glob",
  "Grep",
  "TodoWrite",
];
