/**
 * The agent definition (`.agent/<name>/agent.json`): its zod schema, the JSONC
 * parser that turns a file into an {@linkcode AgentDefinition} with defaults
 * filled in, and the lookup of local and built-in agents.
 *
 * Definitions are JSONC: comments and trailing commas are allowed. Every mistake
 * becomes a one-line {@linkcode UsageError} that names the file and the field
 * (or the line and column of a syntax error), so the CLI can print it as is.
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

import { parse as parseJsonc, type ParseError, printParseErrorCode } from "jsonc-parser";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import {
  type AgentDefinition,
  COMPLETION_TYPES,
  DEFAULT_PROTECTED_GLOBS,
  type LoadedDefinition,
  type SettingSource,
} from "./agent_definition.ts";
import { UsageError } from "./errors.ts";
import { readTextResource } from "./resource.ts";

const AGENT_NAME_PATTERN = /^[a-z][a-z0-9-]*$/;
const PARAMETER_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]*$/;
const CLI_FLAG_PATTERN = /^--[a-z][a-z0-9-]*$/;
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
const BUILTIN_PREFIX = "<builtin>";

/** Quotes a value the way every message of this module does. */
function quote(value: unknown): string {
  return JSON.stringify(value);
}

function oneOf(values: readonly unknown[]): string {
  return values.length === 1 ? quote(values[0]) : `one of ${values.map(quote).join(", ")}`;
}

/**
 * A strict object: typos in a definition must not pass silently, so an unknown
 * key is an error that lists the keys the object does know.
 */
function strictObject<T extends z.core.$ZodLooseShape>(shape: T) {
  const known = oneOf(Object.keys(shape));
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys" ? `unknown key, expected ${known}` : undefined,
  });
}

function positiveInt() {
  return z.int({ error: "expected a positive integer" }).positive({
    error: "expected a positive integer",
  });
}

function positiveNumber() {
  return z.number({ error: "expected a positive number" }).positive({
    error: "expected a positive number",
  });
}

function nonNegativeNumber() {
  return z.number({ error: "expected a number of 0 or more" }).min(0, {
    error: "expected a number of 0 or more",
  });
}

function nonNegativeInt() {
  return z.int({ error: "expected a whole number of 0 or more" }).min(0, {
    error: "expected a whole number of 0 or more",
  });
}

function nonEmptyString() {
  return z.string().min(1, { error: "expected a non-empty string" });
}

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

const behaviorSchema = strictObject({
  systemPromptPath: nonEmptyString().optional().describe(
    "System prompt template (relative to the agent folder); overrides the registry's `system` key.",
  ),
  completionType: z.enum(COMPLETION_TYPES).default("iterate").describe(
    "Which completion handler decides that the work is finished.",
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
  session: z.enum(["fresh", "continue"]).default("fresh").describe(
    "`fresh` starts a new session per iteration; `continue` keeps one Claude Code session (and process) for the whole run.",
  ),
  prewarm: z.boolean().default(true).describe(
    "With `fresh` sessions, start the next iteration's Claude Code while the current one works (about 0.3 s less per iteration, about 250 MB more memory meanwhile).",
  ),
  settingSources: z.array(z.enum(["user", "project", "local"])).default(
    (): SettingSource[] => ["project"],
  ).describe("Where Claude Code reads its own settings from."),
  maxDurationSeconds: positiveNumber().optional().describe(
    "Time budget of the whole run in seconds.",
  ),
  requireCompleteTask: z.boolean().default(true).describe(
    "Block a session that stops without calling complete_task.",
  ),
  maxContinuationAttempts: z.int({ error: "expected a whole number from 0 to 5" }).min(0, {
    error: "expected a whole number from 0 to 5",
  }).max(5, { error: "expected a whole number from 0 to 5" }).default(2).describe(
    "How often per iteration the stop hook sends the agent back (at most 5).",
  ),
}).superRefine((behavior, context) => {
  const type = behavior.completionType;
  if (type !== "iterate" && type !== "manual" && type !== "custom") return;
  const { field, expected } = REQUIRED_COMPLETION_FIELDS[type];
  if (behavior.completionConfig[field] === undefined) {
    context.addIssue({
      code: "custom",
      path: ["completionConfig", field],
      message: `expected ${expected}, required when "completionType" is ${quote(type)}`,
    });
  }
}).meta({
  // Mirrors the refinement above for editors; defaults count, so an absent
  // completionType means "iterate".
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
});

function regexError(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const validationSchema = strictObject({
  pattern: z.string().superRefine((pattern, context) => {
    const problem = regexError(pattern);
    if (problem !== undefined) {
      context.addIssue({
        code: "custom",
        message: `expected a valid regular expression: ${problem}`,
      });
    }
  }).optional().describe("Regular expression a string value must match."),
  min: z.number().optional().describe("Smallest allowed number."),
  max: z.number().optional().describe("Largest allowed number."),
  enum: z.array(
    z.union([z.string(), z.number()], {
      error: "expected a string or a number",
    }),
  )
    .optional().describe("The allowed values."),
});

function hasType(
  value: unknown,
  type: "string" | "number" | "boolean",
): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
  }
}

