import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  type AgentDefinition,
  DEFAULT_PROTECTED_GLOBS,
} from "../../agents/common/agent_definition.ts";
import { listAgents, loadDefinition, parseDefinition } from "../../agents/common/definition.ts";
import { UsageError } from "../../agents/common/errors.ts";
import { generateAgentSchema } from "../../agents/schemas/generate.ts";

const REPO_ROOT = new URL("../../", import.meta.url);
const DISPLAY_PATH = ".agent/x/agent.json";
const PREFIX = `Cannot load agent definition "${DISPLAY_PATH}": `;

function parse(text: string): AgentDefinition {
  return parseDefinition(text, { displayPath: DISPLAY_PATH });
}

/** Asserts that parsing fails with a UsageError whose message is exactly `message`. */
function assertRejects(text: string, message: string): void {
  assert.throws(() => parse(text), (error: unknown) => {
    assert.ok(
      error instanceof UsageError,
      `expected a UsageError, got ${error}`,
    );
    assert.equal(error.message, message);
    assert.equal(error.exitCode, 2);
    assert.ok(!error.message.includes("\n"), "the message must be one line");
    return true;
  });
}

/** A definition that passes every per-type rule, with `behavior` fields merged in. */
function withBehavior(
  behavior: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return JSON.stringify({
    name: "x",
    behavior: { completionType: "issue", ...behavior },
    ...extra,
  });
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-definition-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function writeAgent(
  root: string,
  name: string,
  text: string,
): Promise<void> {
  await Deno.mkdir(path.join(root, ".agent", name), { recursive: true });
  await Deno.writeTextFile(path.join(root, ".agent", name, "agent.json"), text);
}

const DEFAULT_TOOLS = [
  "Bash",
  "Read",
  "Write",
  "Edit",
  "Glob",
  "Grep",
  "TodoWrite",
];

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
    },
    git: { rescue: true, autoCommit: false, timeoutSeconds: 10 },
    circuitBreaker: { noProgressThreshold: 3, sameErrorThreshold: 5 },
    probe: { enabled: true, maxProbes: 3, probeIntervalSeconds: 30, probeTimeoutSeconds: 120 },
    finish: { extractLearnings: false, maxLearnings: 5, maxLearningsChars: 2000 },
    retry: {
      maxAttempts: 3,
      baseDelaySeconds: 2,
      maxDelaySeconds: 60,
      iterationTimeoutSeconds: 1200,
      maxWaitSeconds: 900,
    },
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
    },
    git: { rescue: false, autoCommit: true, timeoutSeconds: 30 },
    circuitBreaker: { noProgressThreshold: 4, sameErrorThreshold: 2 },
    probe: { enabled: false, maxProbes: 1, probeIntervalSeconds: 0, probeTimeoutSeconds: 10 },
    finish: { extractLearnings: true, maxLearnings: 3, maxLearningsChars: 500 },
    retry: {
      maxAttempts: 5,
      baseDelaySeconds: 1,
      maxDelaySeconds: 30,
      iterationTimeoutSeconds: 600,
      maxWaitSeconds: 60,
    },
  };
  assert.deepEqual(parse(JSON.stringify(full)), full);
});

Deno.test("JSONC syntax", async (t) => {
  await t.step("comments and trailing commas are accepted", () => {
    const definition = parse(`{
      // line comment
      "name": "x", /* block comment */
      "behavior": { "completionConfig": { "maxIterations": 1, }, },
    }`);
    assert.equal(definition.behavior.completionConfig.maxIterations, 1);
  });

  await t.step("a byte order mark is ignored", () => {
    assert.equal(parse(`\uFEFF${withBehavior({})}`).name, "x");
  });

  await t.step("a missing comma is reported with its line and column", () => {
    assertRejects(
      `{\n  "name": "x"\n  "behavior": {}\n}`,
      `${PREFIX}line 3, column 3: expected a comma`,
    );
  });

  await t.step(
    "a truncated file is reported as an unexpected end of file",
    () => {
      assertRejects(
        `{\n  "name": "x",\n  "behavior": {`,
        `${PREFIX}line 3, column 16: unexpected end of file, expected a closing "}"`,
      );
    },
  );

  await t.step("an empty file is an unexpected end of file", () => {
    assertRejects(
      "",
      `${PREFIX}line 1, column 1: unexpected end of file, expected a value`,
    );
  });

  await t.step("a value that is not an object is rejected", () => {
    assertRejects("[]", `${PREFIX}expected an object`);
  });
});

