/**
 * `deno task try`: try finishline's CLI offline, in another shell.
 *
 *     deno task try [--port N] [--script FILE]
 *
 * Starts the scripted model server (`@finishline/agents/testing`), makes a
 * scratch git repository, and prints the `export` lines to paste into another
 * shell: `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `HOME` and `CLAUDE_CONFIG_DIR`
 * (a temp home, so your own Claude Code settings stay out of it), `DENO_DIR`
 * (the current Deno cache: with `HOME` moved, Deno would otherwise download
 * every npm package again) and, when you have one, `GIT_CONFIG_GLOBAL` (your
 * git identity). Any command of the docs then runs against the scripted
 * model. Each model request is printed here as it is served. Ctrl-C stops the
 * server and removes the temp home and the scratch repository.
 *
 * - `--port N`: the port to listen on (default: a free one).
 * - `--script FILE`: the script, a JSON array of turns that every Claude Code
 *   session plays from its start (one session per iteration). A turn is
 *   `{"text": "...", "toolUses": [{"name": "Bash", "input": {...}}]}` (either
 *   part may be left out), with optional `stopReason`, `delayMs`, `usage`
 *   (`{"input_tokens", "output_tokens"}`) and `fault` (e.g.
 *   `{"kind": "http", "status": 529}`; also `reset`, `malformed`, `hang`).
 *   The agent calls complete_task as the tool `mcp__finishline__complete_task`.
 *   Once a session's turns are used up, it is answered "Done.". The default
 *   is `tools/try_script.json`: one commit, then complete_task.
 *
 * Bad flags and bad scripts are one line on stderr and exit 2.
 *
 * @module
 */

import { resolve } from "node:path";
import { z } from "zod";
import { UsageError } from "../agents/support/errors.ts";
import {
  ScriptedModelServer,
  type ScriptedTurn,
  type SessionScript,
  type TurnContext,
} from "../agents/testing/mod.ts";
import { denoDir, git, MAIN, type TempDir, tempDir } from "../tests/_helpers.ts";

/** The script played when `--script` is not given. */
export const DEFAULT_SCRIPT: string = new URL("./try_script.json", import.meta.url).pathname;

/** What the command line asks for. */
export interface TryOptions {
  /** The port; 0 picks a free one. */
  port: number;
  /** The JSON script file. */
  script: string;
  /** Print the usage and exit. */
  help: boolean;
}

const USAGE = "Usage: deno task try [--port N] [--script FILE]";

/**
 * Read the command line.
 *
 * @param args The arguments.
 * @returns The options.
 * @throws {UsageError} For an unknown flag or a bad value.
 */
export function parseTryArgs(args: string[]): TryOptions {
  const options: TryOptions = { port: 0, script: DEFAULT_SCRIPT, help: false };
  for (let index = 0; index < args.length; index++) {
    const [flag, inline] = args[index].split(/=(.*)/s, 2);
    if (flag === "-h" || flag === "--help") {
      options.help = true;
      continue;
    }
    if (flag !== "--port" && flag !== "--script") {
      throw new UsageError(`Unknown flag "${flag}": deno task try takes --port N, --script FILE`);
    }
    const value = inline ?? args[++index];
    if (value === undefined || value === "") {
      throw new UsageError(
        `Flag "${flag}" needs a value: ${flag === "--port" ? "a port number" : "a JSON file"}`,
      );
    }
    // `deno task` runs in the project folder; a relative path is the user's, from INIT_CWD.
    if (flag === "--script") options.script = resolve(Deno.env.get("INIT_CWD") ?? ".", value);
    else options.port = portOf(value);
  }
  return options;
}

function portOf(raw: string): number {
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) {
    throw new UsageError(`Flag "--port" expects a port number from 0 to 65535, got "${raw}"`);
  }
  return port;
}

const TURN = z.strictObject({
  text: z.string().optional(),
  toolUses: z.array(z.strictObject({
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    id: z.string().optional(),
  })).optional(),
  stopReason: z.enum(["end_turn", "tool_use", "max_tokens"]).optional(),
  delayMs: z.number().int().nonnegative().optional(),
  usage: z.strictObject({
    input_tokens: z.number().int().nonnegative().optional(),
    output_tokens: z.number().int().nonnegative().optional(),
  }).optional(),
  fault: z.discriminatedUnion("kind", [
    z.strictObject({
      kind: z.literal("http"),
      status: z.number().int().min(400).max(599),
      message: z.string().optional(),
      headers: z.record(z.string(), z.string()).optional(),
    }),
    ...(["reset", "malformed", "hang"] as const).map((kind) =>
      z.strictObject({ kind: z.literal(kind), afterEvents: z.number().int().min(0).optional() })
    ),
  ]).optional(),
});
const SCRIPT = z.array(TURN).min(1);

/**
 * Read and check a script file.
 *
 * @param file The JSON file.
 * @returns The turns.
 * @throws {UsageError} Naming the file, and the field that is wrong.
 */
export async function loadScript(file: string): Promise<ScriptedTurn[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound ? "file not found" : String(error);
    throw new UsageError(`Cannot read --script "${file}": ${why}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--script "${file}" is not JSON: ${(error as Error).message}`);
  }
  const parsed = SCRIPT.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.map((key) => typeof key === "number" ? `[${key}]` : `.${String(key)}`)
      .join("");
    throw new UsageError(
      path === ""
        ? `--script "${file}" must be a JSON array of turns: ${issue.message}`
        : `--script "${file}" at ${path}: ${issue.message}`,
    );
  }
  return parsed.data as ScriptedTurn[];
}

