/**
 * What one agent session may see: its checkout and git store (writable),
 * the repository's config and hooks (read-only), a private home and /tmp,
 * the tools on its PATH (read-only). Everything else on the machine is not
 * there at all: an allowlist, not a list of places to hide.
 *
 * @module
 */

import { spawnSync } from "node:child_process";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** The folders of one session's world, as host paths (see {@linkcode bubblewrapArgs}). */
export interface SessionWorld {
  /** The session's working directory. */
  cwd: string;
  /** Host folder mounted at `/tmp`. */
  tmp: string;
  /** Host folder mounted as the home. */
  home: string;
  /** The home's path inside (the session's `HOME`). */
  homePath: string;
  /** Files of the user's home mounted read-only into the private one: [host path, path inside]. */
  homeReadOnly: Array<[string, string]>;
  /** Tool folders, read-only. */
  readOnly: string[];
  /** The checkout and git folders outside it. */
  writable: string[];
  /** Single writable files (none today; kept for a session that needs one). */
  writableFiles: string[];
  /** Folders inside a writable one covered by an empty one (finishline's state). */
  hidden: string[];
  /** Paths inside a writable one made read-only (`.git/config`, `.git/hooks`). */
  readOnlyInside: string[];
}

/** Where a session's private folders are on the host. */
export interface PrivateDirs {
  home: string;
  tmp: string;
}

/** finishline's state inside a repository: never in a session's world. */
export const FINISHLINE_STATE_DIR = ".agent/.finishline";

/** Folders of the user's home that hold many tools' folders, one each. */
const SHARED_HOME_DIRS = [".cache", ".config"];

