import assert from "node:assert/strict";
import {
  type AgentDefinition,
  DEFAULT_BUG_LABELS,
  DEFAULT_PROTECTED_GLOBS,
} from "../../agents/definition/definition_types.ts";
import { generateAgentSchema } from "../../agents/schemas/generate.ts";
import { DEFAULT_TOOLS, parse, REPO_ROOT, withBehavior } from "./_helpers.ts";

Deno.test("a minimal definition gets every default filled in", () => {
  const definition = parse(
    `{ "name": "x", "behavior": { "completionConfig": { "maxIterations": 2 } } }`,
  );
  const expected: AgentDefinition = {
    version: "1",
    name: "x",
    displayName: "x",
    description: "",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 2 },
      allowedTools: DEFAULT_TOOLS,
      disallowedTools: [],
      permissionMode: "acceptEdits",
      backend: "claude",
      session: "fresh",
      prewarm: true,
      settingSources: ["project"],
      requireCompleteTask: true,
      maxContinuationAttempts: 2,
    },
    prompts: { registry: "prompts/registry.json", fallbackDir: "prompts" },
    parameters: {},
    actions: { enabled: true, types: [], outputFormat: "action" },
    github: { labels: {}, comment: false, closeIssue: "runner" },
    logging: { directory: ".agent/x/logs", format: "jsonl" },
    verify: {
      mode: "all",
      checks: [],
      detect: true,
      baseline: true,
      protect: [...DEFAULT_PROTECTED_GLOBS],
      checkTimeoutSeconds: 600,
      prChecksTimeoutSeconds: 1800,
      reproduceMaxCostUsd: 1,
      reproduceMaxTurns: 30,
      bugLabels: [...DEFAULT_BUG_LABELS],
      reviewDeclarations: true,
      reviewMaxCostUsd: 0.5,
      reviewMaxTurns: 20,
      changedLines: { measure: true, budget: 2 },
      sandbox: "auto",
      network: "model",
    },
    git: { rescue: true, autoCommit: false, timeoutSeconds: 10 },
    rescue: { finalAttempt: true, timeoutSeconds: 120 },
    circuitBreaker: { noProgressThreshold: 3, sameErrorThreshold: 5 },
    probe: { enabled: true, maxProbes: 5, probeIntervalSeconds: 30, probeTimeoutSeconds: 60 },
    finish: {
      tool: true,
      model: "claude-haiku-4-5",
      extractLearnings: true,
      maxCostUsd: 0.05,
      maxLearnings: 5,
      maxLearningsChars: 2000,
    },
    retry: {
      maxAttempts: 3,
      baseDelaySeconds: 2,
      maxDelaySeconds: 60,
      iterationTimeoutSeconds: 1200,
      maxWaitSeconds: 900,
    },
    learnings: {},
  };
  assert.deepEqual(definition, expected);
});

Deno.test("verify checks and the new behavior fields get their defaults", () => {
  const definition = parse(withBehavior({
    maxDurationSeconds: 0.5,
    maxContinuationAttempts: 0,
  }, {
    verify: {
      checks: [
        { type: "command", command: "deno task test" },
        { type: "git" },
        { type: "files", paths: ["README.md"] },
        { type: "plan" },
        { type: "judge", criteria: "The README is accurate" },
        { type: "custom", path: "checks/links.ts" },
      ],
    },
  }));
  assert.equal(definition.behavior.maxDurationSeconds, 0.5);
  assert.equal(definition.behavior.maxContinuationAttempts, 0);
  assert.equal(definition.behavior.requireCompleteTask, true);
  assert.deepEqual(definition.verify, {
    mode: "all",
    checks: [
      { type: "command", command: "deno task test", timeoutSeconds: 600 },
      { type: "git", minCommits: 1, cleanTree: false },
      { type: "files", paths: ["README.md"] },
      { type: "plan" },
      { type: "judge", criteria: "The README is accurate", timeoutSeconds: 180 },
      { type: "custom", path: "checks/links.ts", options: {} },
    ],
    detect: true,
    baseline: true,
    protect: [...DEFAULT_PROTECTED_GLOBS],
    checkTimeoutSeconds: 600,
    prChecksTimeoutSeconds: 1800,
    reproduceMaxCostUsd: 1,
    reproduceMaxTurns: 30,
    bugLabels: [...DEFAULT_BUG_LABELS],
    reviewDeclarations: true,
    reviewMaxCostUsd: 0.5,
    reviewMaxTurns: 20,
    changedLines: { measure: true, budget: 2 },
    sandbox: "auto",
    network: "model",
  });
});

Deno.test("defaults are fresh copies, not shared between definitions", () => {
  const first = parse(withBehavior({}));
  first.behavior.allowedTools.push("WebFetch");
  first.parameters.added = { type: "string", description: "", required: false };
  const second = parse(withBehavior({}));
  assert.deepEqual(second.behavior.allowedTools, DEFAULT_TOOLS);
  assert.deepEqual(second.parameters, {});
});