const parameterSchema = strictObject({
  type: z.enum(["string", "number", "boolean"]).default("string").describe(
    "The value's type.",
  ),
  description: z.string().default("").describe("Shown in --help."),
  required: z.boolean().default(false).describe(
    "Whether the flag must be given.",
  ),
  default: z.union([z.string(), z.number(), z.boolean()], {
    error: "expected a string, a number or a boolean",
  }).optional().describe(
    "Value used when the flag is absent; must match `type`.",
  ),
  cli: z.string().regex(CLI_FLAG_PATTERN, {
    error: `expected a flag like "--topic" (two dashes, then lowercase letters, digits and dashes)`,
  }).optional().describe(
    "The CLI flag, with leading dashes; derived from the name when absent.",
  ),
  validation: validationSchema.optional().describe(
    "Rules the value must satisfy.",
  ),
}).superRefine((parameter, context) => {
  if (
    parameter.default !== undefined &&
    !hasType(parameter.default, parameter.type)
  ) {
    context.addIssue({
      code: "custom",
      path: ["default"],
      message: `expected a ${parameter.type}, as "type" is ${quote(parameter.type)}`,
    });
  }
  const allowed = parameter.validation?.enum ?? [];
  const index = allowed.findIndex((value) => !hasType(value, parameter.type));
  if (index !== -1) {
    context.addIssue({
      code: "custom",
      path: ["validation", "enum", index],
      message: `expected a ${parameter.type}, as "type" is ${quote(parameter.type)}`,
    });
  }
});

const checkName = nonEmptyString().optional().describe("Name in feedback and logs.");

const checkSchema = z.discriminatedUnion("type", [
  strictObject({
    type: z.literal("command"),
    command: nonEmptyString().describe("Shell command (sh -c), e.g. `deno task test`."),
    timeoutSeconds: positiveNumber().default(600).describe("Timeout in seconds."),
    name: checkName,
  }).describe("Runs a command; passes on exit 0."),
  strictObject({
    type: z.literal("git"),
    minCommits: nonNegativeInt().default(1).describe("New commits required since the run started."),
    cleanTree: z.boolean().default(false).describe("Require no uncommitted changes."),
    name: checkName,
  }).describe("Commit evidence."),
  strictObject({
    type: z.literal("files"),
    paths: z.array(nonEmptyString()).min(1, { error: "expected at least one path" }).describe(
      "Paths that must exist, relative to the working directory.",
    ),
    name: checkName,
  }).describe("Paths that must exist."),
  strictObject({ type: z.literal("plan"), name: checkName }).describe(
    "The agent's own TodoWrite plan must be completed.",
  ),
  strictObject({
    type: z.literal("judge"),
    criteria: nonEmptyString().describe("What must be true."),
    model: nonEmptyString().optional().describe("Model for the judge session."),
    timeoutSeconds: positiveNumber().default(180).describe("Timeout of the judge session."),
    name: checkName,
  }).describe("An LLM judge in a separate tool-less session."),
  strictObject({
    type: z.literal("custom"),
    path: nonEmptyString().describe("Module path relative to the agent folder."),
    options: z.record(z.string(), z.unknown()).default(() => ({})).describe(
      "Passed to the module's factory.",
    ),
    name: checkName,
  }).describe("A checker module in the agent folder."),
], {
  error: (issue) =>
    issue.code === "invalid_union"
      ? `expected "type" to be one of "command", "git", "files", "plan", "judge", "custom"`
      : undefined,
});

