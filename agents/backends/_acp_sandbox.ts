/**
 * An ACP agent in the sandbox: its command started through `bwrap` in the
 * session's world, with finishline's complete_task server (a Deno script the
 * agent starts) readable inside. Private to the backends folder.
 *
 * @module
 */

import { delimiter, dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NetworkSetting, SandboxMode } from "../definition/definition_types.ts";
import type { AgentSandbox, WrappedCommand } from "../sandbox/agent_sandbox.ts";
import { bubblewrapAvailability } from "../sandbox/bubblewrap.ts";
import { modelHosts, networkAccess } from "../sandbox/network.ts";
import { AgentSetupError } from "./port.ts";

/** What the complete_task server a sandboxed agent starts reads: finishline's modules and config. */
function finishlineSources(): string[] {
  const root = new URL("../../", import.meta.url);
  if (root.protocol !== "file:") return [];
  const path = fileURLToPath(root);
  return ["agents", "deno.json", "deno.lock"].map((name) => join(path, name)).filter((file) => {
    try {
      Deno.statSync(file);
      return true;
    } catch {
      return false;
    }
  });
}

function isFolder(path: string): boolean {
  if (!isAbsolute(path)) return false;
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * What the agent's command line names by absolute path (a config file, a
 * script), read-only with the folder of each file (a config's lock beside
 * it): the user wrote them into the agent's command.
 */
function namedPaths(args: string[]): string[] {
  const found = new Set<string>();
  for (const arg of args) {
    if (!isAbsolute(arg)) continue;
    try {
      const info = Deno.statSync(arg);
      found.add(info.isFile ? dirname(arg) : arg);
    } catch {
      // not a path
    }
  }
  return [...found];
}

/** The program's path: as given when it has a slash, else the first match on PATH. */
function onPath(program: string, env: Record<string, string>): string | undefined {
  if (program.includes("/")) return program;
  const path = env.PATH ?? Deno.env.get("PATH") ?? "";
  for (const dir of path.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    try {
      const info = Deno.statSync(join(dir, program));
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return join(dir, program);
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The sandboxed form of an ACP agent's command, or undefined when it runs
 * unsandboxed (`off`, or `auto` with no sandbox here).
 *
 * @param sandbox The backend's sandbox.
 * @param program The agent's program.
 * @param args Its arguments.
 * @param options Its folder, environment (over the parent's), `verify.sandbox`, and the
 *   agent command's own environment, whose folders (`CODEX_HOME`) stay writable.
 * @returns The command to start.
 * @throws {AgentSetupError} When the program is missing, or `required` finds no sandbox.
 */
export function sandboxedAgent(
  sandbox: AgentSandbox,
  program: string,
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string> | undefined;
    mode?: SandboxMode;
    /** The agent command's own environment (agent.json): its folders are the agent's state. */
    agentEnv?: Record<string, string>;
    /** `verify.network`, and the backend whose model's hosts it allows. */
    network?: { setting?: NetworkSetting; backend: string };
    /** Loopback ports it reaches besides (the complete_task callback). */
    forward?: number[];
  },
): WrappedCommand | undefined {
  const mode = options.mode ?? "auto";
  if (mode === "off") return undefined;
  const found = bubblewrapAvailability();
  if (!found.available) {
    if (mode === "required") {
      throw new AgentSetupError(`verify.sandbox is "required" and ${found.reason}`);
    }
    return undefined;
  }
  const env = { ...Deno.env.toObject(), ...options.env };
  // Missing: the caller's own error, as without a sandbox.
  const path = onPath(program, env);
  if (!path) throw new Deno.errors.NotFound(program);
  return sandbox.wrap(path, args, {
    cwd: options.cwd,
    env,
    readOnly: [...finishlineSources(), Deno.execPath(), ...namedPaths(args)],
    writable: Object.values(options.agentEnv ?? {}).filter(isFolder),
    network: options.network &&
      networkAccess(
        options.network.setting,
        modelHosts(options.network.backend, env, options.cwd),
      ),
    forward: options.forward,
    agent: options.network?.backend,
  });
}
