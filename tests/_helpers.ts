/**
 * Shared test helpers: temp git repositories and running the CLI as a real
 * subprocess against a scripted model server.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ScriptedModelServer } from "../agents/testing/mod.ts";
import { removeStaleFolders } from "../agents/support/owned_temp.ts";

/** Absolute path of the CLI entry. */
export const MAIN: string = fileURLToPath(
  new URL("../agents/iterator/main.ts", import.meta.url),
);

/** A temp folder removed on dispose. */
export interface TempDir extends AsyncDisposable {
  /** The folder. */
  path: string;
}

/**
 * A temp folder, removed with `await using` once no process uses it any more
 * (see {@linkcode processesGone}).
 *
 * @param prefix Folder name prefix.
 * @returns The folder.
 */
export async function tempDir(prefix = "finishline-test-"): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    [Symbol.asyncDispose]: async () => {
      await processesGone(path);
      await Deno.remove(path, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * Whether a process has exited: gone from `/proc`, or a zombie its parent has
 * not reaped yet.
 *
 * @param pid The process.
 * @returns True once it no longer runs.
 */
export function exited(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/**
 * Wait until no other process works in `path` or names it in its environment
 * (`HOME`, `CLAUDE_CONFIG_DIR`, ...). A Claude Code process can outlive the
 * CLI or session that started it, and it writes its transcript and settings
 * into its `HOME` as it exits: removed any earlier, the folder comes back. A
 * process still there after `graceMs` (such as the Claude Code child of a
 * runner a test SIGKILLed, retrying a server that is gone) was started by
 * the test, since only its processes know the folder: it is stopped, with
 * SIGTERM and then SIGKILL. Reads `/proc`, so elsewhere it returns at once.
 *
 * @param path The folder.
 * @param graceMs How long processes get to exit on their own.
 */
export async function processesGone(path: string, graceMs = 10_000): Promise<void> {
  const real = await Deno.realPath(path).catch(() => path);
  if (await waitUnused(real, graceMs)) return;
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    for (const pid of await processesUsing(real)) {
      try {
        Deno.kill(pid, signal);
      } catch {
        // it exited meanwhile
      }
    }
    if (await waitUnused(real, 5_000)) return;
  }
}

/** Polls until no process uses `path`; false if some still do after `limitMs`. */
async function waitUnused(path: string, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if ((await processesUsing(path)).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The processes (not this one) whose working directory is in `path`, or whose
 * environment holds `path` or a path inside it.
 */
async function processesUsing(path: string): Promise<number[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir("/proc")) names.push(entry.name);
  } catch {
    return [];
  }
  const inside = (value: string) => value === path || value.startsWith(`${path}/`);
  const found: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === Deno.pid) continue;
    const [cwd, environ] = await Promise.all([
      Deno.readLink(`/proc/${pid}/cwd`).catch(() => ""),
      Deno.readTextFile(`/proc/${pid}/environ`).catch(() => ""),
    ]);
    if (
      inside(cwd) ||
      environ.split("\0").some((entry) => inside(entry.slice(entry.indexOf("=") + 1)))
    ) {
      found.push(pid);
    }
  }
  return found;
}

/**
 * Run git in a folder and return its stdout.
 *
 * @param cwd The repository.
 * @param args git arguments.
 * @returns stdout, trimmed.
 */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command("git", {
    args,
    cwd,
    env: {
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "test@example.invalid",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "test@example.invalid",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `git ${args.join(" ")} failed: ${new TextDecoder().decode(output.stderr)}`,
    );
  }
  return new TextDecoder().decode(output.stdout).trim();
}

/**
 * Writes `.agent/<name>/agent.json` in `repo` and commits it, so that the run
 * starts from a clean tree (an uncommitted agent.json would be the agent's
 * work to rescue).
 *
 * @param repo The repository.
 * @param definition The agent definition; its `name` names the folder.
 */
export async function commitAgent(
  repo: string,
  definition: { name: string } & Record<string, unknown>,
): Promise<void> {
  await Deno.mkdir(`${repo}/.agent/${definition.name}`, { recursive: true });
  await Deno.writeTextFile(
    `${repo}/.agent/${definition.name}/agent.json`,
    // As a formatter leaves it: a repository's own `deno fmt --check` passes on it.
    `${JSON.stringify(definition, null, 2)}\n`,
  );
  await git(repo, "add", ".agent");
  await git(repo, "commit", "-qm", "chore: agent");
}

/**
 * A temp git repository with one commit, removed on dispose.
 *
 * @returns The repository folder.
 */
export async function tempRepo(): Promise<TempDir> {
  const dir = await tempDir("finishline-repo-");
  await git(dir.path, "init", "-q", "-b", "main");
  // The agent commits too, on machines with no global git identity.
  await git(dir.path, "config", "user.name", "Test");
  await git(dir.path, "config", "user.email", "test@example.invalid");
  await Deno.writeTextFile(`${dir.path}/README.md`, "# test repo\n");
  await git(dir.path, "add", "README.md");
  await git(dir.path, "commit", "-q", "-m", "initial commit");
  return {
    path: dir.path,
    [Symbol.asyncDispose]: async () => {
      // A gate a test made and never closed keeps its clean-copy worktree in
      // TMPDIR: removed with the repository, so no test leaves a folder behind.
      await removeLinkedWorktrees(dir.path);
      await removePrivateCopies(dir.path);
      await dir[Symbol.asyncDispose]();
    },
  };
}