Deno.test("invalid definitions are rejected at the field that is wrong", async (t) => {
  await t.step("name that is not lowercase", () => {
    assertRejects(
      `{ "name": "My Agent", "behavior": { "completionType": "issue" } }`,
      `${PREFIX}"name": expected a lowercase name of letters, digits and dashes, starting with a letter`,
    );
  });

  await t.step("missing name", () => {
    assertRejects(
      `{ "behavior": { "completionType": "issue" } }`,
      `${PREFIX}"name": expected a string (the field is missing)`,
    );
  });

  await t.step("unknown completionType", () => {
    assertRejects(
      withBehavior({ completionType: "done" }),
      `${PREFIX}"behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom"`,
    );
  });

  await t.step("iterate without maxIterations", () => {
    assertRejects(
      `{ "name": "x", "behavior": { "completionType": "iterate" } }`,
      `${PREFIX}"behavior.completionConfig.maxIterations": expected a positive integer, required when "completionType" is "iterate"`,
    );
  });

  await t.step(
    "the default completionType (iterate) without any behavior",
    () => {
      assertRejects(
        `{ "name": "x" }`,
        `${PREFIX}"behavior.completionConfig.maxIterations": expected a positive integer, required when "completionType" is "iterate"`,
      );
    },
  );

  await t.step("manual without completionKeyword", () => {
    assertRejects(
      withBehavior({
        completionType: "manual",
        completionConfig: { maxIterations: 3 },
      }),
      `${PREFIX}"behavior.completionConfig.completionKeyword": expected a non-empty string, required when "completionType" is "manual"`,
    );
  });

  await t.step("custom without handlerPath", () => {
    assertRejects(
      withBehavior({ completionType: "custom" }),
      `${PREFIX}"behavior.completionConfig.handlerPath": expected a non-empty string, required when "completionType" is "custom"`,
    );
  });

  await t.step("maxIterations that is not a positive integer", () => {
    for (const value of [0, -1, 1.5, "3"]) {
      assertRejects(
        withBehavior({ completionConfig: { maxIterations: value } }),
        `${PREFIX}"behavior.completionConfig.maxIterations": expected a positive integer`,
      );
    }
  });

  await t.step("bypassPermissions names the CLI flag", () => {
    assertRejects(
      withBehavior({ permissionMode: "bypassPermissions" }),
      `${PREFIX}"behavior.permissionMode": "bypassPermissions" cannot be set in agent.json: bypassing permissions is only possible with the --dangerously-skip-permissions CLI flag`,
    );
  });

  await t.step("unknown permissionMode", () => {
    assertRejects(
      withBehavior({ permissionMode: "yolo" }),
      `${PREFIX}"behavior.permissionMode": expected one of "default", "acceptEdits", "plan"`,
    );
  });

  await t.step("budget and turns must be positive", () => {
    assertRejects(
      withBehavior({ maxBudgetUsd: 0 }),
      `${PREFIX}"behavior.maxBudgetUsd": expected a positive number`,
    );
    assertRejects(
      withBehavior({ maxTurns: 0 }),
      `${PREFIX}"behavior.maxTurns": expected a positive integer`,
    );
  });

  await t.step("array items are reported with their index", () => {
    assertRejects(
      withBehavior({ allowedTools: ["Bash", 3] }),
      `${PREFIX}"behavior.allowedTools[1]": expected a string`,
    );
    assertRejects(
      withBehavior({ settingSources: ["project", "global"] }),
      `${PREFIX}"behavior.settingSources[1]": expected one of "user", "project", "local"`,
    );
  });

  await t.step("unknown top-level key names the key and the known ones", () => {
    assertRejects(
      `{ "nmae": "x", "behavior": { "completionType": "issue" } }`,
      `${PREFIX}"nmae": unknown key, expected one of "$schema", "version", "name", "displayName", "description", "behavior", "prompts", "parameters", "actions", "github", "logging", "verify", "git", "circuitBreaker", "probe", "finish", "retry"`,
    );
  });

  await t.step(
    "unknown nested key is reported before the error it causes",
    () => {
      // The typo leaves completionType at "iterate", which would also miss maxIterations.
      assertRejects(
        `{ "name": "x", "behavior": { "completionTyp": "issue" } }`,
        `${PREFIX}"behavior.completionTyp": unknown key, expected one of "systemPromptPath", "completionType", "completionConfig", "allowedTools", "disallowedTools", "permissionMode", "model", "maxTurns", "maxBudgetUsd", "session", "prewarm", "settingSources", "maxDurationSeconds", "requireCompleteTask", "maxContinuationAttempts"`,
      );
      assertRejects(
        withBehavior({}, { github: { labels: { in_progress: "wip" } } }),
        `${PREFIX}"github.labels.in_progress": unknown key, expected one of "inProgress", "blocked"`,
      );
    },
  );

  await t.step("maxDurationSeconds must be positive", () => {
    for (const value of [0, -30, "600"]) {
      assertRejects(
        withBehavior({ maxDurationSeconds: value }),
        `${PREFIX}"behavior.maxDurationSeconds": expected a positive number`,
      );
    }
  });

  await t.step("requireCompleteTask must be a boolean", () => {
    assertRejects(
      withBehavior({ requireCompleteTask: "yes" }),
      `${PREFIX}"behavior.requireCompleteTask": expected true or false`,
    );
  });

  await t.step("maxContinuationAttempts outside 0..5 or not whole", () => {
    for (const value of [9, 6, -1, 1.5]) {
      assertRejects(
        withBehavior({ maxContinuationAttempts: value }),
        `${PREFIX}"behavior.maxContinuationAttempts": expected a whole number from 0 to 5`,
      );
    }
  });

  await t.step("verify.mode other than all or any", () => {
    assertRejects(
      withBehavior({}, { verify: { mode: "some" } }),
      `${PREFIX}"verify.mode": expected one of "all", "any"`,
    );
  });

  await t.step("verify that is not an object, or has an unknown key", () => {
    assertRejects(
      withBehavior({}, { verify: [] }),
      `${PREFIX}"verify": expected an object`,
    );
    assertRejects(
      withBehavior({}, { verify: { mod: "all" } }),
      `${PREFIX}"verify.mod": unknown key, expected one of "mode", "checks", "detect", "baseline", "protect", "checkTimeoutSeconds", "prChecks", "prChecksTimeoutSeconds"`,
    );
  });

  await t.step("a check of an unknown or missing type lists the types", () => {
    for (const check of [{ type: "lint" }, {}, { type: 3 }]) {
      assertRejects(
        withBehavior({}, { verify: { checks: [check] } }),
        `${PREFIX}"verify.checks[0].type": expected "type" to be one of "command", "git", "files", "plan", "judge", "custom"`,
      );
    }
  });

  await t.step("a check is reported at its index and field", () => {
    const at = (check: Record<string, unknown>) =>
      withBehavior({}, { verify: { checks: [{ type: "plan" }, check] } });
    assertRejects(
      at({ type: "command" }),
      `${PREFIX}"verify.checks[1].command": expected a string (the field is missing)`,
    );
    assertRejects(
      at({ type: "command", command: "" }),
      `${PREFIX}"verify.checks[1].command": expected a non-empty string`,
    );
    assertRejects(
      at({ type: "command", command: "deno task test", timeout: 60 }),
      `${PREFIX}"verify.checks[1].timeout": unknown key, expected one of "type", "command", "timeoutSeconds", "name"`,
    );
    assertRejects(
      at({ type: "git", minCommits: -1 }),
      `${PREFIX}"verify.checks[1].minCommits": expected a whole number of 0 or more`,
    );
    assertRejects(
      at({ type: "files", paths: [] }),
      `${PREFIX}"verify.checks[1].paths": expected at least one path`,
    );
    assertRejects(
      at({ type: "judge" }),
      `${PREFIX}"verify.checks[1].criteria": expected a string (the field is missing)`,
    );
    assertRejects(
      at({ type: "custom" }),
      `${PREFIX}"verify.checks[1].path": expected a string (the field is missing)`,
    );
  });

  await t.step("logging format other than jsonl", () => {
    assertRejects(
      withBehavior({}, { logging: { format: "text" } }),
      `${PREFIX}"logging.format": expected "jsonl"`,
    );
  });
});

