/**
 * The shape of an agent definition (`.agent/<name>/agent.json`) after defaults
 * are applied. The zod schema in `schema.ts` validates files against it.
 *
 * @module
 */

/**
 * Which completion handler decides that the work is finished. `task` is the
 * command line's default for `--task` with the built-in agent (done when
 * the agent reports success and the evidence passes); agent.json chooses
 * among {@linkcode COMPLETION_TYPES}.
 */
export type CompletionType =
  | "issue"
  | "project"
  | "iterate"
  | "manual"
  | "custom"
  | "task";

/**
 * Every built-in completion type, in the order the docs list them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { COMPLETION_TYPES } from "./mod.ts";
 *
 * assert.ok(COMPLETION_TYPES.includes("manual"));
 * assert.equal(COMPLETION_TYPES.length, 6);
 * ```
 */
export const COMPLETION_TYPES: readonly CompletionType[] = [
  "issue",
  "project",
  "iterate",
  "manual",
  "custom",
  "task",
];

/**
 * Permission modes an agent.json may ask for. Bypassing permissions is only
 * possible through the explicit `--dangerously-skip-permissions` CLI flag.
 */
export type DefinitionPermissionMode = "default" | "acceptEdits" | "plan";

/** Where Claude Code reads its own settings from (the SDK's `settingSources`). */
export type SettingSource = "user" | "project" | "local";

/** Per-handler settings in `behavior.completionConfig`. */
export interface CompletionConfig {
  /** Iteration target for `iterate`, and the default cap for every type. */
  maxIterations?: number;
  /** Keyword that ends a `manual` run. */
  completionKeyword?: string;
  /** Module (relative to the agent folder) whose default export builds a `custom` handler. */
  handlerPath?: string;
}

/** How the agent runs: handler, tools, permissions, model and budget. */
export interface AgentBehavior {
  /** System prompt template (relative to the agent folder); overrides the registry's `system` key. */
  systemPromptPath?: string;
  /**
   * Which completion handler decides that the work is finished: a built-in
   * type, or one registered in code with `registerCompletionHandler`.
   * @default "iterate"
   */
  completionType: CompletionType | (string & Record<never, never>);
  /** Settings of the completion handler. @default {} */
  completionConfig: CompletionConfig;
  /** Tools the agent may use without asking. */
  allowedTools: string[];
  /** Tools removed from the agent's context. @default [] */
  disallowedTools: string[];
  /** Claude Code permission mode of the agent's sessions. @default "acceptEdits" */
  permissionMode: DefinitionPermissionMode;
  /** Model name passed to Claude Code; unset means Claude Code's default. */
  model?: string;
  /** Turn cap for one session (iteration). */
  maxTurns?: number;
  /** Cost cap in USD for the whole run. */
  maxBudgetUsd?: number;
  /**
   * The agent backend: `claude` (the Claude Agent SDK), an ACP preset name, or
   * an explicit ACP command. @default "claude"
   */
  backend: BackendName;
  /**
   * `fresh` starts a new session per iteration; `continue` keeps one Claude
   * Code session (and process) for the whole run. @default "fresh"
   */
  session: "fresh" | "continue";
  /**
   * With `fresh` sessions, start the next iteration's Claude Code while the
   * current one works (about 0.3 s less per iteration, about 250 MB more
   * memory meanwhile). @default true
   */
  prewarm: boolean;
  /** Claude Code setting sources. @default ["project"] */
  settingSources: SettingSource[];
  /** Time budget of the whole run in seconds; unset means none. */
  maxDurationSeconds?: number;
  /**
   * Block a session that stops without calling complete_task. Off, the stop
   * hook still runs the configured checks at every stop. @default true
   */
  requireCompleteTask: boolean;
  /** How often per iteration the stop hook sends the agent back. @default 2 */
  maxContinuationAttempts: number;
}

/** Runs a command; passes on exit 0. */
export interface CommandCheckConfig {
  /** Checker type. */
  type: "command";
  /** Shell command (`sh -c`), e.g. `deno task test`. */
  command: string;
  /** Timeout of the command in seconds. @default 600 */
  timeoutSeconds: number;
  /** Name in feedback and logs. @default "command" */
  name?: string;
}

/** New commits since the run's baseline, optionally a clean tree. */
export interface GitCheckConfig {
  /** Checker type. */
  type: "git";
  /** Commits required since the run's baseline. @default 1 */
  minCommits: number;
  /** Require no uncommitted changes. @default false */
  cleanTree: boolean;
  /** Name in feedback and logs. @default "git" */
  name?: string;
}

