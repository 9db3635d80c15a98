import assert from "node:assert/strict";
import type {
  AgentDefinition,
  ParameterSpec,
} from "../../../agents/definition/definition_types.ts";
import { parseDefinition } from "../../../agents/definition/parse.ts";
import { UsageError } from "../../../agents/support/errors.ts";
import { runArgs } from "../../../agents/completion/run_inputs.ts";
import {
  applyFlags,
  type Command,
  FLAGS,
  parameterFlag,
  parseBaseFlags,
  parseCommandLine,
  parseRunCommand,
  parseRunFlags as parseRun,
  RESERVED_FLAGS,
  type RunFlags,
} from "../../../agents/iterator/flags/command_line.ts";
import { helpText } from "../../../agents/iterator/flags/help.ts";

/** Both passes of a run's command line, as a run makes them. */
function parseRunFlags(argv: string[], definition: AgentDefinition): RunFlags {
  return parseRun(parseRunCommand(argv), definition);
}

function definitionOf(data: Record<string, unknown>): AgentDefinition {
  return parseDefinition(JSON.stringify(data), {
    displayPath: `.agent/${data.name}/agent.json`,
  });
}

/** The built-in iterator agent: no parameters. */
const ITERATOR = definitionOf({
  name: "iterator",
  behavior: { completionConfig: { maxIterations: 10 } },
});

/** An agent with one parameter of every kind. */
const FACILITATOR = definitionOf({
  name: "facilitator",
  behavior: {
    completionType: "custom",
    completionConfig: { handlerPath: "completion/handler.ts" },
  },
  parameters: {
    topic: { type: "string", required: true, description: "What to discuss" },
    targetDecisions: {
      type: "number",
      default: 3,
      validation: { min: 1, max: 10 },
    },
    style: {
      type: "string",
      default: "brief",
      validation: { enum: ["brief", "deep"] },
    },
    ticket: {
      type: "string",
      cli: "--ticket-id",
      validation: { pattern: "^[A-Z]+-[0-9]+$" },
    },
    level: { type: "number", validation: { enum: [1, 2, 3] } },
    loud: { type: "boolean" },
    notes_file: { type: "string" },
  },
});

/** A definition with exactly these parameters. */
function withParameters(
  parameters: Record<string, Record<string, unknown>>,
): AgentDefinition {
  return definitionOf({
    name: "x",
    behavior: { completionConfig: { maxIterations: 5 } },
    parameters,
  });
}

/** Asserts a one-line UsageError with exit code 2 and returns its message. */
function usageErrorOf(fn: () => unknown): string {
  let message = "";
  assert.throws(fn, (error: unknown) => {
    assert.ok(
      error instanceof UsageError,
      `expected a UsageError, got ${error}`,
    );
    assert.equal(error.exitCode, 2);
    assert.ok(!error.message.includes("\n"), `not one line: ${error.message}`);
    message = error.message;
    return true;
  });
  return message;
}

const DEFAULT_FLAGS: RunFlags = {
  agent: "iterator",
  cwd: undefined,
  help: false,
  version: false,
  list: false,
  listChecks: false,
  init: undefined,
  githubActions: false,
  triggerLabel: undefined,
  issue: undefined,
  project: undefined,
  iterateMax: undefined,
  keyword: undefined,
  task: undefined,
  repo: undefined,
  owner: undefined,
  label: undefined,
  model: undefined,
  backend: undefined,
  maxTurns: undefined,
  maxBudgetUsd: undefined,
  maxWait: undefined,
  permissionMode: undefined,
  dangerouslySkipPermissions: false,
  dryRun: false,
  worktree: false,
  baseBranch: undefined,
  createPr: false,
  json: false,
  noLearnings: false,
  quiet: false,
  verbose: false,
  store: undefined,
  params: {},
};