Deno.test("invalid parameter specs are rejected", async (t) => {
  const withParameter = (spec: unknown, name = "topic") =>
    withBehavior({}, { parameters: { [name]: spec } });

  await t.step("a default that does not match the type", () => {
    assertRejects(
      withParameter({ type: "number", default: "3" }),
      `${PREFIX}"parameters.topic.default": expected a number, as "type" is "number"`,
    );
    assertRejects(
      withParameter({ default: true }),
      `${PREFIX}"parameters.topic.default": expected a string, as "type" is "string"`,
    );
  });

  await t.step("a pattern that is not a regular expression", () => {
    assertRejects(
      withParameter({ validation: { pattern: "(" } }),
      `${PREFIX}"parameters.topic.validation.pattern": expected a valid regular expression: Invalid regular expression: /(/: Unterminated group`,
    );
  });

  await t.step("a cli flag without two dashes", () => {
    assertRejects(
      withParameter({ cli: "-t" }),
      `${PREFIX}"parameters.topic.cli": expected a flag like "--topic" (two dashes, then lowercase letters, digits and dashes)`,
    );
  });

  await t.step("enum values of another type", () => {
    assertRejects(
      withParameter({ type: "number", validation: { enum: [1, "2"] } }),
      `${PREFIX}"parameters.topic.validation.enum[1]": expected a number, as "type" is "number"`,
    );
  });

  await t.step("a parameter name that does not start with a letter", () => {
    assertRejects(
      withParameter({}, "1topic"),
      `${PREFIX}"parameters.1topic": expected a parameter name of letters, digits, "_" and "-", starting with a letter`,
    );
  });

  await t.step("an unknown key in a parameter", () => {
    assertRejects(
      withParameter({ requried: true }),
      `${PREFIX}"parameters.topic.requried": unknown key, expected one of "type", "description", "required", "default", "cli", "validation"`,
    );
  });

  await t.step("a valid parameter gets its defaults", () => {
    const definition = parse(withParameter({ cli: "--topic" }));
    assert.deepEqual(definition.parameters.topic, {
      type: "string",
      description: "",
      required: false,
      cli: "--topic",
    });
  });
});

