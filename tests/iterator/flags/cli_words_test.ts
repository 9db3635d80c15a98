/**
 * The CLI's words come from one table: `--help` and each command's own,
 * the parser (a command takes exactly the flags its help lists), an agent's
 * parameters under `--agent NAME --help`, the usage line as the user runs
 * finishline, "did you mean" for mistyped commands and flags, the exit codes.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { EXIT_CODES } from "../../../agents/loop/runner.ts";
import { main } from "../../../agents/iterator/main.ts";
import { parseCommandLine, parseRunFlags } from "../../../agents/iterator/flags/command_line.ts";
import { type FleetCommand, parseFleetFlags } from "../../../agents/iterator/fleet/flags.ts";
import { commandHelp, flagLabel, helpText } from "../../../agents/iterator/flags/help.ts";
import {
  COMMANDS,
  type CommandSpec,
  EXIT_CODE_TABLE,
  FLAGS,
  type FlagSpec,
} from "../../../agents/iterator/flags/table.ts";
import { closest } from "../../../agents/iterator/flags/_suggest.ts";
import { invokedAs } from "../../../agents/iterator/flags/invoked_as.ts";
import { loadDefinition } from "../../../agents/definition/load.ts";
import { denoDir, MAIN, tempDir } from "../../_helpers.ts";

/** main() in this process: its exit code and what it printed. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (text) => stdout += text,
    stderr: (text) => stderr += text,
  });
  return { code, stdout, stderr };
}

/** A valid value for a flag of this kind. */
function valueFor(flag: FlagSpec): string[] {
  const values: Record<string, string> = {
    positiveInteger: "3",
    positiveNumber: "1.5",
    seconds: "10",
    repo: "octo/demo",
    permissionMode: "plan",
    backend: "claude",
    issueList: "4,7",
  };
  if (flag.kind === "boolean") return [`--${flag.name}`];
  return [`--${flag.name}`, values[flag.kind] ?? "x"];
}

/** The arguments before a flag for a command: its words and required arguments. */
function head(command: CommandSpec): string[] {
  const words = command.name === "" ? [] : command.name.split(" ");
  const args = (command.args ?? []).filter((arg) => !arg.optional)
    .map((arg) => arg.values?.[0] ?? "1a2b");
  return [...words, ...args];
}

/** Parse a command line as the CLI does, both passes (with an agent that has no parameters). */
async function parseAll(argv: string[]): Promise<void> {
  const command = parseCommandLine(argv);
  if (command.kind === "run") {
    const { definition } = await loadDefinition("iterator", { cwd: Deno.cwd() });
    parseRunFlags(command, definition);
  }
  if (command.kind === "fleet") parseFleetFlags(command as FleetCommand, new Map());
}

/** Whether parsing refuses the flag itself (not its value or how it combines). */
async function refusesFlag(argv: string[]): Promise<boolean> {
  try {
    await parseAll(argv);
    return false;
  } catch (error) {
    return /Unknown flag|does not go with|takes only/.test((error as Error).message);
  }
}

Deno.test("each command takes exactly the flags its --help lists", async (t) => {
  for (const command of COMMANDS) {
    await t.step(command.name || "a run", async () => {
      const help = commandHelp(command, "finishline").split("\nFlags:\n")[1] ?? "";
      const selection = command.name === "fleet" ? ["--label", "go"] : [];
      for (const flag of FLAGS) {
        const listed = command.name === ""
          ? flag.pass !== "own"
          : command.flags.includes(flag.name);
        if (command.name !== "") assert.equal(help.includes(flagLabel(flag)), listed, flag.name);
        if (flag.name === "resume" || (flag.name === "help" && listed)) continue;
        const argv = [...head(command), ...selection, ...valueFor(flag)];
        assert.equal(await refusesFlag(argv), !listed, argv.join(" "));
      }
    });
  }
});

Deno.test("--help after a command is that command's help; a run's is the general help", async (t) => {
  for (const command of COMMANDS) {
    const argv = [...(command.name === "" ? [] : command.name.split(" ")), "--help"];
    await t.step(argv.join(" "), async () => {
      const result = await cli(argv);
      assert.equal(result.code, 0, result.stderr);
      const usage = result.stdout.split("\n").find((line) => line.startsWith("  "));
      const words = command.name === "" ? "[flags]" : `${command.name} `;
      assert.ok(usage?.includes(` ${words}`), `${usage}`);
      assert.equal(result.stdout, `${commandHelp(command, invokedAs())}\n`);
    });
  }
});