const rawDefinitionSchema = strictObject({
  $schema: z.string().optional().describe("Editor schema reference; ignored."),
  version: z.string().default("1").describe("Definition format version."),
  name: z.string().regex(AGENT_NAME_PATTERN, {
    error: (issue) =>
      issue.input === undefined
        ? "expected a string (the field is missing)"
        : "expected a lowercase name of letters, digits and dashes, starting with a letter",
  }).describe("Agent name, equal to its folder name under .agent/."),
  displayName: nonEmptyString().optional().describe(
    "Human-readable name; defaults to `name`.",
  ),
  description: z.string().default("").describe("What the agent is for."),
  behavior: behaviorSchema.prefault({}).describe(
    "How the agent runs: handler, tools, permissions, model and budget.",
  ),
  prompts: strictObject({
    registry: nonEmptyString().default("prompts/registry.json").describe(
      "Registry JSON (relative to the agent folder) mapping keys to templates.",
    ),
    fallbackDir: nonEmptyString().default("prompts").describe(
      "Folder (relative to the agent folder) searched for `<key>.md` before the built-in templates.",
    ),
  }).prefault({}).describe("Where prompt templates come from."),
  parameters: z.record(
    z.string().regex(PARAMETER_NAME_PATTERN, {
      error: `expected a parameter name of letters, digits, "_" and "-", starting with a letter`,
    }),
    parameterSchema,
  ).default(() => ({})).describe(
    "CLI parameters exposed to templates as `uv-` variables.",
  ),
  actions: strictObject({
    enabled: z.boolean().default(true).describe(
      "Whether action blocks are detected.",
    ),
    types: z.array(nonEmptyString()).default(() => []).describe(
      "Action types that are recognised; empty means any.",
    ),
    outputFormat: nonEmptyString().default("action").describe(
      "The info string of the fenced block (```action).",
    ),
  }).prefault({}).describe(
    "Structured action blocks the agent may emit in fenced code blocks.",
  ),
  github: strictObject({
    labels: strictObject({
      inProgress: nonEmptyString().optional().describe(
        "Added at the start of a run, removed at the end.",
      ),
      blocked: nonEmptyString().optional().describe(
        "Added when the run ends blocked.",
      ),
    }).prefault({}).describe("Labels the issue handler manages."),
    comment: z.boolean().default(false).describe(
      "Post a short progress comment after each iteration.",
    ),
    closeIssue: z.enum(["runner", "agent"]).default("runner").describe(
      "Who closes the issue: `runner` (once the evidence passes; the agent's own `gh issue close` is refused) or `agent` (the issue closing is the completion signal).",
    ),
  }).prefault({}).describe("GitHub integration settings."),
  logging: strictObject({
    directory: nonEmptyString().optional().describe(
      "Relative to the working directory; defaults to `.agent/<name>/logs`.",
    ),
    format: z.literal("jsonl").default("jsonl").describe("Log format."),
  }).prefault({}).describe("Where the JSONL run log goes."),
  verify: strictObject({
    mode: z.enum(["all", "any"]).default("all").describe(
      "`all` checkers must pass, or `any` may pass.",
    ),
    checks: z.array(checkSchema).default(() => []).describe(
      "The checkers, in order; when given, they replace the detected checks.",
    ),
    detect: z.boolean().default(true).describe(
      "Without `checks`, detect the repository's own checks (package.json, deno.json, Makefile, pytest, Cargo, Go) and gate completion on them.",
    ),
    baseline: z.boolean().default(true).describe(
      "Run the detected checks on the starting commit, in a detached worktree beside the first session, so that a check green at the start must stay green.",
    ),
    protect: z.array(nonEmptyString()).default(() => [...DEFAULT_PROTECTED_GLOBS]).describe(
      "Globs of the files that define done (tests); when the agent changes them, their original versions must still pass or the agent must declare the change.",
    ),
    checkTimeoutSeconds: positiveNumber().default(600).describe(
      "Timeout of one detected check in seconds.",
    ),
    prChecks: z.boolean().optional().describe(
      "Wait for the pull request's CI checks and complete only when they pass; on by default when a pull request is created.",
    ),
    prChecksTimeoutSeconds: positiveNumber().default(1800).describe(
      "How long to wait for the pull request's checks in seconds.",
    ),
  }).prefault({}).describe("Checkers that must pass before the run completes."),
  git: strictObject({
    rescue: z.boolean().default(true).describe(
      "Ask the agent to commit uncommitted work when it says it is done.",
    ),
    autoCommit: z.boolean().default(false).describe(
      "When the agent still leaves changes uncommitted, commit them with a generated message.",
    ),
    timeoutSeconds: positiveNumber().default(10).describe("Timeout of one git call in seconds."),
  }).prefault({}).describe("Git evidence and commit rescue."),
  circuitBreaker: strictObject({
    noProgressThreshold: positiveInt().default(3).describe(
      "Iterations in a row without commits, file changes or a waiting status that end the run stalled.",
    ),
    sameErrorThreshold: positiveInt().default(5).describe(
      "Iterations in a row ending with the same error that end the run stalled.",
    ),
  }).prefault({}).describe("Stops a loop that makes no progress."),
  probe: strictObject({
    enabled: z.boolean().default(true).describe("Whether to probe at all."),
    maxProbes: positiveInt().default(3).describe(
      "Probes per iteration while the agent says waiting or working.",
    ),
    probeIntervalSeconds: nonNegativeNumber().default(30).describe(
      "Wait between probes in seconds.",
    ),
    probeTimeoutSeconds: positiveNumber().default(120).describe("Timeout of one probe in seconds."),
  }).prefault({}).describe("Asking the agent for its status when the evidence is unclear."),
  finish: strictObject({
    extractLearnings: z.boolean().default(false).describe(
      "Ask a tool-less model session to extract learnings when a run ends.",
    ),
    maxLearnings: nonNegativeInt().default(5).describe(
      "Learnings of earlier runs put into `{uv-learnings}`.",
    ),
    maxLearningsChars: positiveInt().default(2000).describe(
      "Characters of learnings at most in `{uv-learnings}`.",
    ),
  }).prefault({}).describe(
    "The finish workflow: summary, learnings, skills, persistence, cleanup.",
  ),
  retry: strictObject({
    maxAttempts: positiveInt().default(3).describe(
      "Attempts of one iteration (the first and the retries).",
    ),
    baseDelaySeconds: nonNegativeNumber().default(2).describe(
      "First backoff in seconds; it doubles, with jitter.",
    ),
    maxDelaySeconds: nonNegativeNumber().default(60).describe("Longest backoff in seconds."),
    iterationTimeoutSeconds: positiveNumber().default(1200).describe(
      "A session with no message for this long hangs and is aborted.",
    ),
    maxWaitSeconds: nonNegativeNumber().default(900).describe(
      "Longest wait for a rate limit to reset (--max-wait).",
    ),
  }).prefault({}).describe("Retrying iterations that hit API faults."),
});