Deno.test("parseRunFlags accepts valid command lines", async (t) => {
  await t.step("no flags gives the defaults", () => {
    assert.deepEqual(parseRunFlags([], ITERATOR), DEFAULT_FLAGS);
  });

  const cases: Array<[string[], Partial<RunFlags>]> = [
    [["--backend", "codex"], { backend: "codex" }],
    [["--issue", "12"], { issue: 12 }],
    [["-i", "12"], { issue: 12 }],
    [["--issue=12"], { issue: 12 }],
    [["--project", "3"], { project: 3 }],
    [["-p", "3"], { project: 3 }],
    [["--iterate-max", "5"], { iterateMax: 5 }],
    [["-m", "1"], { iterateMax: 1 }],
    [["--keyword", "ALL DONE"], { keyword: "ALL DONE" }],
    [["--task", "Fix the flaky test"], { task: "Fix the flaky test" }],
    [["-t", "Fix it"], { task: "Fix it" }],
    [["--task=--help is wrong"], { task: "--help is wrong" }],
    [["--model", "claude-opus-4-1"], { model: "claude-opus-4-1" }],
    [["--max-turns", "40"], { maxTurns: 40 }],
    [["--max-budget-usd", "2.5"], { maxBudgetUsd: 2.5 }],
    [["--max-budget-usd", "0.01"], { maxBudgetUsd: 0.01 }],
    [["--permission-mode", "plan"], { permissionMode: "plan" }],
    [["--permission-mode", "default"], { permissionMode: "default" }],
    [["--permission-mode", "acceptEdits"], { permissionMode: "acceptEdits" }],
    [["--dangerously-skip-permissions"], { dangerouslySkipPermissions: true }],
    [["--dry-run", "--json"], { dryRun: true, json: true }],
    [["-a", "reviewer", "--cwd", "/repo"], { agent: "reviewer", cwd: "/repo" }],
    [["--list"], { list: true }],
    [["--version"], { version: true }],
    [["-h"], { help: true }],
    [["--init", "docs"], { init: "docs" }],
    [["--repo", "octo/demo"], { repo: "octo/demo" }],
    [["-R", "octo-org/my.repo_2"], { repo: "octo-org/my.repo_2" }],
    [["--issue", "4", "--repo=octo/demo"], { issue: 4, repo: "octo/demo" }],
    [["--project", "3", "--owner", "octo"], { project: 3, owner: "octo" }],
    [["-p", "3", "--owner", "@me"], { project: 3, owner: "@me" }],
    [["--project", "3", "--label", "docs"], { project: 3, label: "docs" }],
    [
      ["-p", "3", "-R", "octo/demo", "--owner", "octo", "--label", "good first issue"],
      { project: 3, repo: "octo/demo", owner: "octo", label: "good first issue" },
    ],
    [
      ["--issue", "7", "--iterate-max", "3", "--model", "m", "--dry-run"],
      { issue: 7, iterateMax: 3, model: "m", dryRun: true },
    ],
  ];
  for (const [argv, expected] of cases) {
    await t.step(argv.join(" "), () => {
      assert.deepEqual(parseRunFlags(argv, ITERATOR), {
        ...DEFAULT_FLAGS,
        ...expected,
      });
    });
  }
});