Deno.test("--help says what each flag does today (the lines that had drifted)", () => {
  const help = helpText("finishline").replace(/\s+/g, " ");
  assert.doesNotMatch(help, /done when issue N is closed/);
  assert.match(
    help,
    /--issue N GitHub issue handler: done when the agent reports success and the evidence passes; finishline then closes issue N/,
  );
  assert.match(help, /--limit N with runs and learnings search: show at most N \(default 20\)/);
  assert.match(help, /--create-pr with --worktree: push the branch and open a pull request/);
  assert.match(
    help,
    /--resume \[RUN_ID\] continue the latest unfinished run \(of --agent, when given\)/,
  );
  assert.match(help, /--keyword K manual handler: done in the iteration whose response contains K/);
  assert.match(help, /fleet --resume \[FLEET_ID\]/);
  assert.match(help, /completions SHELL print the shell completion script/);
  assert.match(help, /checks print the repository's detected checks/);
  for (const line of helpText("finishline").split("\n")) {
    assert.ok(line.length <= 80, `longer than 80 columns: ${line}`);
  }
});

Deno.test("the exit codes of --help and docs are the runner's", () => {
  const table = EXIT_CODE_TABLE.filter((exit) => exit.status !== "(usage)");
  assert.deepEqual(
    Object.fromEntries(table.map((exit) => [exit.status, exit.code])),
    EXIT_CODES,
  );
  assert.equal(EXIT_CODE_TABLE.find((exit) => exit.status === "(usage)")?.code, 2);
  assert.match(
    helpText("x").replace(/\s+/g, " "),
    /Exit codes: 0 completed, 1 failed, 2 bad input/,
  );
});

Deno.test("--agent NAME --help lists the agent's parameters: name, type, default, description, required", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, ".agent", "fac"), { recursive: true });
  await Deno.writeTextFile(
    join(dir.path, ".agent", "fac", "agent.json"),
    JSON.stringify({
      name: "fac",
      behavior: { completionConfig: { maxIterations: 2 } },
      parameters: {
        topic: { type: "string", required: true, description: "What to discuss" },
        targetDecisions: { type: "number", default: 3, validation: { min: 1, max: 10 } },
        style: { type: "string", default: "brief", validation: { enum: ["brief", "deep"] } },
        ticket: { type: "string", cli: "--ticket-id", description: "The ticket" },
        loud: { type: "boolean", description: "Say it loud" },
      },
    }),
  );
  const result = await cli(["--agent", "fac", "--help", "--cwd", dir.path]);
  assert.equal(result.code, 0, result.stderr);
  // The agent's parameters first, then the general help.
  const heading = 'Agent "fac" (.agent/fac/agent.json): its parameters, as flags:\n';
  assert.ok(result.stdout.startsWith(heading), result.stdout);
  const section = result.stdout.slice(heading.length).split("\n\n")[0];
  assert.match(result.stdout, /\n\nfinishline: run a coding agent/);
  const rows = section.replace(/\n {10,}/g, " ").trim().split("\n").map((row) => row.trim());
  assert.deepEqual(rows.map((row) => row.replace(/\s+/g, " ")), [
    "--topic TEXT What to discuss (topic: string, required)",
    "--target-decisions N (targetDecisions: number, default 3, 1 to 10)",
    '--style TEXT (style: string, default "brief", one of "brief", "deep")',
    "--ticket-id TEXT The ticket (ticket: string)",
    "--loud Say it loud (loud: boolean)",
  ]);
  // The required parameter is not asked for: --help runs nothing.
  const fleet = await cli(["fleet", "-a", "fac", "--help", "--cwd", dir.path]);
  assert.equal(fleet.code, 0, fleet.stderr);
  assert.match(fleet.stdout, /fleet \[flags\] \[agent parameters\]/);
  assert.match(fleet.stdout, /--topic TEXT\s+What to discuss/);
  const builtin = await cli(["-a", "iterator", "--help"]);
  assert.match(builtin.stdout, /^Agent "iterator" \(.*agent\.json\) takes no parameters\.\n/);
  const plain = await cli(["--help", "--cwd", dir.path]);
  assert.doesNotMatch(plain.stdout, /parameters, as flags/);
  const unknown = await cli(["--agent", "ghost", "--help", "--cwd", dir.path]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^finishline: Unknown agent "ghost"[^\n]*\n$/);
});