/** Paths that must exist. */
export interface FilesCheckConfig {
  /** Checker type. */
  type: "files";
  /** Paths relative to the working directory. */
  paths: string[];
  /** Name in feedback and logs. @default "files" */
  name?: string;
}

/** The agent's own TodoWrite plan must be completed. */
export interface PlanCheckConfig {
  /** Checker type. */
  type: "plan";
  /** Name in feedback and logs. @default "plan" */
  name?: string;
}

/** An LLM judge in a separate tool-less session. */
export interface JudgeCheckConfig {
  /** Checker type. */
  type: "judge";
  /** What must be true. */
  criteria: string;
  /** Model for the judge. */
  model?: string;
  /** Timeout of the judge session in seconds. @default 180 */
  timeoutSeconds: number;
  /** Name in feedback and logs. @default "judge" */
  name?: string;
}

/** A checker module in the agent folder. */
export interface CustomCheckConfig {
  /** Checker type. */
  type: "custom";
  /** Module path relative to the agent folder. */
  path: string;
  /** Passed to the module's factory, or to its class's constructor. @default {} */
  options: Record<string, unknown>;
  /** Name in feedback and logs. @default the checker's own name, else the file's name without its extension */
  name?: string;
}

/** One configured checker. */
export type CheckConfig =
  | CommandCheckConfig
  | GitCheckConfig
  | FilesCheckConfig
  | PlanCheckConfig
  | JudgeCheckConfig
  | CustomCheckConfig;

/** Evidence required before "done" is accepted. */
export interface VerifyConfig {
  /** `all` must pass, or `any` may pass. @default "all" */
  mode: "all" | "any";
  /** The checkers, in order; when given, they replace the detected checks. @default [] */
  checks: CheckConfig[];
  /** Without `checks`, detect the repository's own checks and gate completion on them. @default true */
  detect: boolean;
  /** Run the detected checks on the starting commit beside the first session. @default true */
  baseline: boolean;
  /**
   * Globs of the test files that define done; runner configuration
   * ({@linkcode RUNNER_CONFIG_GLOBS}) is protected besides. @default DEFAULT_PROTECTED_GLOBS
   */
  protect: string[];
  /** Timeout of one detected check in seconds. @default 600 */
  checkTimeoutSeconds: number;
  /** Wait for the pull request's checks; on by default when a pull request is created. */
  prChecks?: boolean;
  /** How long to wait for the pull request's checks in seconds. @default 1800 */
  prChecksTimeoutSeconds: number;
  /**
   * `held-out`: a verifier session writes a reproduction test before the work
   * starts, kept only when it fails on the starting commit; done needs it to
   * pass. `worker`: one of the worker's own new or changed tests must fail on
   * the starting commit and pass at the end. `both`: the two. `off`: neither.
   * Unset: `both` for issue runs (the worker's test for issues labelled as
   * bugs), `held-out` for project runs, `off` otherwise.
   */
  reproduce?: ReproduceMode;
  /** The backend of the verifier and reviewer sessions; the run's when unset. */
  reproduceBackend?: BackendName;
  /** The model of the verifier and reviewer sessions; the run's when unset. */
  reproduceModel?: string;
  /** Cost cap of the verifier session in USD. @default 1 */
  reproduceMaxCostUsd: number;
  /** Turn cap of the verifier session. @default 30 */
  reproduceMaxTurns: number;
  /** Issue labels that make an issue run a bug fix. @default DEFAULT_BUG_LABELS */
  bugLabels: string[];
  /** Send declarations to an independent reviewer session. @default true */
  reviewDeclarations: boolean;
  /** Cost cap of one reviewer session in USD. @default 0.5 */
  reviewMaxCostUsd: number;
  /** Turn cap of one reviewer session. @default 20 */
  reviewMaxTurns: number;
  /** Changed-line coverage and mutants of the changed lines, at the claim that completes. */
  changedLines: ChangedLinesConfig;
  /** Run agent sessions in an OS sandbox: when one can be had, always, or never. @default "auto" */
  sandbox: SandboxMode;
  /**
   * What a sandboxed session reaches of the network: its model API only, the
   * model API and the listed hosts, or the host's whole network. @default "model"
   */
  network: NetworkSetting;
}