Deno.test("parseRunFlags refuses bad command lines with a one-line UsageError naming the flag", async (t) => {
  const cases: Array<[string[], string | RegExp]> = [
    [
      ["--issue", "0"],
      'Flag "--issue" expects an issue number (a whole number of 1 or more), got "0"',
    ],
    [
      ["--issue", "abc"],
      'Flag "--issue" expects an issue number (a whole number of 1 or more), got "abc"',
    ],
    [["--issue", "1.5"], /^Flag "--issue" expects an issue number/],
    [["--issue", "99999999999999999999"], /^Flag "--issue" expects/],
    [
      ["--issue", "-1"],
      'Flag "--issue" needs a value: to give one that starts with "-", write "--issue=VALUE"',
    ],
    [
      ["--issue=-1"],
      'Flag "--issue" expects an issue number (a whole number of 1 or more), got "-1"',
    ],
    [["-i", "-1"], /^Flag "--issue" needs a value/],
    [["--issue"], /^Flag "--issue" needs a value/],
    [["--project", "0"], /^Flag "--project" expects a project number/],
    [
      ["--iterate-max", "0"],
      'Flag "--iterate-max" expects the number of iterations (a whole number of 1 or more), got "0"',
    ],
    [["--max-turns", "0"], /^Flag "--max-turns" expects the turn cap/],
    [
      ["--max-budget-usd", "-1"],
      'Flag "--max-budget-usd" needs a value: to give one that starts with "-", write "--max-budget-usd=VALUE"',
    ],
    [
      ["--max-budget-usd=-1"],
      'Flag "--max-budget-usd" expects a cost in USD (a number above 0), got "-1"',
    ],
    [
      ["--max-budget-usd", "0"],
      'Flag "--max-budget-usd" expects a cost in USD (a number above 0), got "0"',
    ],
    [["--max-budget-usd", "five"], /^Flag "--max-budget-usd" expects a cost/],
    [["--max-budget-usd", "Infinity"], /^Flag "--max-budget-usd" expects/],
    [["--max-budget-usd="], /^Flag "--max-budget-usd" expects a cost/],
    [["--foo"], 'Unknown flag "--foo": run with --help to see the flags'],
    [["--foo=bar"], /^Unknown flag "--foo"/],
    [["-x"], 'Unknown flag "-x": run with --help to see the flags'],
    [
      ["--issue", "1", "--project", "2"],
      'Flags "--issue" and "--project" conflict: each selects a different completion handler; give one',
    ],
    [
      ["--keyword", "DONE", "--issue", "3"],
      'Flags "--issue" and "--keyword" conflict: each selects a different completion handler; give one',
    ],
    [
      ["--keyword", "DONE", "--issue", "3", "--project", "4"],
      /^Flags "--issue" and "--project" and "--keyword" conflict/,
    ],
    [
      ["--permission-mode", "bypassPermissions"],
      'Flag "--permission-mode" does not take "bypassPermissions": use --dangerously-skip-permissions',
    ],
    [
      ["--permission-mode", "yolo"],
      'Flag "--permission-mode" expects one of "default", "acceptEdits", "plan", got "yolo"',
    ],
    [
      ["--dangerously-skip-permissions", "--permission-mode", "plan"],
      'Flags "--dangerously-skip-permissions" and "--permission-mode" conflict: give one',
    ],
    [
      ["fix-the-bug"],
      'Unexpected argument "fix-the-bug": flags take their values as "--flag value"; run with --help',
    ],
    [
      ["--task", "Fix", "the", "bug"],
      /^Unexpected argument "the": flags take their values/,
    ],
    [
      ["--dry-run=yes"],
      'Flag "--dry-run" takes no value: give it alone, as "--dry-run"',
    ],
    [["--task", ""], 'Flag "--task" expects the task text, got an empty value'],
    [
      ["--keyword", "  "],
      'Flag "--keyword" expects the completion keyword, got an empty value',
    ],
    [["--model="], 'Flag "--model" expects a model name, got an empty value'],
    [["--agent"], /^Flag "--agent" needs a value/],
    [
      ["--label", "docs"],
      'Flag "--label" only applies to project runs: add --project N',
    ],
    [
      ["--owner", "octo"],
      'Flag "--owner" only applies to project runs: add --project N',
    ],
    [
      ["--issue", "4", "--owner", "octo"],
      'Flag "--owner" only applies to project runs: add --project N',
    ],
    [
      ["--repo", "demo"],
      'Flag "--repo" expects owner/name (e.g. "octo/demo"), got "demo"',
    ],
    [
      ["-R", "octo/demo/extra"],
      'Flag "--repo" expects owner/name (e.g. "octo/demo"), got "octo/demo/extra"',
    ],
    [
      ["--repo", "https://github.com/octo/demo"],
      /^Flag "--repo" expects owner\/name/,
    ],
    [["--repo="], /^Flag "--repo" expects owner\/name/],
    [["--repo"], /^Flag "--repo" needs a value/],
    [
      ["--project", "3", "--owner", " "],
      /^Flag "--owner" expects a user or organisation login, or @me, got an empty value$/,
    ],
    [
      ["--project", "3", "--label="],
      'Flag "--label" expects a label name, got an empty value',
    ],
  ];
  for (const [argv, expected] of cases) {
    await t.step(argv.join(" "), () => {
      const message = usageErrorOf(() => parseRunFlags(argv, ITERATOR));
      if (typeof expected === "string") assert.equal(message, expected);
      else assert.match(message, expected);
    });
  }
});