Deno.test("a mistyped command or flag: one line, did you mean, exit 2", async (t) => {
  const cases: Array<[string[], string]> = [
    [["rusn"], 'Unknown command "rusn": did you mean "runs"?'],
    [["flet", "--label", "x"], 'Unknown command "flet": did you mean "fleet"?'],
    [["runs", "shwo", "1a2b"], 'Unknown command "runs shwo": did you mean "runs show"?'],
    [["learnings"], 'Unknown command "learnings": did you mean "learnings search"?'],
    [
      ["learnings", "serach", "x"],
      'Unknown command "learnings serach": did you mean "learnings search"?',
    ],
    [["completions", "bsh"], 'Unknown shell "bsh" for "completions": did you mean "bash"?'],
    [["completions", "pwsh"], 'Unknown shell "pwsh" for "completions": expected bash, zsh or fish'],
    [["--isue", "3"], 'Unknown flag "--isue": did you mean "--issue"?'],
    [["--iterate-mx=3"], 'Unknown flag "--iterate-mx": did you mean "--iterate-max"?'],
    [["--quite"], 'Unknown flag "--quite": did you mean "--quiet"?'],
    [["--frobnicate"], 'Unknown flag "--frobnicate": run with --help to see the flags'],
    [
      ["--limit", "3"],
      'Flag "--limit" does not go with a run: it goes with "fleet", "runs", "runs stats" and "learnings search"',
    ],
    [["runs", "--jsno"], 'Unknown flag "--jsno" for "runs": did you mean "--json"?'],
    [
      ["runs", "show", "1a", "--limti", "2"],
      'Unknown flag "--limti" for "runs show": it takes --json, --store, --cwd',
    ],
    [
      ["runs", "--issue", "3"],
      'Unknown flag "--issue" for "runs": it takes --json, --store, --cwd, --agent, --limit',
    ],
    [["checks", "--agnet", "x"], 'Unknown flag "--agnet" for "checks": did you mean "--agent"?'],
    [
      ["--resume", "--sotre", "s"],
      'Unknown flag "--sotre" for "--resume": did you mean "--store"?',
    ],
    [["fleet", "--lable", "x"], 'Unknown flag "--lable" for "fleet": did you mean "--label"?'],
    [
      ["fleet", "--resume", "--paralel", "2"],
      'Unknown flag "--paralel" for "fleet --resume": did you mean "--parallel"?',
    ],
  ];
  for (const [argv, expected] of cases) {
    await t.step(argv.join(" "), async () => {
      const result = await cli(argv);
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr, `finishline: ${expected}\n`);
      assert.equal(result.stdout, "");
    });
  }
});

Deno.test("a command without its argument says what it needs", async (t) => {
  const cases: Array<[string[], string]> = [
    [["runs", "show"], '"runs show" needs RUN_ID: a run id (any unique prefix; "runs" lists them)'],
    [
      ["runs", "show", "--json"],
      '"runs show" needs RUN_ID: a run id (any unique prefix; "runs" lists them)',
    ],
    [["finish"], '"finish" needs RUN_ID: a run id (any unique prefix; "runs" lists them)'],
    [["completions"], '"completions" needs SHELL: the shell (bash, zsh or fish)'],
    [
      ["runs", "show", "1a", "2b"],
      'Unexpected argument "2b": "runs show" takes RUN_ID (run "runs show --help")',
    ],
  ];
  for (const [argv, expected] of cases) {
    await t.step(argv.join(" "), async () => {
      const result = await cli(argv);
      assert.equal(result.code, 2);
      assert.equal(result.stderr, `finishline: ${expected}\n`);
    });
  }
});

Deno.test("closest: within a third of the word's length, or the only word it begins", () => {
  assert.equal(closest("isue", ["issue", "issues"]), "issue");
  assert.equal(closest("verbsoe", ["verbose", "version"]), "verbose");
  assert.equal(closest("fix", ["finish", "fleet", "runs"]), undefined);
  assert.equal(closest("dry", ["dry-run", "json"]), "dry-run");
  assert.equal(closest("ma", ["max-turns", "max-wait"]), undefined);
  assert.equal(closest("max", ["max-turns", "max-wait"]), undefined);
});

