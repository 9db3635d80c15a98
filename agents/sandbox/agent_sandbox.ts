/**
 * The sandbox agent sessions run in: one private home and /tmp per working
 * directory (the worker's checkout, the verifier's folder, the reviewer's),
 * kept while the backend lives so that a resumed session finds its
 * transcript, removed by {@linkcode AgentSandbox.close}.
 *
 * @module
 */

import { join } from "node:path";
import { ownedTempDir } from "../support/owned_temp.ts";
import type { SandboxMode } from "../definition/definition_types.ts";
import { bubblewrapArgs, bubblewrapAvailability } from "./bubblewrap.ts";
import type { SandboxAvailability } from "./bubblewrap.ts";
import { sandboxEnv, seedPrivateHome } from "./private_home.ts";
import { type PrivateDirs, sessionWorld } from "./session_world.ts";
import {
  NET_FOLDER_INSIDE,
  type NetworkAccess,
  type NetworkBridge,
  socatPath,
  startBridge,
} from "./network.ts";

const ROOT_PREFIX = "finishline-sandbox-";
/**
 * Claude Code's folder of a working directory's transcripts, relative to its
 * config folder: the path with every character but letters and digits made `-`.
 */
function transcriptFolder(cwd: string): string {
  return join("projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"));
}

/** Copy the regular files of `from` into `to`, folders made as needed; links are not followed. */
function copyFiles(from: string, to: string): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(from)];
  } catch {
    return;
  }
  Deno.mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const entry of entries) {
    if (entry.isSymlink) continue;
    if (entry.isDirectory) copyFiles(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile) Deno.copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}

/** A command turned into its sandboxed form. */
export interface WrappedCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * Whether sessions in `mode` run sandboxed here.
 *
 * @param mode The `verify.sandbox` setting.
 * @returns The availability, or undefined when the mode is `off`.
 */
export function sandboxFor(mode: SandboxMode): SandboxAvailability | undefined {
  return mode === "off" ? undefined : bubblewrapAvailability();
}

/**
 * Starts agent processes in a sandbox whose world is their checkout, a
 * private home and a private /tmp.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AgentSandbox } from "./agent_sandbox.ts";
 *
 * await using sandbox = new AgentSandbox();
 * const wrapped = sandbox.wrap("true", [], { cwd: Deno.cwd(), env: Deno.env.toObject() });
 * if (wrapped) assert.equal(wrapped.command, "bwrap");
 * ```
 */