Deno.test("parseBaseFlags finds the agent and ignores the other flags", async (t) => {
  await t.step("defaults", () => {
    assert.deepEqual(parseBaseFlags([]), {
      agent: "iterator",
      cwd: undefined,
      help: false,
      version: false,
      list: false,
      listChecks: false,
      init: undefined,
      store: undefined,
      githubActions: false,
      triggerLabel: undefined,
    });
  });

  await t.step("agent parameters and run flags are skipped", () => {
    const flags = parseBaseFlags([
      "--topic",
      "pricing",
      "--issue",
      "3",
      "-a",
      "facilitator",
      "--cwd",
      "/repo",
    ]);
    assert.equal(flags.agent, "facilitator");
    assert.equal(flags.cwd, "/repo");
  });

  for (const flag of ["--agent", "--cwd", "--init"]) {
    await t.step(`${flag} without a value`, () => {
      assert.match(
        usageErrorOf(() => parseBaseFlags([flag])),
        new RegExp(`^Flag "${flag}" needs a value: `),
      );
    });
  }
});

Deno.test("definition parameters become flags", async (t) => {
  await t.step("flag names derive from parameter names", () => {
    const spec = { type: "string" } as ParameterSpec;
    assert.equal(parameterFlag("topic", spec), "--topic");
    assert.equal(parameterFlag("targetDecisions", spec), "--target-decisions");
    assert.equal(parameterFlag("notes_file", spec), "--notes-file");
    assert.equal(parameterFlag("max2Retries", spec), "--max2-retries");
    assert.equal(
      parameterFlag("ticket", { ...spec, cli: "--ticket-id" }),
      "--ticket-id",
    );
  });

  await t.step("values are parsed by type and defaults fill the rest", () => {
    const flags = parseRunFlags(
      [
        "--topic",
        "pricing",
        "--target-decisions",
        "5",
        "--ticket-id",
        "PAY-12",
        "--level",
        "2",
        "--loud",
        "--notes-file",
        "notes.md",
        "--iterate-max",
        "4",
      ],
      FACILITATOR,
    );
    assert.deepEqual(flags.params, {
      topic: "pricing",
      targetDecisions: 5,
      style: "brief",
      ticket: "PAY-12",
      level: 2,
      loud: true,
      notes_file: "notes.md",
    });
    assert.equal(flags.iterateMax, 4);
  });

  await t.step("only defaults and given values appear", () => {
    assert.deepEqual(parseRunFlags(["--topic", "x"], FACILITATOR).params, {
      topic: "x",
      targetDecisions: 3,
      style: "brief",
    });
  });

  await t.step("numbers may be decimals", () => {
    const definition = withParameters({ ratio: { type: "number" } });
    assert.equal(
      parseRunFlags(["--ratio", "0.25"], definition).params.ratio,
      0.25,
    );
  });

  const errors: Array<[string[], string]> = [
    [
      ["--topic", "x", "--target-decisions", "many"],
      'Flag "--target-decisions" expects a number, got "many"',
    ],
    [
      ["--topic", "x", "--target-decisions="],
      'Flag "--target-decisions" expects a number, got ""',
    ],
    [
      ["--topic", "x", "--target-decisions", "0"],
      'Flag "--target-decisions" expects a number of at least 1, got 0',
    ],
    [
      ["--topic", "x", "--target-decisions", "11"],
      'Flag "--target-decisions" expects a number of at most 10, got 11',
    ],
    [
      ["--topic", "x", "--ticket-id", "pay-12"],
      'Flag "--ticket-id" expects a value matching /^[A-Z]+-[0-9]+$/, got "pay-12"',
    ],
    [
      ["--topic", "x", "--style", "long"],
      'Flag "--style" expects one of "brief", "deep", got "long"',
    ],
    [
      ["--topic", "x", "--level", "4"],
      'Flag "--level" expects one of "1", "2", "3", got "4"',
    ],
    [
      ["--topic", "x", "--ticket", "PAY-1"],
      'Unknown flag "--ticket": did you mean "--ticket-id"?',
    ],
    [
      ["--topic", "x", "--loud=yes"],
      'Flag "--loud" takes no value: give it alone, as "--loud"',
    ],
    [
      [],
      'Flag "--topic" is required by agent "facilitator": What to discuss',
    ],
    [
      ["--target-decisions", "2"],
      'Flag "--topic" is required by agent "facilitator": What to discuss',
    ],
  ];
  for (const [argv, expected] of errors) {
    await t.step(`refuses ${argv.join(" ") || "no flags"}`, () => {
      assert.equal(
        usageErrorOf(() => parseRunFlags(argv, FACILITATOR)),
        expected,
      );
    });
  }

  await t.step("a required parameter without description is named", () => {
    const definition = withParameters({
      topic: { type: "string", required: true },
    });
    assert.equal(
      usageErrorOf(() => parseRunFlags([], definition)),
      'Flag "--topic" is required by agent "x": parameter "topic"',
    );
  });

  await t.step("a required parameter with a default is satisfied", () => {
    const definition = withParameters({
      topic: { type: "string", required: true, default: "general" },
    });
    assert.deepEqual(parseRunFlags([], definition).params, {
      topic: "general",
    });
  });
});