/** Fills the defaults that depend on other fields. */
const definitionSchema = rawDefinitionSchema.transform((raw) => ({
  ...raw,
  displayName: raw.displayName ?? raw.name,
  logging: {
    ...raw.logging,
    directory: raw.logging.directory ?? `.agent/${raw.name}/logs`,
  },
}));

type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false)
  : false;
type Expect<T extends true> = T;
// Fails to compile when the schema and the AgentDefinition interface drift apart.
type _SchemaMatchesAgentDefinition = Expect<
  MutuallyAssignable<z.output<typeof definitionSchema>, AgentDefinition>
>;

/**
 * The zod schema of agent.json, for tools such as the JSON Schema generator;
 * use {@linkcode parseDefinition} to validate a file with readable errors.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentDefinitionSchema } from "./definition.ts";
 *
 * const result = agentDefinitionSchema.safeParse({
 *   name: "x",
 *   behavior: { completionType: "issue" },
 * });
 * assert.equal(result.success, true);
 * ```
 */
export const agentDefinitionSchema: z.ZodType<AgentDefinition> = definitionSchema;

function formatPath(segments: readonly PropertyKey[]): string {
  let result = "";
  for (const segment of segments) {
    if (typeof segment === "number") result += `[${segment}]`;
    else result += result === "" ? String(segment) : `.${String(segment)}`;
  }
  return result;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
  record: "an object",
};

