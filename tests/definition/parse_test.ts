import assert from "node:assert/strict";
import { parseDefinition } from "../../agents/definition/parse.ts";
import { UsageError } from "../../agents/support/errors.ts";
import {
  registerCompletionHandler,
  unregisterCompletionHandler,
} from "../../agents/completion/registry.ts";
import { parse, PREFIX, withBehavior } from "./_helpers.ts";

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
      `${PREFIX}"behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task"`,
    );
  });

  await t.step("a completionType that is not a string", () => {
    assertRejects(
      withBehavior({ completionType: 5 }),
      `${PREFIX}"behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task"`,
    );
  });

  await t.step("an unknown completionType also lists the registered types", () => {
    registerCompletionHandler("review-bot", () => {
      throw new Error("not built in this test");
    });
    try {
      assertRejects(
        withBehavior({ completionType: "done" }),
        `${PREFIX}"behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task", "review-bot"`,
      );
    } finally {
      unregisterCompletionHandler("review-bot");
    }
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
      `${PREFIX}"nmae": unknown key, expected one of "$schema", "version", "name", "displayName", "description", "behavior", "prompts", "parameters", "actions", "github", "logging", "verify", "git", "rescue", "circuitBreaker", "probe", "finish", "retry", "learnings"`,
    );
  });

  await t.step("learnings.embeddings: the http provider needs its url and model", () => {
    const embeddings = (value: unknown) =>
      JSON.stringify({
        name: "x",
        behavior: { completionType: "issue" },
        learnings: { embeddings: value },
      });
    assertRejects(
      embeddings({ provider: "http", model: "m" }),
      `${PREFIX}"learnings.embeddings.url": required when "provider" is "http"`,
    );
    assertRejects(
      embeddings({ provider: "bert" }),
      `${PREFIX}"learnings.embeddings.provider": expected one of "lexical", "openai", "voyage", "http"`,
    );
    assertRejects(
      embeddings({ provider: "openai", apiKeyEnv: "sk-abc" }),
      `${PREFIX}"learnings.embeddings.apiKeyEnv": expected an environment variable name`,
    );
    assertRejects(
      embeddings({ provider: "http", url: "ftp://host/x", model: "m" }),
      `${PREFIX}"learnings.embeddings.url": expected an http(s) URL`,
    );
    assertRejects(
      embeddings({ provider: "lexical", duplicateSimilarity: 1.5 }),
      `${PREFIX}"learnings.embeddings.duplicateSimilarity": expected a number from 0 to 1`,
    );
    assert.equal(
      parse(embeddings({ provider: "lexical" })).learnings.embeddings?.timeoutSeconds,
      30,
    );
  });

  await t.step(
    "unknown nested key is reported before the error it causes",
    () => {
      // The typo leaves completionType at "iterate", which would also miss maxIterations.
      assertRejects(
        `{ "name": "x", "behavior": { "completionTyp": "issue" } }`,
        `${PREFIX}"behavior.completionTyp": unknown key, expected one of "systemPromptPath", "completionType", "completionConfig", "allowedTools", "disallowedTools", "permissionMode", "model", "maxTurns", "maxBudgetUsd", "backend", "session", "prewarm", "settingSources", "maxDurationSeconds", "requireCompleteTask", "maxContinuationAttempts"`,
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
      `${PREFIX}"verify.mod": unknown key, expected one of "mode", "checks", "detect", "baseline", "protect", "checkTimeoutSeconds", "prChecks", "prChecksTimeoutSeconds", "reproduce", "reproduceBackend", "reproduceModel", "reproduceMaxCostUsd", "reproduceMaxTurns", "bugLabels", "reviewDeclarations", "reviewMaxCostUsd", "reviewMaxTurns", "changedLines", "sandbox", "network"`,
    );
  });

  await t.step("verify.network: a host, not a URL", () => {
    assertRejects(
      withBehavior({}, { verify: { network: { allow: ["https://registry.npmjs.org/"] } } }),
      `${PREFIX}"verify.network.allow[0]": expected a host, host:port or *.domain (no scheme, no path)`,
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

Deno.test("a completion type registered in code is a valid completionType", async (t) => {
  const text = withBehavior({ completionType: "review-bot" });
  await t.step("while it is registered", () => {
    registerCompletionHandler("review-bot", () => {
      throw new Error("not built in this test");
    });
    try {
      assert.equal(parse(text).behavior.completionType, "review-bot");
    } finally {
      unregisterCompletionHandler("review-bot");
    }
  });

  await t.step("and no longer once it is unregistered", () => {
    assertRejects(
      text,
      `${PREFIX}"behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task"`,
    );
  });
});