Deno.test("expectedName that differs from the name names both", () => {
  assert.throws(
    () =>
      parseDefinition(withBehavior({}), {
        displayPath: ".agent/y/agent.json",
        expectedName: "y",
      }),
    {
      name: "UsageError",
      message:
        `Cannot load agent definition ".agent/y/agent.json": "name": expected "y" to match the folder name, got "x"`,
    },
  );
});

Deno.test("the built-in iterator agent loads with its documented settings", async () => {
  await withTempDir(async (cwd) => {
    const loaded = await loadDefinition("iterator", { cwd });
    assert.equal(loaded.builtin, true);
    assert.equal(loaded.displayPath, "<builtin>/.agent/iterator/agent.json");
    assert.equal(
      loaded.url.href,
      new URL(".agent/iterator/agent.json", REPO_ROOT).href,
    );
    assert.equal(
      loaded.agentDir.href,
      new URL(".agent/iterator/", REPO_ROOT).href,
    );
    const { definition } = loaded;
    assert.equal(definition.name, "iterator");
    assert.equal(definition.displayName, "Iterator");
    assert.notEqual(definition.description, "");
    assert.equal(
      new URL(definition.$schema ?? "", loaded.agentDir).href,
      new URL("agents/schemas/agent.schema.json", REPO_ROOT).href,
    );
    assert.equal(definition.behavior.completionType, "iterate");
    assert.deepEqual(definition.behavior.completionConfig, {
      maxIterations: 10,
    });
    assert.deepEqual(definition.behavior.allowedTools, DEFAULT_TOOLS);
    assert.equal(definition.behavior.permissionMode, "acceptEdits");
    assert.equal(definition.behavior.session, "fresh");
  });
});