/** Says what was expected, for the issues the schema does not word itself. */
function describeIssue(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type": {
      const expected = `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
      return issue.input === undefined ? `${expected} (the field is missing)` : expected;
    }
    case "invalid_value":
      return `expected ${oneOf(issue.values)}`;
    case "too_small":
      if (issue.origin === "string") return "expected a non-empty string";
      if (issue.origin === "array") {
        return `expected at least ${issue.minimum} items`;
      }
      return `expected a number ${
        issue.inclusive ? "of at least" : "greater than"
      } ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "array") {
        return `expected at most ${issue.maximum} items`;
      }
      return `expected a number ${issue.inclusive ? "of at most" : "less than"} ${issue.maximum}`;
    case "invalid_key":
      return issue.issues[0]?.message;
    case "invalid_format":
      return issue.format === "regex"
        ? `expected a string matching ${issue.pattern}`
        : `expected a ${issue.format}`;
    default:
      return undefined;
  }
}

const JSONC_ERRORS: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected a colon",
  CommaExpected: "expected a comma",
  CloseBraceExpected: 'expected a closing "}"',
  CloseBracketExpected: 'expected a closing "]"',
  EndOfFileExpected: "expected the end of the file",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unterminated number",
  InvalidUnicode: "invalid unicode escape",
  InvalidEscapeCharacter: "invalid escape character",
  InvalidCharacter: "invalid character in string",
};

function describeSyntaxError(text: string, error: ParseError): string {
  const before = text.slice(0, error.offset);
  const line = before.split("\n").length;
  const column = error.offset - (before.lastIndexOf("\n") + 1) + 1;
  const name = printParseErrorCode(error.error);
  const what = JSONC_ERRORS[name] ?? name;
  const atEnd = text.slice(error.offset).trim() === "";
  return `line ${line}, column ${column}: ${atEnd ? `unexpected end of file, ${what}` : what}`;
}

/** Options of {@linkcode parseDefinition}. */
export interface ParseDefinitionOptions {
  /** Where the text came from, as shown in error messages. */
  displayPath: string;
  /** The name the definition must have (its folder name); unchecked when absent. */
  expectedName?: string;
}

/**
 * Parses and validates the JSONC text of an agent.json, filling every default.
 *
 * @param text The file's content; comments and trailing commas are allowed.
 * @param options Where the text came from, and the name it must have.
 * @returns The validated definition.
 * @throws {UsageError} On a syntax error (with line and column) or the first schema error (with the field path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDefinition } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   `{
 *     // The smallest useful agent: three iterations of the default prompts.
 *     "name": "polish",
 *     "behavior": { "completionConfig": { "maxIterations": 3 } },
 *   }`,
 *   { displayPath: ".agent/polish/agent.json", expectedName: "polish" },
 * );
 * assert.equal(definition.displayName, "polish");
 * assert.equal(definition.behavior.completionType, "iterate");
 * assert.equal(definition.logging.directory, ".agent/polish/logs");
 *
 * assert.throws(
 *   () =>
 *     parseDefinition(`{ "name": "x", "behavior": { "completionType": "done" } }`, {
 *       displayPath: "agent.json",
 *     }),
 *   {
 *     message:
 *       'Cannot load agent definition "agent.json": "behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom"',
 *   },
 * );
 * ```
 */
export function parseDefinition(
  text: string,
  options: ParseDefinitionOptions,
): AgentDefinition {
  const prefix = `Cannot load agent definition ${quote(options.displayPath)}`;
  // Editors on Windows may save a byte order mark; it is not part of the JSON.
  const source = text.replace(/^\uFEFF/, "");
  const errors: ParseError[] = [];
  const data: unknown = parseJsonc(source, errors, {
    allowTrailingComma: true,
    disallowComments: false,
    allowEmptyContent: false,
  });
  if (errors.length > 0) {
    throw new UsageError(
      `${prefix}: ${describeSyntaxError(source, errors[0])}`,
    );
  }
  const result = definitionSchema.safeParse(data, { error: describeIssue });
  if (!result.success) {
    const issues = result.error.issues;
    // A misspelt key usually causes a second error (the field it should have set
    // is missing); the misspelling is the one worth reporting.
    const issue = issues.find((candidate) => candidate.code === "unrecognized_keys") ?? issues[0];
    const segments = issue.code === "unrecognized_keys"
      ? [...issue.path, issue.keys[0]]
      : issue.path;
    const field = segments.length === 0 ? "" : `${quote(formatPath(segments))}: `;
    throw new UsageError(`${prefix}: ${field}${issue.message}`, {
      cause: result.error,
    });
  }
  const definition = result.data;
  if (
    options.expectedName !== undefined &&
    definition.name !== options.expectedName
  ) {
    throw new UsageError(
      `${prefix}: "name": expected ${quote(options.expectedName)} to match the folder name, got ${
        quote(definition.name)
      }`,
    );
  }
  return definition;
}