/** Folders whose tools are read from where they are: no binding needed. */
const SYSTEM_PREFIXES = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/", "/opt/"];

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function realOr(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** `inner` is `outer` or inside it. */
export function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The checkout's top, git folder and common git folder, absolute; undefined outside a repository. */
function gitPlaces(cwd: string): { top: string; gitDir: string; common: string } | undefined {
  const found = spawnSync("git", [
    "-C",
    cwd,
    // Asked about a folder, not trusting it: nothing of its config runs for rev-parse.
    "-c",
    "safe.directory=*",
    "rev-parse",
    "--path-format=absolute",
    "--show-toplevel",
    "--git-dir",
    "--git-common-dir",
  ], { encoding: "utf8", env: { ...Deno.env.toObject(), GIT_CONFIG_NOSYSTEM: "1" } });
  if (found.status !== 0) return undefined;
  const [top, gitDir, common] = String(found.stdout).trim().split("\n");
  if (!top || !gitDir || !common) return undefined;
  return { top: realOr(top), gitDir: realOr(gitDir), common: realOr(common) };
}

/**
 * The tool folders a session needs: the agent's own executable's folder,
 * each PATH entry outside the system folders (under the user's home: the
 * home's top folder that holds it, `~/.cargo`, `~/.pyenv`, with `~/.rustup`
 * beside `~/.cargo`; in the folders many tools share, `~/.cache` and
 * `~/.config`, only the tool's own one, `~/.cache/deno`), and Deno's cache
 * (an agent run with `deno`).
 */
function toolDirs(
  executable: string | undefined,
  env: Record<string, string | undefined>,
  userHome: string | undefined,
) {
  const dirs = new Set<string>();
  const add = (path: string) => {
    if (!isDir(path)) return;
    const real = realOr(path);
    if (SYSTEM_PREFIXES.some((prefix) => `${real}/`.startsWith(prefix))) return;
    if (userHome && within(real, userHome) && real !== userHome) {
      const [first, second] = relative(userHome, real).split(sep);
      const top = join(userHome, first);
      // ~/.local holds the Python user site: only its bin folder.
      if (first === ".local") {
        dirs.add(real);
        return;
      }
      // Every tool's cache and config: only this tool's, the rest of the private one stays
      // writable (a tool makes its own there: `~/.cache/go-build`, `~/.cache/opencode`).
      if (SHARED_HOME_DIRS.includes(first)) {
        dirs.add(second ? join(top, second) : real);
        return;
      }
      dirs.add(top);
      if (top === join(userHome, ".cargo") && isDir(join(userHome, ".rustup"))) {
        dirs.add(join(userHome, ".rustup"));
      }
      return;
    }
    if (real !== "/" && real !== userHome) dirs.add(real);
  };
  if (executable && isAbsolute(executable)) add(dirname(realOr(executable)));
  for (const entry of (env.PATH ?? "").split(":")) if (entry && isAbsolute(entry)) add(entry);
  const denoDir = env.DENO_DIR ?? (userHome ? join(userHome, ".cache", "deno") : undefined);
  if (denoDir) add(denoDir);
  return [...dirs];
}

/** Dependency folders finishline links into its own checkouts (the verifier's, a clean copy). */
const LINKED_DEPENDENCIES = ["node_modules", ".venv", "venv", "vendor"];

/**
 * The targets of the checkout's dependency-folder links, read-only: only a
 * link to a folder of the same name at the top of another repository, as
 * finishline makes them, so that a committed link to `~/.ssh` opens nothing.
 */
function linkedDependencies(checkout: string): string[] {
  const found: string[] = [];
  for (const name of LINKED_DEPENDENCIES) {
    const path = join(checkout, name);
    try {
      if (!Deno.lstatSync(path).isSymlink) continue;
      const target = Deno.realPathSync(path);
      if (basename(target) === name && isDir(target) && exists(join(dirname(target), ".git"))) {
        found.push(target);
      }
    } catch {
      // no such link
    }
  }
  return found;
}

/**
 * The world of a session started in `cwd` with `env`.
 *
 * @param cwd The session's working directory.
 * @param options `env`: the session's environment (its `HOME` is where the
 *   private home appears); `executable`: the agent's program; `dirs`: the
 *   host folders of its private home and /tmp; `userHome`: the user's home.
 * @returns The world, as host paths.
 */
export function sessionWorld(
  cwd: string,
  options: {
    env: Record<string, string | undefined>;
    executable?: string;
    dirs: PrivateDirs;
    /** The home of the user running finishline, whose tool folders may be read. @default $HOME */
    userHome?: string;
  },
): SessionWorld {
  const userHome = options.userHome ?? Deno.env.get("HOME");
  const realCwd = realOr(resolve(cwd));
  const git = gitPlaces(realCwd);
  const checkout = git?.top ?? realCwd;
  const writable = [checkout];
  const readOnlyInside: string[] = [];
  if (git) {
    for (const dir of [git.common, git.gitDir]) {
      if (!writable.some((outer) => within(dir, outer))) writable.push(dir);
    }
    // git starts programs named in these; the session reads them, never changes them.
    for (const path of ["config", "hooks", "info"]) {
      if (exists(join(git.common, path))) readOnlyInside.push(join(git.common, path));
    }
    if (git.gitDir !== git.common && exists(join(git.gitDir, "config.worktree"))) {
      readOnlyInside.push(join(git.gitDir, "config.worktree"));
    }
  }
  // The run history lives here in a main checkout, and may be made after the session starts:
  // the folder is made now so that it is covered from the start.
  const state = join(checkout, FINISHLINE_STATE_DIR);
  const main = !git || git.gitDir === join(checkout, ".git");
  if (main && !isDir(state)) {
    try {
      Deno.mkdirSync(state, { recursive: true });
    } catch {
      // a read-only checkout: nothing of finishline's can be written there either
    }
  }
  const hidden = [state].filter(isDir);
  const linked = linkedDependencies(checkout);
  const homePath = options.env.HOME && isAbsolute(options.env.HOME)
    ? options.env.HOME
    : (userHome ?? "/home/agent");
  const world: SessionWorld = {
    cwd: realCwd,
    tmp: options.dirs.tmp,
    home: options.dirs.home,
    homePath,
    homeReadOnly: [],
    readOnly: [
      ...toolDirs(options.executable, options.env, userHome).filter((dir) =>
        !writable.some((outer) => within(dir, outer))
      ),
      ...linked,
    ],
    writable,
    writableFiles: [],
    hidden,
    readOnlyInside,
  };
  return world;
}