Deno.test("loadDefinition", async (t) => {
  await t.step(
    "a local agent shadows the built-in agent of the same name",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgent(
          cwd,
          "iterator",
          `{ "name": "iterator", "behavior": { "completionType": "issue" } }`,
        );
        const loaded = await loadDefinition("iterator", { cwd });
        assert.equal(loaded.builtin, false);
        assert.equal(
          loaded.displayPath,
          path.join(".agent", "iterator", "agent.json"),
        );
        assert.equal(loaded.definition.behavior.completionType, "issue");
        assert.equal(
          loaded.url.href,
          pathToFileURL(path.join(cwd, ".agent/iterator/agent.json")).href,
        );
        assert.equal(
          loaded.agentDir.href,
          pathToFileURL(path.join(cwd, ".agent/iterator")).href + "/",
        );
      });
    },
  );

  await t.step(
    "a built-in agent is found under the given builtinRoot",
    async () => {
      await withTempDir(async (root) => {
        await writeAgent(
          root,
          "helper",
          `{ "name": "helper", "behavior": { "completionType": "project" } }`,
        );
        await withTempDir(async (cwd) => {
          const loaded = await loadDefinition("helper", {
            cwd,
            builtinRoot: pathToFileURL(`${root}/`),
          });
          assert.equal(loaded.builtin, true);
          assert.equal(
            loaded.displayPath,
            "<builtin>/.agent/helper/agent.json",
          );
          assert.equal(loaded.definition.behavior.completionType, "project");
        });
      });
    },
  );

  await t.step(
    "a built-in agent is fetched when builtinRoot is an http URL",
    async () => {
      const requested: string[] = [];
      const server = Deno.serve({
        hostname: "127.0.0.1",
        port: 0,
        onListen() {},
      }, (request) => {
        const url = new URL(request.url);
        requested.push(url.pathname);
        return url.pathname === "/pkg/.agent/iterator/agent.json"
          ? new Response(
            `{ "name": "iterator", "behavior": { "completionType": "issue" } }`,
          )
          : new Response("not found", { status: 404 });
      });
      try {
        const builtinRoot = new URL(
          `http://127.0.0.1:${server.addr.port}/pkg/`,
        );
        await withTempDir(async (cwd) => {
          const loaded = await loadDefinition("iterator", { cwd, builtinRoot });
          assert.equal(loaded.builtin, true);
          assert.equal(
            loaded.agentDir.href,
            new URL(".agent/iterator/", builtinRoot).href,
          );
          await assert.rejects(loadDefinition("other", { cwd, builtinRoot }), {
            message: /^Unknown agent "other"/,
          });
          const agents = await listAgents({ cwd, builtinRoot });
          assert.deepEqual(
            agents.map((
              agent,
            ) => [agent.name, agent.builtin, agent.completionType]),
            [
              ["iterator", true, "issue"],
            ],
          );
        });
        assert.ok(requested.includes("/pkg/.agent/other/agent.json"));
      } finally {
        await server.shutdown();
      }
    },
  );

  await t.step(
    "an unknown agent says where it looked and how to list agents",
    async () => {
      await withTempDir(async (cwd) => {
        await assert.rejects(loadDefinition("nope", { cwd }), {
          name: "UsageError",
          message:
            `Unknown agent "nope": found no ".agent/nope/agent.json" in "${cwd}" and no built-in agent of that name; run with --list to see the agents`,
        });
      });
    },
  );

  await t.step("an invalid name is rejected before any lookup", async () => {
    await withTempDir(async (cwd) => {
      await assert.rejects(loadDefinition("../etc", { cwd }), {
        name: "UsageError",
        message:
          `Invalid agent name "../etc": expected lowercase letters, digits and dashes, starting with a letter`,
      });
    });
  });

  await t.step(
    "a local definition whose name differs from its folder is rejected",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgent(
          cwd,
          "docs",
          `{ "name": "writer", "behavior": { "completionType": "issue" } }`,
        );
        await assert.rejects(loadDefinition("docs", { cwd }), {
          name: "UsageError",
          message:
            `Cannot load agent definition ".agent/docs/agent.json": "name": expected "docs" to match the folder name, got "writer"`,
        });
      });
    },
  );

  await t.step(
    "a broken local definition is an error, not a fallback to the built-in",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgent(cwd, "iterator", `{ "name": "iterator", `);
        await assert.rejects(loadDefinition("iterator", { cwd }), {
          name: "UsageError",
          message:
            /^Cannot load agent definition "\.agent\/iterator\/agent\.json": line 1, column \d+: unexpected end of file/,
        });
      });
    },
  );
});

