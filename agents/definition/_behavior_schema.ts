/**
 * The `behavior` section of agent.json: the completion handler and its
 * settings, tools, permissions, model, session and budget.
 *
 * @module
 */

import { z } from "zod";
import { type AgentBehavior, COMPLETION_TYPES, type SettingSource } from "./definition_types.ts";
import { nonEmptyString, positiveInt, positiveNumber, strictObject } from "./_fields.ts";
import { quote } from "./_wording.ts";
import { expectedCompletionType, isCompletionType } from "./completion_types.ts";

const DEFAULT_ALLOWED_TOOLS: readonly string[] = [
  "Bash",
  "Read",
  "Write",
  "Edit",
  "Glob",
  "Grep",
  "TodoWrite",
];
const PERMISSION_MODES = ["default", "acceptEdits", "plan"] as const;

const completionConfigSchema = strictObject({
  maxIterations: positiveInt().optional().describe(
    "Iteration target for `iterate`, and the default cap for every type.",
  ),
  completionKeyword: nonEmptyString().optional().describe(
    "Keyword that ends a `manual` run.",
  ),
  handlerPath: nonEmptyString().optional().describe(
    "Module (relative to the agent folder) whose default export builds a `custom` handler.",
  ),
});

/** The completionConfig field each completion type cannot do without. */
const REQUIRED_COMPLETION_FIELDS = {
  iterate: { field: "maxIterations", expected: "a positive integer" },
  manual: { field: "completionKeyword", expected: "a non-empty string" },
  custom: { field: "handlerPath", expected: "a non-empty string" },
} as const;

/** Adds an issue when the completionConfig field the completion type needs is absent. */
function requireCompletionField(
  behavior: Pick<AgentBehavior, "completionType" | "completionConfig">,
  context: z.core.$RefinementCtx<unknown>,
): void {
  const type = behavior.completionType;
  // Registered types (any other name) settle their own needs in their factory.
  if (type !== "iterate" && type !== "manual" && type !== "custom") return;
  const { field, expected } = REQUIRED_COMPLETION_FIELDS[type as "iterate" | "manual" | "custom"];
  if (behavior.completionConfig[field] === undefined) {
    context.addIssue({
      code: "custom",
      path: ["completionConfig", field],
      message: `expected ${expected}, required when "completionType" is ${quote(type)}`,
    });
  }
}

/**
 * Mirrors {@linkcode requireCompletionField} in the JSON Schema for editors;
 * defaults count, so an absent completionType means "iterate".
 */
const COMPLETION_FIELDS_FOR_EDITORS = {
  allOf: Object.entries(REQUIRED_COMPLETION_FIELDS).map((
    [type, { field }],
  ) => ({
    if: type === "iterate" ? { properties: { completionType: { const: type } } } : {
      properties: { completionType: { const: type } },
      required: ["completionType"],
    },
    then: {
      properties: { completionConfig: { required: [field] } },
      required: ["completionConfig"],
    },
  })),
};

/** `behavior.backend` (and `verify.reproduceBackend`): a backend name or an ACP command. */
export const backendSettingSchema = z.union([
  z.enum(["claude", "codex", "gemini", "opencode", "claude-acp"]),
  z.object({
    acp: z.object({
      command: z.array(nonEmptyString()).min(1),
      env: z.record(z.string(), z.string()).optional(),
      mode: nonEmptyString().optional(),
    }).strict(),
  }).strict(),
], {
  error:
    'expected "claude", "codex", "gemini", "opencode", "claude-acp" or { "acp": { "command": [...] } }',
});

/** The schema of `behavior`, with the completionConfig field its completion type needs. */
export const behaviorSchema = strictObject({
  systemPromptPath: nonEmptyString().optional().describe(
    "System prompt template (relative to the agent folder); overrides the registry's `system` key.",
  ),
  // A string checked at parse time, not an enum: types registered in code
  // (registerCompletionHandler) are valid names too.
  completionType: z.string({ error: expectedCompletionType })
    .refine(isCompletionType, { error: expectedCompletionType })
    .meta({
      anyOf: [{ enum: [...COMPLETION_TYPES] }, {
        pattern: "^[a-z][a-z0-9-]*$",
        description: "A type registered in code with registerCompletionHandler.",
      }],
    })
    .default("iterate").describe(
      "Which completion handler decides that the work is finished: a built-in type, or one registered in code with `registerCompletionHandler`.",
    ),
  completionConfig: completionConfigSchema.prefault({}).describe(
    "Per-handler settings: `iterate` needs `maxIterations`, `manual` needs `completionKeyword`, `custom` needs `handlerPath`.",
  ),
  allowedTools: z.array(nonEmptyString()).default(
    () => [...DEFAULT_ALLOWED_TOOLS],
  ).describe(
    "Tools the agent may use without asking.",
  ),
  disallowedTools: z.array(nonEmptyString()).default(() => []).describe(
    "Tools removed from the agent's context.",
  ),
  permissionMode: z.enum(PERMISSION_MODES, {
    error: (issue) =>
      issue.input === "bypassPermissions"
        ? `"bypassPermissions" cannot be set in agent.json: bypassing permissions is only possible with the --dangerously-skip-permissions CLI flag`
        : undefined,
  }).default("acceptEdits").describe(
    "Claude Code permission mode. Bypassing permissions is only possible with the --dangerously-skip-permissions CLI flag.",
  ),
  model: nonEmptyString().optional().describe(
    "Model name passed to Claude Code; unset means Claude Code's default.",
  ),
  maxTurns: positiveInt().optional().describe(
    "Turn cap for one session (iteration).",
  ),
  maxBudgetUsd: positiveNumber().optional().describe(
    "Cost cap in USD for the whole run.",
  ),
  backend: backendSettingSchema.default("claude").describe(
    'The agent backend: `claude` (the Claude Agent SDK), an ACP preset (`codex`, `gemini`, `opencode`, `claude-acp`), or `{ "acp": { "command": [...], "env": {...}, "mode": "..." } }` (`mode`: the ACP session mode to switch to when the agent offers it, e.g. codex-acp\'s `full-access`).',
  ),
  session: z.enum(["fresh", "continue"]).default("fresh").describe(
    "`fresh` starts a new session per iteration; `continue` keeps one Claude Code session (and process) for the whole run.",
  ),
  prewarm: z.boolean().default(true).describe(
    "With `fresh` sessions, no session waits for Claude Code to start: a session that ended well keeps its process for the next one (a new conversation after `/clear`), or else the next iteration's process is started while the current one works (about 250 MB more memory meanwhile). Off: a new process per session.",
  ),
  settingSources: z.array(z.enum(["user", "project", "local"])).default(
    (): SettingSource[] => ["project"],
  ).describe("Where Claude Code reads its own settings from."),
  maxDurationSeconds: positiveNumber().optional().describe(
    "Time budget of the whole run in seconds.",
  ),
  requireCompleteTask: z.boolean().default(true).describe(
    "Block a session that stops without calling complete_task. Off, the stop hook still runs the configured checks at every stop.",
  ),
  maxContinuationAttempts: z.int({ error: "expected a whole number from 0 to 5" }).min(0, {
    error: "expected a whole number from 0 to 5",
  }).max(5, { error: "expected a whole number from 0 to 5" }).default(2).describe(
    "How often per iteration the stop hook sends the agent back (at most 5).",
  ),
}).superRefine(requireCompletionField).meta(COMPLETION_FIELDS_FOR_EDITORS);
