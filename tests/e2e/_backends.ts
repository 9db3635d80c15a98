/**
 * The agents the backend end-to-end suite runs on, each with its scripted
 * server and its own tool names: Claude Code through the Agent SDK and through
 * claude-agent-acp (Anthropic Messages API), Codex through codex-acp (OpenAI
 * Responses API), opencode through `opencode acp` (Chat Completions) and Gemini
 * CLI through `gemini --acp` (Gemini API).
 *
 * @module
 */

import {
  type RecordedRequest,
  type RoleScripts,
  ScriptedGeminiServer,
  ScriptedModelServer,
  ScriptedResponsesServer,
  type ScriptedTurn,
  type SessionScript,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import type { BackendSetting } from "../../agents/backends/presets.ts";
import { codexAcpBinary, codexConfig } from "../agent_clis/_codex.ts";
import { GEMINI_ACP, geminiEnv, writeGeminiHome } from "../agent_clis/_gemini.ts";
import { opencodeBinary, opencodeConfig } from "../agent_clis/_opencode.ts";
import { tempDir } from "../_helpers.ts";
import { toolCommand } from "../pinned/mod.ts";

/** What complete_task takes. */
export interface CompleteTaskInput {
  status: "success" | "partial" | "blocked";
  original_request_summary: string;
  summary: string;
  remaining_work?: string;
}

/** A started scripted server and what the run needs to reach it. */
export interface Harness extends AsyncDisposable {
  /** Every request the scripted server received. */
  requests: RecordedRequest[];
  /** `behavior.backend` for agent.json; none for the SDK backend. */
  backend?: BackendSetting;
  /** The Anthropic server, for `runCli` to point Claude Code at. */
  server?: ScriptedModelServer;
  /** The HOME of the runs, kept between them as on the user's machine. */
  home: string;
  /** The user's own environment for the runs (a base URL: agent.json cannot set one). */
  env?: Record<string, string>;
  /** Deletes the sessions the agent keeps, as a cleared history or another machine would. */
  forgetSessions(): Promise<void>;
}

/** One agent the suite runs on. */
export interface BackendUnderTest {
  /** The name tests are titled with. */
  name: string;
  /** Whether the agent reports a cost over its protocol. */
  reportsCost: boolean;
  /**
   * Whether the agent reopens a session it kept, in a new process (`--resume`
   * of a `continue` run): `"sometimes"` when that depends on whether the agent
   * had saved the session before it was stopped.
   */
  reopensSessions: boolean | "sometimes";
  /**
   * Whether one agent process serves every new session of a run (the agent
   * closes sessions on request); else each new session has its own process,
   * started while the one before works. Not for the SDK backend.
   */
  keepsProcess: boolean;
  /** A turn that runs `command` in the agent's shell tool. */
  shell(command: string): ScriptedTurn;
  /** A turn that calls complete_task as the agent names it. */
  completeTask(input: CompleteTaskInput): ScriptedTurn;
  /** The tool names a main request offers the model. */
  toolNames(request: RecordedRequest): string[];
  /** The name the agent offers complete_task under. */
  completeTaskName: string;
  /** Starts the scripted server with these scripts, by session. */
  start(scripts: SessionScript[], roles?: RoleScripts): Promise<Harness>;
}

/** claude-agent-acp as tests/pinned/deno.json pins it, run by Deno. */
export const CLAUDE_ACP: string[] = toolCommand("@zed-industries/claude-agent-acp");

function anthropicToolNames(request: RecordedRequest): string[] {
  return ((request.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
}

async function anthropic(
  scripts: SessionScript[],
  roles: RoleScripts | undefined,
  backend?: BackendSetting,
): Promise<Harness> {
  const server = await ScriptedModelServer.start({ scripts, roles });
  const home = await tempDir("finishline-home-");
  return {
    requests: server.requests,
    backend,
    server,
    home: home.path,
    // Claude Code keeps its transcripts under CLAUDE_CONFIG_DIR (the server's env: HOME/.claude).
    forgetSessions: () => removeAll([`${home.path}/.claude/projects`]),
    async [Symbol.asyncDispose]() {
      await server.close();
      await home[Symbol.asyncDispose]();
    },
  };
}

async function removeAll(paths: string[]): Promise<void> {
  for (const path of paths) await Deno.remove(path, { recursive: true }).catch(() => {});
}

const claudeTools = {
  reportsCost: true,
  reopensSessions: true,
  keepsProcess: true,
  shell: (command: string) => toolTurn("Bash", { command }),
  completeTask: (input: CompleteTaskInput) => toolTurn(COMPLETE_TASK_TOOL, { ...input }),
  toolNames: anthropicToolNames,
  completeTaskName: COMPLETE_TASK_TOOL,
};

/** Claude Code through the Claude Agent SDK: the default backend. */
export const CLAUDE_SDK: BackendUnderTest = {
  name: "claude (SDK)",
  ...claudeTools,
  start: (scripts, roles) => anthropic(scripts, roles),
};

/**
 * Claude Code through claude-agent-acp. IS_SANDBOX: the adapter passes
 * --allow-dangerously-skip-permissions, which Claude Code refuses as root
 * outside a sandbox (tests may run as root in a container).
 */
export const CLAUDE_ACP_BACKEND: BackendUnderTest = {
  name: "claude-acp",
  ...claudeTools,
  start: (scripts, roles) =>
    anthropic(scripts, roles, { acp: { command: CLAUDE_ACP, env: { IS_SANDBOX: "1" } } }),
};

/**
 * Codex through the codex-acp native binary, its CODEX_HOME pointing at the
 * scripted Responses server. HOME stays the parent's: Codex starts the
 * complete_task MCP server (`deno run`) without DENO_DIR, so Deno must find
 * its cache under HOME. Codex calls MCP tools as functions in a namespace.
 */
export const CODEX: BackendUnderTest = {
  name: "codex",
  reportsCost: false,
  reopensSessions: true,
  keepsProcess: true,
  // Not a login shell: a profile that runs `pyenv rehash` (as on the CI image)
  // can stall a login shell behind the lock of Codex's own shell snapshot.
  shell: (cmd) => toolTurn("exec_command", { cmd, login: false }),
  completeTask: (input) => ({
    toolUses: [{ name: "complete_task", namespace: "mcp__finishline", input: { ...input } }],
  }),
  toolNames: (request) =>
    ((request.body.tools ?? []) as Array<{ name?: string; tools?: Array<{ name: string }> }>)
      .flatMap((tool) =>
        tool.tools ? tool.tools.map((inner) => `${tool.name}__${inner.name}`) : [tool.name ?? ""]
      ),
  completeTaskName: "mcp__finishline__complete_task",
  async start(scripts, roles) {
    const server = await ScriptedResponsesServer.start({ scripts, roles });
    const home = await tempDir("codex-home-");
    await Deno.writeTextFile(`${home.path}/config.toml`, codexConfig(server));
    return {
      requests: server.requests,
      home: home.path,
      // Codex keeps a thread's rollout under sessions/ and its index in state_N.sqlite.
      forgetSessions: async () => {
        const state = [...Deno.readDirSync(home.path)]
          .filter((entry) => entry.name.startsWith("state_"))
          .map((entry) => `${home.path}/${entry.name}`);
        await removeAll([`${home.path}/sessions`, ...state]);
      },
      backend: {
        acp: {
          command: [await codexAcpBinary()],
          env: { CODEX_HOME: home.path, SCRIPTED_API_KEY: "sk-test" },
          mode: "full-access",
        },
      },
      async [Symbol.asyncDispose]() {
        await server.close();
        await home[Symbol.asyncDispose]();
      },
    };
  },
};

/**
 * opencode through `opencode acp`, its config, data and temp folders in a
 * temp home whose `opencode.json` makes the scripted Chat Completions server
 * the only model (with a price, so that opencode reports a cost). opencode
 * asks for a session title with a request without tools: a side request.
 */
export const OPENCODE: BackendUnderTest = {
  name: "opencode",
  reportsCost: true,
  reopensSessions: true,
  keepsProcess: true,
  shell: (command) => toolTurn("bash", { command, description: "Run the command" }),
  completeTask: (input) => toolTurn("finishline_complete_task", { ...input }),
  toolNames: (request) =>
    ((request.body.tools ?? []) as Array<{ function?: { name: string } }>)
      .map((tool) => tool.function?.name ?? ""),
  completeTaskName: "finishline_complete_task",
  async start(scripts, roles) {
    const server = await ScriptedResponsesServer.start({
      scripts,
      roles,
      isSideRequest: (body) => !Array.isArray(body.tools),
    });
    const home = await tempDir("opencode-home-");
    const config = JSON.parse(opencodeConfig(server));
    // opencode reports usage and cost over ACP only for a model with a known context size.
    Object.assign(config.provider.scripted.models.m, {
      cost: { input: 3, output: 15 },
      limit: { context: 200_000, output: 8_192 },
    });
    await Deno.mkdir(`${home.path}/.config/opencode`, { recursive: true });
    await Deno.writeTextFile(
      `${home.path}/.config/opencode/opencode.json`,
      JSON.stringify(config),
    );
    return {
      requests: server.requests,
      home: home.path,
      // opencode keeps its sessions in one SQLite database under its data folder.
      forgetSessions: () => removeAll([`${home.path}/.local/share/opencode`]),
      backend: {
        acp: {
          command: [await opencodeBinary(), "acp"],
          env: {
            XDG_CONFIG_HOME: `${home.path}/.config`,
            XDG_DATA_HOME: `${home.path}/.local/share`,
            XDG_CACHE_HOME: `${home.path}/.cache`,
            XDG_STATE_HOME: `${home.path}/.local/state`,
            TMPDIR: home.path,
            OPENCODE_DISABLE_AUTOUPDATE: "1",
            OPENCODE_DISABLE_MODELS_FETCH: "1",
          },
        },
      },
      async [Symbol.asyncDispose]() {
        await server.close();
        await home[Symbol.asyncDispose]();
      },
    };
  },
};

/**
 * Gemini CLI through `gemini --acp`, its settings in a temp `GEMINI_CLI_HOME`,
 * pointed at the scripted Gemini API server by `GOOGLE_GEMINI_BASE_URL`. It
 * offers an MCP tool as `mcp_<server>_<tool>`, and reports tokens but no cost
 * over ACP.
 */
export const GEMINI: BackendUnderTest = {
  name: "gemini",
  reportsCost: false,
  // It offers session/load, and answers it with "No previous sessions found for
  // this project" unless it had written the chat to disk before the interrupt
  // (it saves the chat as the turn goes, so either can happen): finishline then
  // starts a new session.
  reopensSessions: "sometimes",
  // Gemini CLI 0.61 cannot close a session (no session/close).
  keepsProcess: false,
  shell: (command) => toolTurn("run_shell_command", { command }),
  completeTask: (input) => toolTurn("mcp_finishline_complete_task", { ...input }),
  toolNames: (request) =>
    ((request.body.tools ?? []) as Array<{ functionDeclarations?: Array<{ name: string }> }>)
      .flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name)),
  completeTaskName: "mcp_finishline_complete_task",
  async start(scripts, roles) {
    const server = await ScriptedGeminiServer.start({ scripts, roles });
    const home = await tempDir("gemini-home-");
    await writeGeminiHome(home.path);
    const { GOOGLE_GEMINI_BASE_URL, ...agentEnv } = geminiEnv(server, home.path);
    return {
      requests: server.requests,
      home: home.path,
      // Gemini CLI keeps its chats under GEMINI_CLI_HOME/.gemini/tmp/<project>/.
      forgetSessions: () => removeAll([`${home.path}/.gemini/tmp`]),
      // Where the agent connects is the user's own setting, never agent.json's.
      env: { GOOGLE_GEMINI_BASE_URL },
      backend: { acp: { command: GEMINI_ACP, env: agentEnv } },
      async [Symbol.asyncDispose]() {
        await server.close();
        await home[Symbol.asyncDispose]();
      },
    };
  },
};

/** Every agent the suite runs on. */
export const BACKENDS: readonly BackendUnderTest[] = [
  CLAUDE_SDK,
  CLAUDE_ACP_BACKEND,
  CODEX,
  OPENCODE,
  GEMINI,
];