/**
 * `verify.network`: `model` lets a sandboxed session reach only its model's
 * API (and the hosts its login refreshes at); `{ allow: [...] }` adds hosts
 * (`registry.npmjs.org`, `*.pythonhosted.org`, `127.0.0.1:5432`); `open` keeps
 * the host's network.
 */
export type NetworkSetting = "open" | "model" | { allow: string[] };

/** `verify.changedLines`: proof of the change, measured and optionally gated. */
export interface ChangedLinesConfig {
  /** Measure the figures at the claim that completes. @default true */
  measure: boolean;
  /** The share of changed executable lines the tests must run (0..1); unset: reported only. */
  coverage?: number;
  /** The share of tried mutants the tests must kill (0..1); unset: reported only. */
  mutants?: number;
  /** The mutants' time box, as a multiple of the suite's own time. @default 2 */
  budget: number;
}

/**
 * `verify.sandbox`: `auto` sandboxes agent sessions when a sandbox can be had
 * here, `required` refuses to run without one (exit 2), `off` never does.
 */
export type SandboxMode = "auto" | "required" | "off";

/** A backend as agent.json names it: `claude`, an ACP preset, or an explicit ACP command. */
export type BackendName =
  | "claude"
  | "codex"
  | "gemini"
  | "opencode"
  | "claude-acp"
  | { acp: { command: string[]; env?: Record<string, string>; mode?: string } };

/** What `verify.reproduce` asks for: the verifier's held-out test, the worker's own, both, or none. */
export type ReproduceMode = "held-out" | "worker" | "both" | "off";

/** The issue labels that make an issue run a bug fix unless `verify.bugLabels` says otherwise. */
export const DEFAULT_BUG_LABELS: readonly string[] = [
  "bug",
  "type: bug",
  "type/bug",
  "kind/bug",
  "defect",
  "regression",
];

/**
 * The test files that define done unless `verify.protect` says otherwise:
 * test files and folders of the common ecosystems, at any depth, so that the
 * tests of a package in a monorepo count as much as those at the root.
 */
export const DEFAULT_PROTECTED_GLOBS: readonly string[] = [
  "**/test/**",
  "**/tests/**",
  "**/Tests/**",
  "**/__tests__/**",
  "**/spec/**",
  "**/testdata/**",
  "**/test.*",
  "**/tests.*",
  "**/*.test.*",
  "**/*.spec.*",
  "**/*_test.*",
  "**/*_spec.*",
  "**/*-test.*",
  "**/*-spec.*",
  "**/test_*.*",
  "**/test-*.*",
];

/**
 * Runner configuration written as source, protected whatever the change:
 * the files a test runner loads by name (pytest's `conftest.py`, nox's
 * `noxfile.py`, the jest, vitest, mocha, karma and playwright configs,
 * cargo's `build.rs`, Python's `sitecustomize.py`).
 * Configuration that is not source (`pytest.ini`, `package.json`,
 * `Cargo.toml`, Makefiles, `.npmrc`, workflows, dependency folders, ...) is
 * protected by the allowlist: a file that is not plain source or
 * documentation of the repository's languages is protected by what it is,
 * not by its name (see evidence/judge/plain_source.ts).
 */
export const RUNNER_CONFIG_GLOBS: readonly string[] = [
  "**/conftest.py",
  "**/noxfile.py",
  "**/jest.config.*",
  "**/vitest.config.*",
  "**/vitest.workspace.*",
  "**/.mocharc*",
  "**/karma.conf.*",
  "**/playwright.config.*",
  // Code that runs before any test: cargo's build script, Python's start-up hooks.
  "**/build.rs",
  "**/sitecustomize.py",
  "**/usercustomize.py",
];

/** Validation rules of a definition parameter. */
export interface ParameterValidation {
  /** Regular expression a string value must match. */
  pattern?: string;
  /** Smallest allowed number. */
  min?: number;
  /** Largest allowed number. */
  max?: number;
  /** The allowed values. */
  enum?: Array<string | number>;
}

/** A parameter the agent takes on the command line and exposes to templates. */
export interface ParameterSpec {
  /** The value's type. @default "string" */
  type: "string" | "number" | "boolean";
  /** Shown in `--help`. @default "" */
  description: string;
  /** Whether the flag must be given. @default false */
  required: boolean;
  /** Value used when the flag is absent. */
  default?: string | number | boolean;
  /** The CLI flag, with leading dashes (`--topic`); derived from the name when absent. */
  cli?: string;
  /** Rules the value must satisfy. */
  validation?: ParameterValidation;
}