/** Options of {@linkcode loadDefinition} and {@linkcode listAgents}. */
export interface LoadDefinitionOptions {
  /** The working directory whose `.agent/` folder holds local agents. */
  cwd: string;
  /**
   * Root of the finishline package, whose `.agent/` holds the built-in agents;
   * a `file:` URL, or `https:` when run from JSR.
   * @default the repository root of this module
   */
  builtinRoot?: URL;
}

/** One agent found by {@linkcode listAgents}. */
export interface AgentListEntry {
  /** The agent's folder name. */
  name: string;
  /** True for an agent shipped with finishline. */
  builtin: boolean;
  /** The definition's display name, or the name when the definition is broken. */
  displayName: string;
  /** The definition's description; empty when the definition is broken. */
  description: string;
  /** The completion type; empty when the definition is broken. */
  completionType: string;
  /** Where the definition is, as shown in messages. */
  path: string;
  /** Why the definition cannot be loaded; absent when it loads. */
  error?: string;
}

function defaultBuiltinRoot(): URL {
  return new URL("../../", import.meta.url);
}

function checkAgentName(name: string): void {
  if (!AGENT_NAME_PATTERN.test(name)) {
    throw new UsageError(
      `Invalid agent name ${
        quote(name)
      }: expected lowercase letters, digits and dashes, starting with a letter`,
    );
  }
}

interface Candidate {
  url: URL;
  builtin: boolean;
  displayPath: string;
}

function localCandidate(name: string, cwd: string): Candidate {
  const file = path.join(path.resolve(cwd), ".agent", name, "agent.json");
  return {
    url: pathToFileURL(file),
    builtin: false,
    displayPath: path.relative(path.resolve(cwd), file),
  };
}

function builtinCandidate(name: string, builtinRoot: URL): Candidate {
  const relative = `.agent/${name}/agent.json`;
  return {
    url: new URL(relative, builtinRoot),
    builtin: true,
    displayPath: `${BUILTIN_PREFIX}/${relative}`,
  };
}

/** Reads a candidate; `undefined` when absent, a `UsageError` when unreadable. */
async function readCandidate(
  candidate: Candidate,
): Promise<string | undefined> {
  try {
    return await readTextResource(candidate.url);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `Cannot read agent definition ${quote(candidate.displayPath)}: ${detail}`,
      { cause: error },
    );
  }
}

function loaded(
  candidate: Candidate,
  definition: AgentDefinition,
): LoadedDefinition {
  return {
    definition,
    url: candidate.url,
    agentDir: new URL("./", candidate.url),
    builtin: candidate.builtin,
    displayPath: candidate.displayPath,
  };
}

/**
 * Finds and loads the agent of the given name: `<cwd>/.agent/<name>/agent.json`,
 * else the built-in agent of that name.
 *
 * @param name The agent's name, which is also its folder name.
 * @param options The working directory and where the built-in agents are.
 * @returns The definition, where it was found, and its folder.
 * @throws {UsageError} When the name is invalid, no agent has it, or its definition is broken.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadDefinition } from "@finishline/agents";
 *
 * const cwd = await Deno.makeTempDir();
 * try {
 *   const { definition, builtin, displayPath } = await loadDefinition("iterator", { cwd });
 *   assert.equal(builtin, true);
 *   assert.equal(displayPath, "<builtin>/.agent/iterator/agent.json");
 *   assert.equal(definition.behavior.completionType, "iterate");
 * } finally {
 *   await Deno.remove(cwd, { recursive: true });
 * }
 * ```
 */
