/**
 * The zod schema of agent.json: every section with its defaults, and the
 * defaults that depend on other fields. Zod stays inside this folder; the
 * schema is exported only for the JSON Schema generator (`deno task schema`).
 *
 * @module
 */

import { z } from "zod";
import {
  type AgentDefinition,
  DEFAULT_BUG_LABELS,
  DEFAULT_FINISH_MODEL,
  DEFAULT_PROTECTED_GLOBS,
} from "./definition_types.ts";
import { backendSettingSchema, behaviorSchema } from "./_behavior_schema.ts";
import { checkSchema } from "./_check_schema.ts";
import {
  AGENT_NAME_PATTERN,
  insidePath,
  nonEmptyString,
  nonNegativeInt,
  nonNegativeNumber,
  positiveInt,
  positiveNumber,
  strictObject,
} from "./_fields.ts";
import { parameterSchema } from "./_parameter_schema.ts";
import { hostRule } from "../sandbox/network.ts";

const PARAMETER_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]*$/;

const promptsSchema = strictObject({
  registry: nonEmptyString().default("prompts/registry.json").describe(
    "Registry JSON (relative to the agent folder) mapping keys to templates.",
  ),
  fallbackDir: nonEmptyString().default("prompts").describe(
    "Folder (relative to the agent folder) searched for `<key>.md` before the built-in templates.",
  ),
});

const actionsSchema = strictObject({
  enabled: z.boolean().default(true).describe(
    "Whether action blocks are detected.",
  ),
  types: z.array(nonEmptyString()).default(() => []).describe(
    "Action types that are recognised; empty means any.",
  ),
  outputFormat: nonEmptyString().default("action").describe(
    "The info string of the fenced block (```action).",
  ),
});

const githubSchema = strictObject({
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
});

const loggingSchema = strictObject({
  directory: insidePath().optional().describe(
    "The folder of the log and the report, relative to the repository (the folder holding `.agent/`) and inside it after symlinks are followed; defaults to `.agent/<name>/logs`.",
  ),
  format: z.literal("jsonl").default("jsonl").describe("Log format."),
});

const verifySchema = strictObject({
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
    "Globs of the test files that define done; when the agent adds, modifies, deletes or renames one, their original versions must still pass or the agent must declare the change. Runner configuration (conftest.py, Makefiles, package.json, ...) and sources whose change adds or removes a test or a skip are protected besides.",
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
  reproduce: z.enum(["held-out", "worker", "both", "off"]).optional().describe(
    "`held-out`: before the work starts, a separate verifier session writes a test that reproduces the task from its text alone, kept only if it fails on the starting commit with an assertion; the worker never sees it, and done needs it to pass on the final commit. `worker`: one of the worker's own new or changed tests must fail on the starting commit and pass at the end. `both`: the two. `off`: neither. Unset: `both` for issue runs (the worker's test only when the issue carries one of `bugLabels`), `held-out` for project runs, `off` for other runs.",
  ),
  reproduceBackend: backendSettingSchema.optional().describe(
    "The backend of the verifier and reviewer sessions, when not the run's (`behavior.backend`).",
  ),
  reproduceModel: nonEmptyString().optional().describe(
    "The model of the verifier and reviewer sessions (a cheaper one, say), when not the run's (`behavior.model`).",
  ),
  reproduceMaxCostUsd: positiveNumber().default(1).describe(
    "Cost cap of the verifier session in USD; a verifier that runs out leaves the run on the other evidence.",
  ),
  reproduceMaxTurns: positiveInt().default(30).describe(
    "Turn cap of the verifier session.",
  ),
  bugLabels: z.array(nonEmptyString()).default(() => [...DEFAULT_BUG_LABELS]).describe(
    "Issue labels (any case) that make an issue run a bug fix: with `reproduce` unset, the worker's own test must then fail on the starting commit and pass at the end.",
  ),
  reviewDeclarations: z.boolean().default(true).describe(
    "Send the worker's declarations (`tests_changed`, `out_of_scope`, `no_test` in complete_task) to a reviewer session that sees the diff, the reasons and the task, not the worker's transcript; a declaration counts only when it accepts it.",
  ),
  reviewMaxCostUsd: positiveNumber().default(0.5).describe(
    "Cost cap of one reviewer session in USD.",
  ),
  reviewMaxTurns: positiveInt().default(20).describe("Turn cap of one reviewer session."),
  changedLines: strictObject({
    measure: z.boolean().default(true).describe(
      "At the claim that completes, measure which changed lines of the repository's own source the tests run (each runtime's coverage tool) and which mutants of them they kill (finishline's mutator), in the clean copy; the figures go to the report, the pull request, `--json` and the worker.",
    ),
    coverage: z.number().min(0).max(1).optional().describe(
      "A floor that gates completion: the share of changed executable lines the tests must run (0..1). Unset: the figure is reported, not gated.",
    ),
    mutants: z.number().min(0).max(1).optional().describe(
      "A floor that gates completion: the share of tried mutants of the changed lines the tests must kill (0..1). Unset: the figure is reported, not gated.",
    ),
    budget: positiveNumber().default(2).describe(
      "The mutants' time box, as a multiple of the suite's own time at that claim; mutants past it are counted as untried.",
    ),
  }).prefault({}).describe(
    "Proof of the change: changed-line coverage and mutants of the changed lines.",
  ),
  sandbox: z.enum(["auto", "required", "off"]).default("auto").describe(
    "Run every agent session (worker, verifier, reviewer) in an OS sandbox (bubblewrap) whose world is its own checkout, a private home and a private /tmp: finishline's state, the other sessions' folders, the clean copies and the user's dotfiles and global git config are not there. `auto`: when one can be had (else one line at the start and in the report), `required`: refuse to run without one (exit 2), `off`: never.",
  ),
  network: z.union([
    z.enum(["model", "open"]),
    strictObject({
      allow: z.array(
        nonEmptyString().refine((text) => hostRule(text) !== undefined, {
          message: "expected a host, host:port or *.domain (no scheme, no path)",
        }),
      ).describe("Hosts the sessions reach besides the model's API."),
    }),
  ]).default("model").describe(
    "What a sandboxed session reaches of the network. `model`: only its model's API (the host of the backend's base-URL variable, else its public API, and the hosts its login refreshes at), through finishline's proxy; no other host, no name lookup. `{ \"allow\": [...] }`: the model's API and these hosts (`registry.npmjs.org`, `*.pythonhosted.org`, `127.0.0.1:5432`). `open`: the machine's network. Where the model's host cannot be known (an explicit ACP command, opencode on its default providers) and nothing is listed, the network stays open and the run says so at its start.",
  ),
});