/** Structured action blocks the agent may emit in fenced code blocks. */
export interface ActionsConfig {
  /** Whether action blocks are looked for at all. @default true */
  enabled: boolean;
  /** Action types that are recognised; empty means any. @default [] */
  types: string[];
  /** The info string that marks a fenced code block as an action block. @default "action" */
  outputFormat: string;
}

/** GitHub integration settings. */
export interface GithubConfig {
  /** Labels the issue handler manages. */
  labels: {
    /** Added at the start of a run, removed at the end. */
    inProgress?: string;
    /** Added when the run ends blocked. */
    blocked?: string;
  };
  /** Post a short progress comment after each iteration. @default false */
  comment: boolean;
  /** Who closes the issue: the runner once the evidence passes, or the agent. @default "runner" */
  closeIssue: "runner" | "agent";
}

/** Where the JSONL run log goes. */
export interface LoggingConfig {
  /** Relative to the working directory. @default ".agent/<name>/logs" */
  directory: string;
  /** The log format; JSON Lines is the only one. @default "jsonl" */
  format: "jsonl";
}

/** Where prompt templates come from. */
export interface PromptsConfig {
  /** Registry JSON (relative to the agent folder) mapping keys to templates. @default "prompts/registry.json" */
  registry: string;
  /** Folder (relative to the agent folder) searched for `<key>.md` before the built-in templates. @default "prompts" */
  fallbackDir: string;
}

/** Git evidence and commit rescue. */
export interface GitConfig {
  /** Ask the agent to commit uncommitted work when it says it is done. @default true */
  rescue: boolean;
  /** When the agent still leaves changes uncommitted, commit them itself. @default false */
  autoCommit: boolean;
  /** Timeout of one git call in seconds. @default 10 */
  timeoutSeconds: number;
}

/** The commit rescue: the final attempt when the run ends, and its timeout. */
export interface RescueConfig {
  /**
   * When the run ends (cap, budget, stall, failure, interrupt), rescue the
   * work the agent left uncommitted. Files uncommitted before the run stay
   * the user's. @default true
   */
  finalAttempt: boolean;
  /** Timeout of one commit rescue prompt in seconds. @default 120 */
  timeoutSeconds: number;
}

/** Stops a loop that makes no progress. */
export interface CircuitBreakerConfig {
  /**
   * Iterations in a row without commits or file changes, whose agent was not active (no probe
   * answer said waiting, working or agents_active; no background task at its stop), or whose
   * probes ran out on waiting after two such rounds in a row. @default 3
   */
  noProgressThreshold: number;
  /** Iterations in a row that end with the same error. @default 5 */
  sameErrorThreshold: number;
}

/** Asking the agent for its status when the evidence is unclear. */
export interface ProbeConfig {
  /** Whether to probe at all. @default true */
  enabled: boolean;
  /** Probes per iteration while the agent says waiting or working; new commits end them. @default 5 */
  maxProbes: number;
  /** Wait between probes in seconds. @default 30 */
  probeIntervalSeconds: number;
  /** Timeout of one probe in seconds. @default 60 */
  probeTimeoutSeconds: number;
}

/** Retrying iterations that hit API faults. */
export interface RetryConfig {
  /** Attempts of one iteration (the first and the retries). @default 3 */
  maxAttempts: number;
  /** First backoff in seconds; it doubles, with jitter. @default 2 */
  baseDelaySeconds: number;
  /** Longest backoff in seconds. @default 60 */
  maxDelaySeconds: number;
  /** A session with no message for this long hangs and is aborted. @default 1200 */
  iterationTimeoutSeconds: number;
  /**
   * Longest wait for a rate limit to reset, and for Claude Code's API retries
   * in all over the run (`--max-wait`). @default 900
   */
  maxWaitSeconds: number;
}

/** The model of the finish workflow's model steps unless `finish.model` says otherwise. */
export const DEFAULT_FINISH_MODEL = "claude-haiku-4-5";