export async function loadDefinition(
  name: string,
  options: LoadDefinitionOptions,
): Promise<LoadedDefinition> {
  checkAgentName(name);
  const builtinRoot = options.builtinRoot ?? defaultBuiltinRoot();
  for (
    const candidate of [
      localCandidate(name, options.cwd),
      builtinCandidate(name, builtinRoot),
    ]
  ) {
    const text = await readCandidate(candidate);
    if (text === undefined) continue;
    const definition = parseDefinition(text, {
      displayPath: candidate.displayPath,
      expectedName: name,
    });
    return loaded(candidate, definition);
  }
  throw new UsageError(
    `Unknown agent ${quote(name)}: found no ${quote(`.agent/${name}/agent.json`)} in ${
      quote(path.resolve(options.cwd))
    } and no built-in agent of that name; run with --list to see the agents`,
  );
}

async function listFolder(folder: URL): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      if (entry.isDirectory || entry.isSymlink) names.push(entry.name);
    }
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory
    ) {
      return [];
    }
    throw error;
  }
  return names;
}

/** Describes one candidate; `undefined` when it has no agent.json. */
async function describeCandidate(
  name: string,
  candidate: Candidate,
): Promise<AgentListEntry | undefined> {
  const entry = {
    name,
    builtin: candidate.builtin,
    displayName: name,
    description: "",
    completionType: "",
    path: candidate.displayPath,
  };
  let text: string | undefined;
  try {
    text = await readCandidate(candidate);
  } catch (error) {
    return {
      ...entry,
      error: error instanceof Error ? error.message : String(error),
    };
  }
  if (text === undefined) return undefined;
  try {
    checkAgentName(name);
    const definition = parseDefinition(text, {
      displayPath: candidate.displayPath,
      expectedName: name,
    });
    return {
      ...entry,
      displayName: definition.displayName,
      description: definition.description,
      completionType: definition.behavior.completionType,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { ...entry, error: error.message };
  }
}

/**
 * Lists the agents available in a working directory: its local agents, and the
 * built-in agents that no local agent of the same name shadows.
 *
 * A broken local agent is listed with its `error` rather than failing the list.
 *
 * @param options The working directory and where the built-in agents are.
 * @returns The agents, sorted by name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listAgents } from "@finishline/agents";
 *
 * const cwd = await Deno.makeTempDir();
 * try {
 *   await Deno.mkdir(`${cwd}/.agent/docs`, { recursive: true });
 *   await Deno.writeTextFile(`${cwd}/.agent/docs/agent.json`, `{ "name": "docs" }`);
 *   const agents = await listAgents({ cwd });
 *   const docs = agents.find((agent) => agent.name === "docs");
 *   assert.equal(docs?.builtin, false);
 *   assert.match(
 *     docs?.error ?? "",
 *     /"behavior.completionConfig.maxIterations": expected a positive integer/,
 *   );
 *   assert.equal(agents.find((agent) => agent.name === "iterator")?.builtin, true);
 * } finally {
 *   await Deno.remove(cwd, { recursive: true });
 * }
 * ```
 */
export async function listAgents(
  options: LoadDefinitionOptions,
): Promise<AgentListEntry[]> {
  const builtinRoot = options.builtinRoot ?? defaultBuiltinRoot();
  const agents = new Map<string, AgentListEntry>();
  const localRoot = pathToFileURL(
    path.join(path.resolve(options.cwd), ".agent") + path.sep,
  );
  for (const name of await listFolder(localRoot)) {
    const entry = await describeCandidate(
      name,
      localCandidate(name, options.cwd),
    );
    if (entry !== undefined) agents.set(name, entry);
  }
  // Only a file: root can be scanned; from JSR the built-in agent is known by name.
  const builtinNames = builtinRoot.protocol === "file:"
    ? await listFolder(new URL(".agent/", builtinRoot))
    : ["iterator"];
  for (const name of builtinNames) {
    if (agents.has(name)) continue;
    const entry = await describeCandidate(
      name,
      builtinCandidate(name, builtinRoot),
    );
    if (entry !== undefined) agents.set(name, entry);
  }
  return [...agents.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}