export class AgentSandbox implements AsyncDisposable {
  #root: string | undefined;
  #dirs = new Map<string, PrivateDirs>();
  /** The user's Claude Code config folder of each working directory's sessions. */
  #configs = new Map<string, string>();
  /** Prepared command lines by what they depend on: later sessions in a folder start at once. */
  #prepared = new Map<string, { args: string[]; env: Record<string, string>; prefix: string[] }>();
  /** The network bridges of sessions whose network is an allowlist. */
  #bridges: NetworkBridge[] = [];
  /** Processes started in it that have not exited: their folders stay until the last one is gone. */
  #live = 0;
  /**
   * Closed once (the backend released): from then on the folders go whenever
   * no process lives in them, a later session making fresh ones.
   */
  #released = false;
  #unload = () => {
    if (!this.#root) return;
    this.#keepTranscripts();
    try {
      Deno.removeSync(this.#root, { recursive: true });
    } catch {
      // already gone
    }
  };

  /**
   * Keep the private folders while a process started in the sandbox lives: a
   * close meanwhile (the backend released while the finish model's process,
   * opened ahead, still answers) removes them when it exits, not under it.
   *
   * @param exited Settles when the process has exited.
   */
  track(exited: Promise<unknown>): void {
    this.#live++;
    const done = () => {
      this.#live--;
      if (this.#live === 0 && this.#released) this.#remove();
    };
    exited.then(done, done);
  }

  /**
   * The folder that holds its sessions' private homes and /tmp folders, once
   * a session was wrapped and until it is closed.
   *
   * @returns The folder, or undefined.
   */
  get folder(): string | undefined {
    return this.#root;
  }

  /** The private folders of sessions in `cwd`, made (and the home seeded) the first time. */
  #private(cwd: string): { dirs: PrivateDirs; fresh: boolean } {
    const known = this.#dirs.get(cwd);
    if (known) return { dirs: known, fresh: false };
    if (!this.#root) {
      // The folders of a finishline killed with SIGKILL go first.
      this.#root = ownedTempDir(ROOT_PREFIX);
      // A backend nobody released still leaves nothing behind when the process ends.
      globalThis.addEventListener("unload", this.#unload);
    }
    const base = join(this.#root, String(this.#dirs.size + 1));
    const dirs = { home: join(base, "home"), tmp: join(base, "tmp") };
    Deno.mkdirSync(dirs.home, { recursive: true, mode: 0o700 });
    Deno.mkdirSync(dirs.tmp, { recursive: true, mode: 0o700 });
    this.#dirs.set(cwd, dirs);
    return { dirs, fresh: true };
  }

  /**
   * The sandboxed form of a command, or undefined when no sandbox can be had
   * here (the caller decides whether that is allowed: `verify.sandbox`).
   *
   * @param command The program.
   * @param args Its arguments.
   * @param options Its working directory and environment (as the user set them),
   *   more folders or files it reads (the program of an MCP server it starts) and
   *   writes (an agent's own state folder, named in its definition), what of the
   *   network it reaches (`verify.network`; open when unset) and loopback ports
   *   it reaches besides (an ACP agent's complete_task callback), and the ACP
   *   preset it runs (whose login files appear read-only).
   * @returns `bwrap` with its arguments and the environment inside.
   */
  wrap(
    command: string,
    args: string[],
    options: {
      cwd: string;
      env: Record<string, string | undefined>;
      readOnly?: string[];
      writable?: string[];
      network?: NetworkAccess;
      forward?: number[];
      agent?: string;
    },
  ): WrappedCommand | undefined {
    if (!bubblewrapAvailability().available) return undefined;
    const key = JSON.stringify([
      options.cwd,
      command,
      options.env,
      options.readOnly ?? [],
      options.writable ?? [],
      options.network ?? null,
      options.forward ?? [],
      options.agent ?? null,
    ]);
    const known = this.#prepared.get(key);
    if (known) {
      return {
        command: "bwrap",
        args: [...known.args, "--", ...known.prefix, command, ...args],
        env: known.env,
      };
    }
    const { dirs, fresh } = this.#private(options.cwd);
    const world = sessionWorld(options.cwd, { env: options.env, executable: command, dirs });
    world.readOnly.push(...(options.readOnly ?? []));
    world.writable.push(...(options.writable ?? []));
    seedPrivateHome(world, options.env, options.agent);
    if (fresh) {
      // Its earlier transcripts of this folder, for a resumed session (`--resume`, `claude --resume`).
      const home = options.env.HOME;
      const config = options.env.CLAUDE_CONFIG_DIR ?? (home ? join(home, ".claude") : undefined);
      if (config) {
        this.#configs.set(options.cwd, config);
        const folder = transcriptFolder(options.cwd);
        copyFiles(join(config, folder), join(dirs.home, ".claude", folder));
      }
    }
    const prepared = {
      args: bubblewrapArgs(world),
      env: sandboxEnv(options.env, world),
      prefix: [] as string[],
    };
    const socat = socatPath();
    if (options.network && !options.network.open && socat) {
      // The session's own network: only what the allowlist's bridges reach.
      const folder = join(this.#root!, `net-${this.#bridges.length + 1}`);
      Deno.mkdirSync(folder, { mode: 0o700 });
      const bridge = startBridge(folder, options.network, {
        forward: options.forward,
        socat,
        upstream: options.env.HTTPS_PROXY ?? options.env.https_proxy,
      });
      this.#bridges.push(bridge);
      prepared.args.push("--unshare-net", "--ro-bind", folder, NET_FOLDER_INSIDE);
      prepared.env = { ...prepared.env, ...bridge.env };
      prepared.prefix = bridge.prefix;
    }
    this.#prepared.set(key, prepared);
    return {
      command: "bwrap",
      args: [...prepared.args, "--", ...prepared.prefix, command, ...args],
      env: prepared.env,
    };
  }

  /**
   * The hosts its sessions asked for and were refused (`host:port`), while it lives.
   *
   * @returns The refused hosts, sorted.
   */
  get refusedHosts(): string[] {
    return [...new Set(this.#bridges.flatMap((bridge) => [...bridge.refused]))].sort();
  }

  /**
   * Remove the private homes and /tmp folders; while a tracked process still
   * lives, they are removed when the last one exits. From then on, folders a
   * later session makes go when no process lives in them.
   *
   * @returns Resolves once they are gone, or their removal is left to that exit.
   */
  close(): Promise<void> {
    this.#released = true;
    if (this.#live === 0) this.#remove();
    return Promise.resolve();
  }

  /**
   * Remove the folders now, the transcripts kept first. At once, not awaited:
   * a removal left half done when the process exits (the last session's
   * process ended just before the CLI's exit) would leave the rest behind,
   * with the unload listener that would have caught it gone.
   */
  #remove(): void {
    const root = this.#root;
    this.#root = undefined;
    globalThis.removeEventListener("unload", this.#unload);
    if (root) this.#keepTranscripts();
    this.#dirs.clear();
    this.#configs.clear();
    this.#prepared.clear();
    for (const bridge of this.#bridges) bridge.close();
    this.#bridges = [];
    if (!root) return;
    try {
      Deno.removeSync(root, { recursive: true });
    } catch {
      // already gone
    }
  }

  /**
   * The sessions' transcripts go where Claude Code keeps the user's, as an
   * unsandboxed session's would: a run resumed later, or `claude --resume`,
   * finds them. Only each folder's own transcript folder, regular files only.
   */
  #keepTranscripts(): void {
    for (const [cwd, dirs] of this.#dirs) {
      const config = this.#configs.get(cwd);
      if (!config) continue;
      const folder = transcriptFolder(cwd);
      try {
        copyFiles(join(dirs.home, ".claude", folder), join(config, folder));
      } catch {
        // a full disk or an unwritable config folder: the run's own record is kept apart
      }
    }
  }

  /** Same as {@linkcode AgentSandbox.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