/** The finish workflow. */
export interface FinishConfig {
  /**
   * Offer the agent the `finish` tool next to complete_task: it records the
   * outcome like complete_task and runs the finish workflow at once.
   * @default true
   */
  tool: boolean;
  /**
   * The lightweight model of the finish workflow's model steps (summary,
   * learnings, skills, next actions), instead of the run's model.
   * @default "claude-haiku-4-5"
   */
  model: string;
  /**
   * Ask the finish model to extract learnings when a run ends (skipped when
   * the run's budget is spent). @default true
   */
  extractLearnings: boolean;
  /**
   * Cost cap of the finish workflow's model steps in USD: once reached, the
   * steps left fall back to what the run recorded; 0 runs no model step.
   * @default 0.05
   */
  maxCostUsd: number;
  /** Learnings of earlier runs put into `{uv-learnings}`. @default 5 */
  maxLearnings: number;
  /** Characters of learnings at most in `{uv-learnings}`. @default 2000 */
  maxLearningsChars: number;
}

/** Where learning vectors come from (`learnings.embeddings`). */
export interface EmbeddingsConfig {
  /**
   * `lexical`: local, no network and no model: hashed words and word pieces,
   * similar when texts share words (not meaning); `openai`, `voyage`, or `http`
   * (any OpenAI-compatible embeddings endpoint): a model's semantic vectors.
   */
  provider: "lexical" | "openai" | "voyage" | "http";
  /** The embeddings endpoint; required for `http`. @default the provider's */
  url?: string;
  /** The model; required for `http`. @default `text-embedding-3-small` (openai), `voyage-3.5-lite` (voyage) */
  model?: string;
  /**
   * Environment variable holding the API key (never stored or logged).
   * @default `OPENAI_API_KEY` (openai), `VOYAGE_API_KEY` (voyage), none (http)
   */
  apiKeyEnv?: string;
  /** Vector size: the lexical vectors' (default 512), or the size asked of the model. */
  dimensions?: number;
  /** A learning found by its vector alone must be this similar to the query. @default 0.15 (lexical), 0.3 */
  minSimilarity?: number;
  /** A new learning this similar to a stored one is that learning, seen again. @default 0.9 (lexical), 0.92 */
  duplicateSimilarity?: number;
  /** Time limit of one request to the endpoint in seconds. @default 30 */
  timeoutSeconds: number;
}

/** Learnings of earlier runs: how they are searched and told apart. */
export interface LearningsConfig {
  /**
   * Vectors for hybrid search (keyword and vector results fused) and for
   * deduplication by meaning; without it, keyword search (FTS5) only.
   */
  embeddings?: EmbeddingsConfig;
}

/** A validated agent definition with every default filled in. */
export interface AgentDefinition {
  /** Editor schema reference; ignored. */
  $schema?: string;
  /** Definition format version. @default "1" */
  version: string;
  /** Agent name, `^[a-z][a-z0-9-]*$`, equal to its folder name. */
  name: string;
  /** Human-readable name. @default the name */
  displayName: string;
  /** What the agent is for, shown by `--list`. @default "" */
  description: string;
  /** How the agent runs. */
  behavior: AgentBehavior;
  /** Prompt templates. */
  prompts: PromptsConfig;
  /** CLI parameters exposed as `uv-` variables. @default {} */
  parameters: Record<string, ParameterSpec>;
  /** Structured action blocks. */
  actions: ActionsConfig;
  /** GitHub integration. */
  github: GithubConfig;
  /** Run logs. */
  logging: LoggingConfig;
  /** Checkers that must pass before the run completes. */
  verify: VerifyConfig;
  /** Git evidence and commit rescue. */
  git: GitConfig;
  /** The commit rescue's final attempt and timeout. */
  rescue: RescueConfig;
  /** The no-progress circuit breaker. */
  circuitBreaker: CircuitBreakerConfig;
  /** The status probe. */
  probe: ProbeConfig;
  /** The finish workflow. */
  finish: FinishConfig;
  /** How learnings of earlier runs are searched and deduplicated. */
  learnings: LearningsConfig;
  /** Retrying iterations that hit API faults. */
  retry: RetryConfig;
}

/** A definition together with where it was found. */
export interface LoadedDefinition {
  /** The validated definition. */
  definition: AgentDefinition;
  /** URL of the agent.json (file: for local agents, possibly https: for built-ins run from JSR). */
  url: URL;
  /** URL of the agent folder, ending in a slash; relative paths in the definition resolve against it. */
  agentDir: URL;
  /** True when the definition is the built-in one shipped with finishline. */
  builtin: boolean;
  /** Path shown in messages: relative to the working directory for local agents. */
  displayPath: string;
}