const gitSchema = strictObject({
  rescue: z.boolean().default(true).describe(
    "Ask the agent to commit uncommitted work when it says it is done.",
  ),
  autoCommit: z.boolean().default(false).describe(
    "When the agent still leaves changes uncommitted, commit them with a generated message.",
  ),
  timeoutSeconds: positiveNumber().default(10).describe("Timeout of one git call in seconds."),
});

const rescueSchema = strictObject({
  finalAttempt: z.boolean().default(true).describe(
    "When the run ends (cap, budget, stall, failure, interrupt), rescue the work the agent left uncommitted: ask the agent to commit it (`git.rescue`), then commit what is left (`git.autoCommit`). Files uncommitted before the run stay the user's.",
  ),
  timeoutSeconds: positiveNumber().default(120).describe(
    "Timeout of one commit rescue prompt in seconds.",
  ),
});

const circuitBreakerSchema = strictObject({
  noProgressThreshold: positiveInt().default(3).describe(
    "Iterations in a row without progress that end the run stalled: no commits, no file changes, and the agent not active (no probe answer said waiting, working or agents_active, no background task ran at its stop). Probes that timed out or gave no parseable answer count; so does a claim of done without a commit or a change, and, after two such rounds in a row, a round of probes that ran out on waiting.",
  ),
  sameErrorThreshold: positiveInt().default(5).describe(
    "Iterations in a row ending with the same error that end the run stalled.",
  ),
});

const probeSchema = strictObject({
  enabled: z.boolean().default(true).describe("Whether to probe at all."),
  maxProbes: positiveInt().default(5).describe(
    "Probes per iteration while the agent says waiting or working; new commits end the probing.",
  ),
  probeIntervalSeconds: nonNegativeNumber().default(30).describe(
    "Wait between probes in seconds.",
  ),
  probeTimeoutSeconds: positiveNumber().default(60).describe("Timeout of one probe in seconds."),
});

const finishSchema = strictObject({
  tool: z.boolean().default(true).describe(
    "Offer the agent the `finish` tool next to complete_task: it records the outcome like complete_task and runs the finish workflow at once, answering with the status and the next actions.",
  ),
  model: nonEmptyString().default(DEFAULT_FINISH_MODEL).describe(
    "The lightweight model of the finish workflow's model steps (summary, learnings, skills, next actions), instead of the run's model.",
  ),
  extractLearnings: z.boolean().default(true).describe(
    "Ask the finish model to extract learnings when a run ends (skipped when the run's budget is spent).",
  ),
  maxCostUsd: nonNegativeNumber().default(0.05).describe(
    "Cost cap of the finish workflow's model steps in USD: once reached, the steps left fall back to what the run recorded; 0 runs no model step.",
  ),
  maxLearnings: nonNegativeInt().default(5).describe(
    "Learnings of earlier runs put into `{uv-learnings}`.",
  ),
  maxLearningsChars: positiveInt().default(2000).describe(
    "Characters of learnings at most in `{uv-learnings}`.",
  ),
});