/** What a reply holds, in a few words: `Bash`, `complete_task`, `text`. */
function describe(turn: ScriptedTurn): string {
  if (turn.fault) return `fault ${turn.fault.kind}`;
  const tools = (turn.toolUses ?? []).map((use) => use.name.replace(/^mcp__finishline__/, ""));
  return tools.length > 0 ? tools.join(", ") : `text "${turn.text ?? ""}"`.slice(0, 60);
}

/** The same turns for every session, each printed as it is served. */
function loggedScript(turns: ScriptedTurn[], log: (line: string) => void): SessionScript {
  return turns.map((turn) => (ctx: TurnContext) => {
    log(`session ${ctx.sessionIndex + 1}, turn ${ctx.turnIndex + 1}: ${describe(turn)}`);
    return turn;
  });
}

/** A scratch git repository with one commit and its own git identity. */
async function scratchRepository(): Promise<TempDir> {
  const repo = await tempDir("finishline-try-repo-");
  await git(repo.path, "init", "-q", "-b", "main");
  await git(repo.path, "config", "user.name", "finishline try");
  await git(repo.path, "config", "user.email", "try@finishline.invalid");
  await Deno.writeTextFile(`${repo.path}/README.md`, "# scratch repository\n");
  await git(repo.path, "add", "README.md");
  await git(repo.path, "commit", "-q", "-m", "initial commit");
  return repo;
}

/** Your global git configuration, which a moved `HOME` would hide. */
async function gitConfigGlobal(): Promise<string | undefined> {
  const home = Deno.env.get("HOME");
  if (!home) return undefined;
  const xdg = Deno.env.get("XDG_CONFIG_HOME") || `${home}/.config`;
  for (const file of [`${home}/.gitconfig`, `${xdg}/git/config`]) {
    if ((await Deno.stat(file).catch(() => undefined))?.isFile) return file;
  }
  return undefined;
}

/**
 * The environment to paste into another shell, as `export` lines.
 *
 * @param env Names and values.
 * @returns One `export NAME=value` line each, quoted for sh when needed.
 */
export function exportLines(env: Record<string, string>): string[] {
  return Object.entries(env).map(([name, value]) =>
    `export ${name}=${
      /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`
    }`
  );
}

/** What to paste, and what to run. */
function instructions(env: Record<string, string>, repo: string, script: string): string {
  const cli = `deno run -A ${MAIN}`;
  return [
    `Scripted model server: ${env.ANTHROPIC_BASE_URL} (script: ${script})`,
    "",
    "Paste these lines into another shell:",
    "",
    ...exportLines(env),
    "",
    "Then try any command of the README there, for example in this scratch repository:",
    "",
    `cd ${repo}`,
    `${cli} --iterate-max 2 --task "Try finishline"`,
    `${cli} runs`,
    "",
    "Each model request is shown below. Ctrl-C stops the server and removes the temp folders.",
    "",
  ].join("\n");
}

/** The server, printing each request it serves. */
async function listen(port: number, turns: ScriptedTurn[]): Promise<ScriptedModelServer> {
  const log = (line: string) => console.log(`[try] ${line}`);
  try {
    return await ScriptedModelServer.start({
      port,
      scripts: () => loggedScript(turns, log),
      fallback: (ctx) => {
        log(`session ${ctx.sessionIndex + 1}, turn ${ctx.turnIndex + 1}: script used up, "Done."`);
        return { text: "Done." };
      },
      sideReply: (ctx) => {
        log(`session ${ctx.sessionIndex + 1}, side request: "OK."`);
        return { text: "OK." };
      },
    });
  } catch (error) {
    if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    throw new UsageError(`Flag "--port" cannot listen on port ${port}: it is in use`);
  }
}

/** Resolves at the first SIGINT or SIGTERM. */
function interrupted(): Promise<Deno.Signal> {
  return new Promise((resolve) => {
    const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
    const listeners = signals.map((signal) => {
      const listener = () => {
        signals.forEach((s, i) => Deno.removeSignalListener(s, listeners[i]));
        resolve(signal);
      };
      Deno.addSignalListener(signal, listener);
      return listener;
    });
  });
}

async function main(args: string[]): Promise<void> {
  const options = parseTryArgs(args);
  if (options.help) return console.log(`${USAGE}\n\nSee the module documentation of tools/try.ts.`);
  const turns = await loadScript(options.script);
  const stop = interrupted();
  await using home = await tempDir("finishline-try-home-");
  await using repo = await scratchRepository();
  await using server = await listen(options.port, turns);
  const gitConfig = await gitConfigGlobal();
  const env = {
    ...server.env(home.path),
    DENO_DIR: await denoDir(),
    ...(gitConfig ? { GIT_CONFIG_GLOBAL: gitConfig } : {}),
  };
  console.log(instructions(env, repo.path, options.script));
  const signal = await stop;
  console.log(`[try] ${signal}: stopping; removing ${home.path} and ${repo.path}`);
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(error.message);
    Deno.exit(error.exitCode);
  }
}