Deno.test("a parameter may not take a flag finishline reserves", async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["task", { type: "string" }, "--task"],
    ["iterateMax", { type: "number" }, "--iterate-max"],
    ["dry_run", { type: "boolean" }, "--dry-run"],
    ["help", { type: "boolean" }, "--help"],
    ["ticket", { type: "number", cli: "--issue" }, "--issue"],
    ["repo", { type: "string" }, "--repo"],
    ["label", { type: "string" }, "--label"],
  ];
  for (const [name, spec, flag] of cases) {
    await t.step(`${name} (${flag})`, () => {
      assert.equal(
        usageErrorOf(() => parseRunFlags([], withParameters({ [name]: spec }))),
        `Agent "x": parameter "${name}" uses the flag "${flag}", which finishline reserves; set "parameters.${name}.cli" to another flag`,
      );
    });
  }

  await t.step("two parameters may not share a flag", () => {
    const definition = withParameters({
      targetDecisions: { type: "number", required: true },
      target_decisions: { type: "number" },
    });
    assert.equal(
      usageErrorOf(() => parseRunFlags(["--target-decisions", "2"], definition)),
      'Agent "x": parameters "targetDecisions" and "target_decisions" both use the flag "--target-decisions"; set "parameters.target_decisions.cli" to another flag',
    );
  });

  await t.step("the reserved list holds every built-in flag", () => {
    for (
      const flag of [
        "agent",
        "cwd",
        "help",
        "issue",
        "project",
        "iterate-max",
        "keyword",
        "task",
        "repo",
        "owner",
        "label",
        "model",
        "max-turns",
        "max-budget-usd",
        "permission-mode",
        "dangerously-skip-permissions",
        "dry-run",
        "json",
      ]
    ) {
      assert.ok(RESERVED_FLAGS.includes(flag), flag);
    }
  });
});