const embeddingsSchema = strictObject({
  provider: z.enum(["lexical", "openai", "voyage", "http"]).describe(
    "`lexical`: local, no network and no model: hashed words and word pieces, similar when texts share words (not meaning); `openai`, `voyage`, or `http` (any OpenAI-compatible embeddings endpoint): a model's semantic vectors.",
  ),
  url: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }).optional().describe(
    "The embeddings endpoint; required for `http`.",
  ),
  model: nonEmptyString().optional().describe(
    "The model; required for `http` (default `text-embedding-3-small` for openai, `voyage-3.5-lite` for voyage).",
  ),
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    error: "expected an environment variable name",
  }).optional().describe(
    "Environment variable holding the API key, never stored or logged (default `OPENAI_API_KEY` for openai, `VOYAGE_API_KEY` for voyage, none for http).",
  ),
  dimensions: positiveInt().optional().describe(
    "Vector size: the lexical vectors' (default 512), or the size asked of the model.",
  ),
  minSimilarity: z.number().min(-1).max(1, { error: "expected a number from -1 to 1" })
    .optional().describe(
      "A learning found by its vector alone must be this similar (cosine) to the query (default 0.15 for lexical, 0.3 otherwise).",
    ),
  duplicateSimilarity: z.number().min(0).max(1, { error: "expected a number from 0 to 1" })
    .optional().describe(
      "A new learning this similar (cosine) to a stored one is that learning, seen again (default 0.9 for lexical, 0.92 otherwise).",
    ),
  timeoutSeconds: positiveNumber().default(30).describe(
    "Time limit of one request to the endpoint in seconds.",
  ),
}).superRefine((embeddings, context) => {
  if (embeddings.provider !== "http") return;
  for (const field of ["url", "model"] as const) {
    if (embeddings[field] === undefined) {
      context.addIssue({
        code: "custom",
        path: [field],
        message: `required when "provider" is "http"`,
      });
    }
  }
});

const learningsSchema = strictObject({
  embeddings: embeddingsSchema.optional().describe(
    "Vectors for hybrid search (keyword and vector results fused) and for deduplication by meaning; without it, keyword search (FTS5) only.",
  ),
});

const retrySchema = strictObject({
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
    "Longest wait for a rate limit to reset, and for Claude Code's API retries in all over the run (--max-wait).",
  ),
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
  prompts: promptsSchema.prefault({}).describe("Where prompt templates come from."),
  parameters: z.record(
    z.string().regex(PARAMETER_NAME_PATTERN, {
      error: `expected a parameter name of letters, digits, "_" and "-", starting with a letter`,
    }),
    parameterSchema,
  ).default(() => ({})).describe(
    "CLI parameters exposed to templates as `uv-` variables.",
  ),
  actions: actionsSchema.prefault({}).describe(
    "Structured action blocks the agent may emit in fenced code blocks.",
  ),
  github: githubSchema.prefault({}).describe("GitHub integration settings."),
  logging: loggingSchema.prefault({}).describe("Where the JSONL run log goes."),
  verify: verifySchema.prefault({}).describe("Checkers that must pass before the run completes."),
  git: gitSchema.prefault({}).describe("Git evidence and commit rescue."),
  rescue: rescueSchema.prefault({}).describe(
    "The commit rescue: the final attempt when the run ends, and its timeout.",
  ),
  circuitBreaker: circuitBreakerSchema.prefault({}).describe(
    "Stops a loop that makes no progress.",
  ),
  probe: probeSchema.prefault({}).describe(
    "Asking the agent for its status when the evidence is unclear.",
  ),
  finish: finishSchema.prefault({}).describe(
    "The finish workflow: summary, learnings, skills, persistence, cleanup.",
  ),
  retry: retrySchema.prefault({}).describe("Retrying iterations that hit API faults."),
  learnings: learningsSchema.prefault({}).describe(
    "How learnings of earlier runs are searched and deduplicated.",
  ),
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
 * use `parseDefinition` to validate a file with readable errors.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentDefinitionSchema } from "./schema.ts";
 *
 * const result = agentDefinitionSchema.safeParse({
 *   name: "x",
 *   behavior: { completionType: "issue" },
 * });
 * assert.equal(result.success, true);
 * ```
 */
export const agentDefinitionSchema: z.ZodType<AgentDefinition> = definitionSchema;