/**
 * The clean copies finishline made of a repository (private folders in the
 * temp folder named `finishline-checks-<hash of its root>-…`), removed.
 */
async function removePrivateCopies(repo: string): Promise<void> {
  const root = await Deno.realPath(repo).catch(() => repo);
  const hash = [
    ...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(root))),
  ].map((byte) => byte.toString(16).padStart(2, "0")).join("").slice(0, 12);
  const tmp = Deno.env.get("TMPDIR") || "/tmp";
  const found: string[] = [];
  try {
    for await (const entry of Deno.readDir(tmp)) {
      if (entry.isDirectory && entry.name.startsWith(`finishline-checks-${hash}-`)) {
        found.push(`${tmp}/${entry.name}`);
      }
    }
  } catch {
    return;
  }
  for (const folder of found) {
    await processesGone(`${folder}/tree`);
    await Deno.remove(folder, { recursive: true }).catch(() => {});
  }
}

/** The folders of a repository's linked worktrees, removed (the main one stays). */
async function removeLinkedWorktrees(repo: string): Promise<void> {
  const listed = await new Deno.Command("git", {
    args: ["worktree", "list", "--porcelain"],
    cwd: repo,
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => undefined);
  if (!listed?.success) return;
  const paths = new TextDecoder().decode(listed.stdout).split("\n")
    .filter((line) => line.startsWith("worktree "))
    .map((line) => line.slice("worktree ".length))
    .slice(1);
  for (const path of paths) {
    await processesGone(path);
    await Deno.remove(path, { recursive: true }).catch(() => {});
  }
}

/** What a CLI run printed and returned. */
export interface CliRun {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Options of {@linkcode runCli}. */
export interface RunCliOptions {
  /** Working directory of the CLI. */
  cwd: string;
  /** The scripted model server the agent talks to. */
  server?: ScriptedModelServer;
  /** Home folder for Claude Code. */
  home?: string;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Called with the running child, e.g. to send it a signal. */
  onSpawn?: (child: Deno.ChildProcess) => void | Promise<void>;
  /** The module to run instead of the CLI, e.g. a wrapper that registers a handler and calls its `main`. */
  entry?: string;
}

/**
 * Run `deno run -A agents/iterator/main.ts ARGS` as a subprocess, with the
 * Claude Code child pointed at the scripted server.
 *
 * @param args CLI arguments.
 * @param options cwd, server, env.
 * @returns Exit code and output.
 */
export async function runCli(
  args: string[],
  options: RunCliOptions,
): Promise<CliRun> {
  await using ownHome = options.home ? undefined : await tempDir("finishline-home-");
  const home = options.home ?? ownHome!.path;
  const env: Record<string, string> = {
    NO_COLOR: "1",
    // The scripted server's env moves HOME; keep Deno's cache where it is.
    DENO_DIR: await denoDir(),
    ...(options.server ? options.server.env(home) : {}),
    ...options.env,
  };
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", options.entry ?? MAIN, ...args],
    cwd: options.cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await options.onSpawn?.(child);
  const output = await child.output();
  // A finishline killed with SIGKILL leaves its owned temp folders to the next finishline,
  // which removes them when it makes one of its own: the test plays that next run.
  if (output.signal === "SIGKILL") {
    for (const prefix of ["finishline-sandbox-", "finishline-check-home-"]) {
      removeStaleFolders(prefix);
    }
  }
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

let cachedDenoDir: string | undefined;

/**
 * Deno's cache folder of this process, so that subprocesses with another
 * HOME do not download every npm package again.
 *
 * @returns The folder.
 */
export async function denoDir(): Promise<string> {
  if (cachedDenoDir) return cachedDenoDir;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
  }).output();
  cachedDenoDir = JSON.parse(new TextDecoder().decode(output.stdout))
    .denoDir as string;
  return cachedDenoDir;
}

/** The Claude Code binary the SDK ships, from Deno's npm cache. */
export async function bundledClaude(): Promise<string> {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
  ) as { imports: Record<string, string> };
  const version = config.imports["@anthropic-ai/claude-agent-sdk"].split("@").at(-1)!;
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  const os = Deno.build.os === "darwin"
    ? "darwin"
    : Deno.build.os === "windows"
    ? "win32"
    : "linux";
  const root = join(await denoDir(), "npm", "registry.npmjs.org", "@anthropic-ai");
  for (const variant of [`${os}-${arch}`, `${os}-${arch}-musl`]) {
    const path = join(root, `claude-agent-sdk-${variant}`, version, "claude");
    try {
      await Deno.stat(path);
      return path;
    } catch {
      // try the next variant
    }
  }
  throw new Error(
    `Cannot find Claude Code ${version} for ${os}-${arch} under ${root}: run "deno task test" (or any finishline run) once to download it`,
  );
}