Deno.test("applyFlags applies handler selection and overrides to a copy", async (t) => {
  const base = definitionOf({
    name: "demo",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 10, handlerPath: "h.ts" },
      model: "claude-sonnet-4-5",
      maxTurns: 30,
      permissionMode: "acceptEdits",
    },
  });
  const snapshot = structuredClone(base);

  function apply(argv: string[]): AgentDefinition {
    return applyFlags(base, parseRunFlags(argv, base));
  }

  await t.step("no flags keeps the definition's behaviour", () => {
    assert.deepEqual(apply([]), base);
  });

  await t.step("--issue selects the issue handler", () => {
    assert.equal(apply(["--issue", "4"]).behavior.completionType, "issue");
  });

  await t.step("--project selects the project handler", () => {
    assert.equal(apply(["-p", "2"]).behavior.completionType, "project");
  });

  await t.step("--keyword selects the manual handler with that keyword", () => {
    const { behavior } = apply(["--keyword", "SHIPPED"]);
    assert.equal(behavior.completionType, "manual");
    assert.deepEqual(behavior.completionConfig, {
      maxIterations: 10,
      handlerPath: "h.ts",
      completionKeyword: "SHIPPED",
    });
  });

  await t.step("overrides for the cap, model, turns, budget and mode", () => {
    const { behavior } = apply([
      "--iterate-max",
      "3",
      "--model",
      "claude-opus-4-1",
      "--max-turns",
      "12",
      "--max-budget-usd",
      "1.5",
      "--permission-mode",
      "plan",
    ]);
    assert.equal(behavior.completionConfig.maxIterations, 3);
    assert.equal(behavior.model, "claude-opus-4-1");
    assert.equal(behavior.maxTurns, 12);
    assert.equal(behavior.maxBudgetUsd, 1.5);
    assert.equal(behavior.permissionMode, "plan");
    assert.equal(behavior.completionType, "iterate");
  });

  await t.step("--max-wait sets the wait budget of rate limits and API retries", () => {
    assert.equal(apply(["--max-wait", "60"]).retry.maxWaitSeconds, 60);
    assert.equal(apply([]).retry.maxWaitSeconds, 900);
  });

  await t.step(
    "--dangerously-skip-permissions does not change the definition",
    () => {
      assert.equal(
        apply(["--dangerously-skip-permissions"]).behavior.permissionMode,
        "acceptEdits",
      );
    },
  );

  await t.step("the input definition is never changed", () => {
    apply(["--keyword", "X", "--iterate-max", "2", "--model", "m"]);
    assert.deepEqual(base, snapshot);
  });
});

Deno.test("runArgs gives handlers the set flags and the parameters", async (t) => {
  await t.step("built-in flags in camelCase, unset ones left out", () => {
    assert.deepEqual(
      runArgs(
        parseRunFlags(
          [
            "--issue",
            "5",
            "--iterate-max",
            "3",
            "--task",
            "t",
            "--max-budget-usd",
            "2",
            "--dry-run",
          ],
          ITERATOR,
        ),
      ),
      {
        agent: "iterator",
        issue: 5,
        iterateMax: 3,
        task: "t",
        maxBudgetUsd: 2,
      },
    );
  });

  await t.step("repository, owner and label reach the handlers", () => {
    assert.deepEqual(
      runArgs(
        parseRunFlags(
          ["-p", "3", "-R", "octo/demo", "--owner", "octo", "--label", "docs"],
          ITERATOR,
        ),
      ),
      {
        agent: "iterator",
        project: 3,
        repo: "octo/demo",
        owner: "octo",
        label: "docs",
      },
    );
  });

  await t.step("parameters by name, with their defaults", () => {
    assert.deepEqual(
      runArgs(parseRunFlags(["--topic", "pricing", "--loud"], FACILITATOR)),
      {
        agent: "iterator",
        topic: "pricing",
        targetDecisions: 3,
        style: "brief",
        loud: true,
      },
    );
  });

  await t.step("no flags gives only the agent", () => {
    assert.deepEqual(runArgs(parseRunFlags(["-a", "x"], ITERATOR)), {
      agent: "x",
    });
  });
});