Deno.test("invokedAs: the path from the checkout, the jsr: name, the installed command", async (t) => {
  const env = (values: Record<string, string>) => (name: string) => values[name];
  const onPath = dirname(Deno.execPath());
  await t.step("a checkout: the path relative to the working directory", () => {
    assert.equal(
      invokedAs({
        mainModule: "file:///repo/agents/iterator/main.ts",
        cwd: "/repo",
        env: env({ PATH: onPath, _: Deno.execPath() }),
      }),
      "deno run -A agents/iterator/main.ts",
    );
  });
  await t.step("outside the working directory: the absolute path", () => {
    assert.equal(
      invokedAs({
        mainModule: "file:///repo/agents/iterator/main.ts",
        cwd: "/elsewhere",
        env: env({ PATH: onPath }),
      }),
      "deno run -A /repo/agents/iterator/main.ts",
    );
  });
  await t.step("deno not on the PATH: its own path", () => {
    assert.equal(
      invokedAs({
        mainModule: "file:///repo/agents/iterator/main.ts",
        cwd: "/repo",
        env: env({ PATH: "/nonexistent", _: "/x/deno" }),
        execPath: "/opt/deno/bin/deno",
      }),
      "/opt/deno/bin/deno run -A agents/iterator/main.ts",
    );
  });
  await t.step("JSR: the package's jsr: name", () => {
    assert.equal(
      invokedAs({
        mainModule: "https://jsr.io/@finishline/agents/0.3.1/agents/iterator/main.ts",
        env: env({ PATH: onPath, _: Deno.execPath() }),
      }),
      "deno run -A jsr:@finishline/agents/iterator",
    );
  });
  await t.step("a shim of another program, or not a shim: not taken for this one", async () => {
    await using dir = await tempDir();
    const other = join(dir.path, "other");
    await Deno.writeTextFile(
      other,
      "#!/bin/sh\n# generated by deno install\nexec deno run --allow-all 'file:///else/main.ts' \"$@\"\n",
    );
    const notShim = join(dir.path, "fl");
    await Deno.writeTextFile(
      notShim,
      "#!/bin/sh\nexec deno run -A file:///repo/agents/iterator/main.ts\n",
    );
    for (const shim of [other, notShim]) {
      assert.equal(
        invokedAs({
          mainModule: "file:///repo/agents/iterator/main.ts",
          cwd: "/repo",
          env: env({ PATH: `${dir.path}:${onPath}`, _: shim }),
        }),
        "deno run -A agents/iterator/main.ts",
      );
    }
  });
});

/**
 * A real `deno install` shim of the CLI in a temp root: Deno's own shim (of a
 * tiny module, which installs in a moment), pointed at the CLI.
 */
async function installShim(root: string, name: string): Promise<string> {
  const tiny = join(root, "tiny.ts");
  await Deno.writeTextFile(tiny, "");
  const install = await new Deno.Command(Deno.execPath(), {
    args: ["install", "-g", "-A", "-q", "--root", root, "-n", name, tiny],
    env: { DENO_DIR: await denoDir() },
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(install.success, new TextDecoder().decode(install.stderr));
  const shim = join(root, "bin", name);
  const text = await Deno.readTextFile(shim);
  assert.match(text, /generated by deno install/, "the mark invokedAs looks for");
  const config = new URL("../../../deno.json", import.meta.url).pathname;
  const rewritten = text
    .replace(/--config\s+\S+/, `--config ${config}`)
    .replace(new URL(`file://${tiny}`).href, new URL(`file://${MAIN}`).href);
  assert.notEqual(rewritten, text);
  await Deno.writeTextFile(shim, rewritten);
  return shim;
}

Deno.test("installed with deno install, the usage line and the completions name the installed command", async () => {
  await using dir = await tempDir();
  await installShim(dir.path, "fl-test");
  const bin = join(dir.path, "bin");
  const PATH = `${bin}:${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}`;
  const base = { DENO_DIR: await denoDir(), NO_COLOR: "1", HOME: dir.path };
  const run = async (args: string[], env: Record<string, string>) => {
    const output = await new Deno.Command(args[0], {
      args: args.slice(1),
      cwd: dir.path,
      clearEnv: true,
      env: { ...base, PATH, ...env },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    return text;
  };
  // bash sets "_" to the path of the command it runs.
  const help = await run(["bash", "-c", "fl-test --help"], {});
  assert.match(
    help,
    /^Usage:\n {2}fl-test \[flags\] \[agent parameters\]\n {2}fl-test COMMAND \[flags\]$/m,
  );
  const script = await run(["bash", "-c", "fl-test completions bash"], {});
  assert.match(script, /\ncomplete -F _finishline fl-test\n$/);
  // No shell set "_" (fish does not): the shim in the install root names it.
  const fish = await run([join(bin, "fl-test"), "runs", "show", "--help"], {
    DENO_INSTALL_ROOT: dir.path,
  });
  assert.match(fish, /^ {2}fl-test runs show RUN_ID \[flags\]$/m);
  // Run with deno run: that, with the path.
  const direct = await run([Deno.execPath(), "run", "-A", MAIN, "--help"], {
    _: Deno.execPath(),
    DENO_INSTALL_ROOT: dir.path,
  });
  assert.match(
    direct,
    new RegExp(`^ {2}deno run -A ${MAIN.replaceAll(".", "\\.")} \\[flags\\]`, "m"),
  );
});

Deno.test("from the checkout, the usage line is the path as typed there", async () => {
  const root = new URL("../../../", import.meta.url).pathname;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "agents/iterator/main.ts", "runs", "--help"],
    cwd: root,
    env: {
      DENO_DIR: await denoDir(),
      NO_COLOR: "1",
      _: Deno.execPath(),
      PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? ""}`,
    },
    stdout: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  assert.match(text, /^Usage:\n {2}deno run -A agents\/iterator\/main\.ts runs \[flags\]$/m);
});