Deno.test("a full definition keeps every value it sets", () => {
  const full: AgentDefinition = {
    $schema: "../../agents/schemas/agent.schema.json",
    version: "2",
    name: "docs-writer",
    displayName: "Docs writer",
    description: "Writes the docs",
    behavior: {
      systemPromptPath: "prompts/system.md",
      completionType: "custom",
      completionConfig: {
        maxIterations: 5,
        completionKeyword: "DONE",
        handlerPath: "completion/h.ts",
      },
      allowedTools: ["Read"],
      disallowedTools: ["Bash"],
      permissionMode: "plan",
      model: "claude-sonnet-4-5",
      maxTurns: 30,
      maxBudgetUsd: 2.5,
      backend: "claude",
      session: "continue",
      prewarm: false,
      settingSources: ["user", "local"],
      maxDurationSeconds: 600,
      requireCompleteTask: false,
      maxContinuationAttempts: 3,
    },
    prompts: { registry: "my/registry.json", fallbackDir: "my" },
    parameters: {
      topic: {
        type: "string",
        description: "What to write about",
        required: true,
        cli: "--topic",
        validation: { pattern: "^[a-z]+$", enum: ["api", "cli"] },
      },
      pages: {
        type: "number",
        description: "",
        required: false,
        default: 3,
        validation: { min: 1, max: 9 },
      },
      dry_run: {
        type: "boolean",
        description: "",
        required: false,
        default: false,
      },
    },
    actions: { enabled: false, types: ["note"], outputFormat: "json-action" },
    github: {
      labels: { inProgress: "wip", blocked: "blocked" },
      comment: true,
      closeIssue: "agent",
    },
    logging: { directory: "logs/docs", format: "jsonl" },
    verify: {
      mode: "any",
      checks: [
        { type: "command", command: "deno task test", timeoutSeconds: 120, name: "tests" },
        { type: "git", minCommits: 2, cleanTree: true },
        { type: "files", paths: ["docs/index.md"] },
        { type: "plan" },
        {
          type: "judge",
          criteria: "Every page is written",
          model: "claude-haiku-4-5",
          timeoutSeconds: 60,
        },
        { type: "custom", path: "checks/links.ts", options: { strict: true } },
      ],
      detect: false,
      baseline: false,
      protect: ["spec/**"],
      checkTimeoutSeconds: 30,
      prChecks: false,
      prChecksTimeoutSeconds: 60,
      reproduce: "both",
      reproduceBackend: "codex",
      reproduceModel: "claude-haiku-4-5",
      reproduceMaxCostUsd: 0.5,
      reproduceMaxTurns: 12,
      bugLabels: ["kind/bug"],
      reviewDeclarations: false,
      reviewMaxCostUsd: 0.25,
      reviewMaxTurns: 5,
      changedLines: { measure: false, coverage: 0.8, mutants: 0.6, budget: 3 },
      sandbox: "required",
      network: { allow: ["registry.npmjs.org", "*.pythonhosted.org"] },
    },
    git: { rescue: false, autoCommit: true, timeoutSeconds: 30 },
    rescue: { finalAttempt: false, timeoutSeconds: 45 },
    circuitBreaker: { noProgressThreshold: 4, sameErrorThreshold: 2 },
    probe: { enabled: false, maxProbes: 1, probeIntervalSeconds: 0, probeTimeoutSeconds: 10 },
    finish: {
      tool: false,
      model: "claude-sonnet-4-5",
      extractLearnings: false,
      maxCostUsd: 0,
      maxLearnings: 3,
      maxLearningsChars: 500,
    },
    retry: {
      maxAttempts: 5,
      baseDelaySeconds: 1,
      maxDelaySeconds: 30,
      iterationTimeoutSeconds: 600,
      maxWaitSeconds: 60,
    },
    learnings: {
      embeddings: {
        provider: "http",
        url: "https://api.openai.com/v1/embeddings",
        model: "nomic-embed-text",
        apiKeyEnv: "OPENAI_API_KEY",
        dimensions: 256,
        minSimilarity: 0.4,
        duplicateSimilarity: 0.95,
        timeoutSeconds: 10,
      },
    },
  };
  assert.deepEqual(parse(JSON.stringify(full)), full);
});

Deno.test("agents/schemas/agent.schema.json is up to date with the zod schema", async () => {
  const committed = await Deno.readTextFile(
    new URL("agents/schemas/agent.schema.json", REPO_ROOT),
  );
  assert.ok(
    committed === generateAgentSchema(),
    "agents/schemas/agent.schema.json is out of date: run `deno task schema`",
  );
});

Deno.test("the generated JSON Schema describes the file as written", () => {
  const schema = JSON.parse(generateAgentSchema());
  assert.equal(schema.$schema, "http://json-schema.org/draft-07/schema#");
  assert.deepEqual(schema.required, ["name"]);
  assert.equal(schema.additionalProperties, false);
  assert.ok("$schema" in schema.properties);
  assert.deepEqual(schema.properties.behavior.properties.permissionMode.enum, [
    "default",
    "acceptEdits",
    "plan",
  ]);
  assert.equal(
    schema.properties.behavior.properties.completionType.default,
    "iterate",
  );
  // Editors offer the built-in types and accept names registered in code.
  assert.deepEqual(schema.properties.behavior.properties.completionType.anyOf, [
    { enum: ["issue", "project", "iterate", "manual", "custom", "task"] },
    {
      pattern: "^[a-z][a-z0-9-]*$",
      description: "A type registered in code with registerCompletionHandler.",
    },
  ]);
  assert.equal(
    schema.properties.behavior.required,
    undefined,
    "fields with defaults must be optional",
  );
  const { maxContinuationAttempts } = schema.properties.behavior.properties;
  assert.equal(maxContinuationAttempts.type, "integer");
  assert.equal(maxContinuationAttempts.minimum, 0);
  assert.equal(maxContinuationAttempts.maximum, 5);
  assert.equal(maxContinuationAttempts.default, 2);
  assert.deepEqual(schema.properties.verify.properties.mode.enum, ["all", "any"]);
  const checks = schema.properties.verify.properties.checks.items.oneOf as Array<
    { properties: { type: { const: string } }; required: string[] }
  >;
  assert.deepEqual(
    checks.map((check) => [check.properties.type.const, check.required]),
    [
      ["command", ["type", "command"]],
      ["git", ["type"]],
      ["files", ["type", "paths"]],
      ["plan", ["type"]],
      ["judge", ["type", "criteria"]],
      ["custom", ["type", "path"]],
    ],
  );
});