Deno.test("a flag without its value says what the value is", async (t) => {
  const cases: Array<[string[], string]> = [
    [["--task"], 'Flag "--task" needs a value: the task text'],
    [["-t"], 'Flag "--task" needs a value: the task text'],
    [["--issue"], 'Flag "--issue" needs a value: an issue number'],
    [["--max-wait"], 'Flag "--max-wait" needs a value: a number of seconds (0 or more)'],
  ];
  for (const [argv, expected] of cases) {
    await t.step(argv.join(" "), () => {
      assert.equal(usageErrorOf(() => parseRunFlags(argv, ITERATOR)), expected);
    });
  }
  await t.step("an agent parameter", () => {
    assert.equal(
      usageErrorOf(() => parseRunFlags(["--topic"], FACILITATOR)),
      `Flag "--topic" needs a value: the agent's parameter "topic"`,
    );
  });
});

Deno.test("parseCommandLine names the command and reads its flags once", async (t) => {
  const cases: Array<[string[], Command]> = [
    [["--help", "--issue", "3"], { kind: "help", command: "", agent: undefined, cwd: undefined }],
    [["--version"], { kind: "version" }],
    [["--list", "--cwd", "/repo"], { kind: "list", cwd: "/repo" }],
    [
      ["--init", "docs", "--github-actions", "--trigger-label", "go"],
      { kind: "init", name: "docs", cwd: undefined, githubActions: true, triggerLabel: "go" },
    ],
    [["checks", "-a", "docs"], { kind: "checks", agent: "docs", cwd: undefined }],
    [["--list-checks", "--cwd", "/r"], { kind: "checks", agent: "iterator", cwd: "/r" }],
    [
      ["--resume", "1a2b", "--json"],
      {
        kind: "resume",
        runId: "1a2b",
        json: true,
        store: undefined,
        cwd: undefined,
        agent: undefined,
      },
    ],
    [
      ["-a", "docs", "--resume"],
      {
        kind: "resume",
        runId: undefined,
        json: false,
        store: undefined,
        cwd: undefined,
        agent: "docs",
      },
    ],
    [
      ["runs", "--limit", "5", "-a", "docs"],
      { kind: "runs", json: false, store: undefined, cwd: undefined, agent: "docs", limit: 5 },
    ],
    [
      ["runs", "show", "1a2b", "--json"],
      {
        kind: "runs show",
        runId: "1a2b",
        json: true,
        store: undefined,
        cwd: undefined,
        agent: undefined,
        limit: 20,
      },
    ],
    [
      ["runs", "stats", "--json", "-a", "docs"],
      {
        kind: "runs stats",
        json: true,
        store: undefined,
        cwd: undefined,
        agent: "docs",
        // Every run unless --limit says otherwise: the metrics sum the whole history.
        limit: Number.MAX_SAFE_INTEGER,
      },
    ],
    [
      ["runs", "stats", "--limit", "10"],
      {
        kind: "runs stats",
        json: false,
        store: undefined,
        cwd: undefined,
        agent: undefined,
        limit: 10,
      },
    ],
    [
      ["learnings", "search", "flaky", "tests"],
      {
        kind: "learnings search",
        query: "flaky tests",
        json: false,
        store: undefined,
        cwd: undefined,
        agent: undefined,
        limit: 20,
      },
    ],
    [
      ["learnings", "search", "--limit", "3"],
      {
        kind: "learnings search",
        query: "",
        json: false,
        store: undefined,
        cwd: undefined,
        agent: undefined,
        limit: 3,
      },
    ],
    [
      ["finish", "1a2b", "--store", "s.db"],
      {
        kind: "finish",
        runId: "1a2b",
        json: false,
        store: "s.db",
        cwd: undefined,
        agent: undefined,
        limit: 20,
      },
    ],
  ];
  for (const [argv, expected] of cases) {
    await t.step(argv.join(" "), () => {
      assert.deepEqual(parseCommandLine(argv), expected);
    });
  }

  await t.step("a run keeps its arguments for the second pass", () => {
    const command = parseCommandLine(["-a", "docs", "--topic", "x"]);
    assert.equal(command.kind, "run");
    if (command.kind === "run") {
      assert.deepEqual(command.argv, ["-a", "docs", "--topic", "x"]);
      assert.equal(command.flags.agent, "docs");
    }
  });

  const errors: Array<[string[], string]> = [
    [["checks", "--json"], 'The "checks" command takes only --cwd and --agent, not "--json"'],
    [
      ["--list-checks", "--issue=3"],
      'The "checks" command takes only --cwd and --agent, not "--issue=3"',
    ],
    [
      ["--resume", "--issue", "3"],
      'Flag "--resume" continues a run with the arguments it was started with; it takes only --json, --store, --cwd and --agent, not "--issue"',
    ],
    [
      ["runs", "--bogus"],
      'Unknown flag "--bogus" for "runs": it takes --json, --store, --cwd, --agent, --limit',
    ],
    [["runs", "--limit", "0"], 'Flag "--limit" expects a whole number of 1 or more, got "0"'],
    [["runs", "--store"], 'Flag "--store" needs a value: the run history database file'],
    [
      ["runs", "frobnicate"],
      'Unknown command "runs frobnicate": expected "runs", "runs show RUN_ID", "runs stats", "learnings search [QUERY]" or "finish RUN_ID"',
    ],
    [["--github-actions"], 'Flags "--github-actions" and "--trigger-label" go with --init NAME'],
    [["--trigger-label"], 'Flag "--trigger-label" needs a value: a label name'],
  ];
  for (const [argv, expected] of errors) {
    await t.step(`refuses ${argv.join(" ")}`, () => {
      assert.equal(usageErrorOf(() => parseCommandLine(argv)), expected);
    });
  }
});