Deno.test("listAgents lists local and built-in agents, broken ones with their error", async () => {
  await withTempDir(async (builtinDir) => {
    await writeAgent(
      builtinDir,
      "iterator",
      `{ "name": "iterator", "behavior": { "completionType": "issue" } }`,
    );
    await writeAgent(
      builtinDir,
      "reviewer",
      `{ "name": "reviewer", "description": "Reviews", "behavior": { "completionType": "project" } }`,
    );
    await withTempDir(async (cwd) => {
      await writeAgent(
        cwd,
        "reviewer",
        `{ "name": "reviewer", "displayName": "Local reviewer", "behavior": { "completionType": "manual", "completionConfig": { "completionKeyword": "OK" } } }`,
      );
      await writeAgent(
        cwd,
        "broken",
        `{ "name": "broken", "behavior": { "completionType": "later" } }`,
      );
      await Deno.mkdir(path.join(cwd, ".agent", "no-definition"), {
        recursive: true,
      });
      await Deno.mkdir(path.join(cwd, ".agent", ".finishline"), {
        recursive: true,
      });

      const agents = await listAgents({
        cwd,
        builtinRoot: pathToFileURL(`${builtinDir}/`),
      });
      assert.deepEqual(agents, [
        {
          name: "broken",
          builtin: false,
          displayName: "broken",
          description: "",
          completionType: "",
          path: path.join(".agent", "broken", "agent.json"),
          error:
            `Cannot load agent definition ".agent/broken/agent.json": "behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom"`,
        },
        {
          name: "iterator",
          builtin: true,
          displayName: "iterator",
          description: "",
          completionType: "issue",
          path: "<builtin>/.agent/iterator/agent.json",
        },
        {
          name: "reviewer",
          builtin: false,
          displayName: "Local reviewer",
          description: "",
          completionType: "manual",
          path: path.join(".agent", "reviewer", "agent.json"),
        },
      ]);
    });
  });
});

Deno.test("listAgents works without a local .agent folder and includes the real built-in", async () => {
  await withTempDir(async (cwd) => {
    const agents = await listAgents({ cwd });
    const iterator = agents.find((agent) => agent.name === "iterator");
    assert.deepEqual(iterator && { ...iterator, description: "" }, {
      name: "iterator",
      builtin: true,
      displayName: "Iterator",
      description: "",
      completionType: "iterate",
      path: "<builtin>/.agent/iterator/agent.json",
    });
  });
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