Deno.test("--help shows every flag of the table", () => {
  const help = helpText("finishline");
  for (const flag of FLAGS) {
    const label = `${flag.short ? `-${flag.short}, ` : ""}--${flag.name}`;
    assert.ok(flag.group !== undefined, `--${flag.name} has a section of --help`);
    assert.ok(help.includes(label), label);
  }
});

Deno.test("docs/cli.md's flag table lists exactly the flags of the CLI", async () => {
  const page = await Deno.readTextFile(new URL("../../../docs/cli.md", import.meta.url));
  const section = page.split("\n## Flags\n")[1].split("\n## ")[0];
  const cells = section.split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| --"))
    .slice(1)
    .map((line) => line.split("|")[1]);
  const spans = cells.flatMap((cell) => [...cell.matchAll(/`([^`]*)`/g)].map((match) => match[1]));
  const documented = spans.flatMap((span) => [...span.matchAll(/--([a-z][a-z0-9-]*)/g)])
    .map((match) => match[1]);
  assert.deepEqual(
    [...new Set(documented)].sort(),
    FLAGS.map((flag) => flag.name).sort(),
    "docs/cli.md, section Flags, against agents/iterator/flags/table.ts",
  );
  for (const flag of FLAGS.filter((flag) => flag.short)) {
    const form = `-${flag.short}, --${flag.name}`;
    assert.ok(spans.some((span) => span.startsWith(form)), `docs/cli.md shows "${form}"`);
  }
});
