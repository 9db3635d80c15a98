/**
 * The environment every check runs in, at the baseline and at each claim
 * alike: the user's environment, with a fresh home of its own for each run
 * (no user npm, pip, git or Python site configuration: the agent could have
 * written them), Python's bytecode kept out of the copy both ways, and the
 * toolchains' caches pointed at the user's real ones so that offline builds
 * keep working. Bytecode is written to a folder of finishline's beside the
 * copy instead ({@linkcode checkEnvironment}).
 *
 * What remains: those caches (`CARGO_HOME`, `RUSTUP_HOME`, Go's module and
 * build caches, `DENO_DIR`, npm's cache, pyenv's root) are the user's, and
 * Cargo reads `$CARGO_HOME/config.toml`; a worker that can write the user's
 * home could change them. The sandbox around agent sessions keeps the worker
 * from writing there.
 *
 * @module
 */

import path from "node:path";
import { ownedTempDir } from "../../support/owned_temp.ts";
import { BUILD_FOLDER_VARIABLE } from "./build_folder.ts";

/** A variable finishline sets for the checks it runs, and why. */
export interface CheckVariable {
  /** The variable's name. */
  name: string;
  /** Its value (`<fresh home>` and the like for what is made per run). */
  value: string;
  /** Why finishline sets it. */
  why: string;
}

/** The environment of one check run, and what removes its fresh folders. */
export interface CheckEnvironment {
  /** The variables over the user's environment. */
  env: Record<string, string>;
  /** Removes the run's fresh home; never throws. */
  dispose(): Promise<void>;
}

const CI_WHY = "runners that otherwise watch for changes and never exit run once " +
  "(react-scripts test starts jest --watch unless CI is set), and jest fails a test " +
  "whose snapshot is missing instead of writing one into the repository " +
  "(its --ci default), so a new snapshot test cannot pass by recording what the code returns";

/** The user's home, as finishline was started with it. */
function realHome(): string {
  return Deno.env.get("HOME") ?? "";
}

/** A path under the user's home when `HOME` is known, for a default location. */
function underHome(...parts: string[]): string | undefined {
  const home = realHome();
  return home ? path.join(home, ...parts) : undefined;
}

function exists(file: string): boolean {
  try {
    Deno.statSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * The toolchain caches, each from its variable when set, else the tool's
 * default under the user's real home: the fresh home would otherwise hide
 * them, and an offline build would fail.
 */
function toolchainCaches(): CheckVariable[] {
  const env = (name: string) => Deno.env.get(name) || undefined;
  const cacheHome = env("XDG_CACHE_HOME") ?? underHome(".cache");
  const goPath = env("GOPATH") ?? underHome("go");
  const denoDir = env("DENO_DIR") ??
    (Deno.build.os === "darwin"
      ? underHome("Library", "Caches", "deno")
      : cacheHome && path.join(cacheHome, "deno"));
  const entries: Array<[string, string | undefined, string]> = [
    ["CARGO_HOME", env("CARGO_HOME") ?? underHome(".cargo"), "Cargo's registry and git caches"],
    ["RUSTUP_HOME", env("RUSTUP_HOME") ?? underHome(".rustup"), "the installed Rust toolchains"],
    ["GOPATH", goPath, "Go's module and tool folder"],
    [
      "GOMODCACHE",
      env("GOMODCACHE") ?? (goPath && path.join(goPath, "pkg", "mod")),
      "Go's downloaded modules",
    ],
    [
      "GOCACHE",
      env("GOCACHE") ?? (cacheHome && path.join(cacheHome, "go-build")),
      "Go's build cache",
    ],
    ["DENO_DIR", denoDir, "Deno's module cache"],
    ["npm_config_cache", env("npm_config_cache") ?? underHome(".npm"), "npm's package cache"],
    ["PYENV_ROOT", env("PYENV_ROOT") ?? underHome(".pyenv"), "pyenv's interpreters"],
    ["RBENV_ROOT", env("RBENV_ROOT") ?? underHome(".rbenv"), "rbenv's interpreters"],
    ["ASDF_DATA_DIR", env("ASDF_DATA_DIR") ?? underHome(".asdf"), "asdf's tools"],
    ["VOLTA_HOME", env("VOLTA_HOME") ?? underHome(".volta"), "Volta's tools"],
  ];
  // A version manager's default that does not exist is left out: it is not used here. The
  // caches are set either way: a tool would otherwise fill one in each fresh home.
  const managers = new Set(["PYENV_ROOT", "RBENV_ROOT", "ASDF_DATA_DIR", "VOLTA_HOME"]);
  return entries.flatMap(([name, value, what]) =>
    value && (!managers.has(name) || Deno.env.get(name) || exists(value))
      ? [{
        name,
        value,
        why: `${what}, the user's real one: the fresh home would hide it and offline builds fail`,
      }]
      : []
  );
}

/**
 * Every variable finishline sets for the checks, with its value (per-run
 * folders named in angle brackets) and why: what `checks` prints.
 *
 * @returns The variables, in the order they are set.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkVariables } from "./check_env.ts";
 *
 * const names = checkVariables().map((variable) => variable.name);
 * assert.ok(names.includes("CI"));
 * assert.ok(names.includes("HOME"));
 * assert.ok(names.includes("PYTHONNOUSERSITE"));
 * ```
 */
export function checkVariables(): CheckVariable[] {
  return [
    { name: "CI", value: "true", why: CI_WHY },
    {
      name: "HOME",
      value: "<a fresh, empty folder for each run>",
      why: "no user configuration reaches the checks (~/.npmrc node-options, pip.conf, " +
        "~/.gitconfig, ~/.config): the agent could have written it",
    },
    {
      name: "TMPDIR",
      value: "<a fresh, empty folder for each run>",
      why: "nothing a run leaves in the temp folder (a test runner's transform cache, jest's " +
        "haste map, vite's compiled modules, a build folder) reaches the next, and nothing " +
        "is left behind when a run is stopped",
    },
    {
      name: "XDG_CONFIG_HOME",
      value: "<the fresh home>/.config",
      why: "the same for tools that read their configuration from there",
    },
    {
      name: "GIT_CONFIG_GLOBAL",
      value: "/dev/null",
      why: "no user git configuration (filters, hooks path, aliases) in git calls the checks make",
    },
    {
      name: "PYTHONNOUSERSITE",
      value: "1",
      why: "Python loads nothing from the user's site folder (a .pth file there runs at start-up)",
    },
    {
      name: "PYTHONPYCACHEPREFIX",
      value: "<finishline's own folder beside the copy>",
      why: "Python reads and writes bytecode there only, never in the copy's __pycache__ " +
        "(a committed .pyc compiled from other code with an unchecked hash would run instead " +
        "of its source); the copy's part of it (its linked dependency folders excepted) is " +
        "emptied before each run, so bytecode of one claim's code never serves the next",
    },
    {
      name: "PYTHONDONTWRITEBYTECODE",
      value: "(unset)",
      why: "bytecode goes to finishline's folder only, so it may be written: the standard " +
        "library and installed packages are compiled once a run, not at every check " +
        "(about 0.6 s of CPU at each pytest start here)",
    },
    {
      name: BUILD_FOLDER_VARIABLE,
      value: "<finishline's build folder beside the copy, for Meson, CMake and autotools checks; " +
        "else empty>",
      why: "the detected Meson, CMake and autotools checks build there instead of in a temp " +
        "folder: a claim's build then starts from the baseline's, copied in before each claim " +
        "(each tool rebuilds what the claim changed), or from nothing when the claim changed " +
        "the build's own files",
    },
    ...toolchainCaches(),
  ];
}

/**
 * The environment of one check run: the variables of
 * {@linkcode checkVariables} with a fresh home made for it. Call `dispose`
 * once the run is over.
 *
 * @param options `pycache`: finishline's bytecode folder for the copy the
 * check runs in, kept across runs (its part for `cwd` is emptied first);
 * without it, a fresh one in the fresh home. `buildDir`: the check's kept
 * build folder ({@linkcode BUILD_FOLDER_VARIABLE}), empty without it.
 * @returns The variables and what removes the fresh folders.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkEnvironment } from "./check_env.ts";
 *
 * const environment = await checkEnvironment();
 * try {
 *   assert.equal(environment.env.PYTHONNOUSERSITE, "1");
 *   assert.notEqual(environment.env.HOME, Deno.env.get("HOME"));
 *   assert.equal([...Deno.readDirSync(environment.env.HOME)].length, 1, "only the bytecode folder");
 *   assert.equal(environment.env.PYTHONDONTWRITEBYTECODE, "");
 * } finally {
 *   await environment.dispose();
 * }
 * ```
 */
export async function checkEnvironment(
  options: { pycache?: string; cwd?: string; buildDir?: string } = {},
): Promise<CheckEnvironment> {
  // Owned: a finishline killed with SIGKILL mid-check leaves it to the next one to remove.
  const folder = ownedTempDir("finishline-check-home-");
  const home = path.join(folder, "home");
  const pycache = options.pycache ?? path.join(home, ".pycache");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(pycache, { recursive: true });
  if (options.pycache && options.cwd) await forgetBytecodeOf(options.pycache, options.cwd);
  const env: Record<string, string> = {};
  for (const variable of checkVariables()) env[variable.name] = variable.value;
  env.HOME = home;
  const tmp = path.join(folder, "tmp");
  await Deno.mkdir(tmp);
  env.TMPDIR = tmp;
  env.XDG_CONFIG_HOME = path.join(home, ".config");
  env.PYTHONPYCACHEPREFIX = pycache;
  // Python counts the variable as set when it is not empty.
  env.PYTHONDONTWRITEBYTECODE = "";
  // Empty, never the user's own: only finishline's copies keep a build folder.
  env[BUILD_FOLDER_VARIABLE] = options.buildDir ?? "";
  return {
    env,
    dispose: () => Deno.remove(folder, { recursive: true }).catch(() => {}),
  };
}

/**
 * Remove the bytecode a prefix holds for the sources under `dir` (Python
 * mirrors each source's absolute path below the prefix): what the last run
 * compiled, or planted, for the copy's code is not read again.
 */
async function forgetBytecodeOf(prefix: string, dir: string): Promise<void> {
  const real = await Deno.realPath(dir).catch(() => dir);
  for (const source of new Set([path.resolve(dir), real])) {
    const mirror = path.join(prefix, source);
    const entries: string[] = [];
    try {
      for await (const entry of Deno.readDir(mirror)) entries.push(entry.name);
    } catch {
      continue;
    }
    for (const name of entries) {
      // The linked dependency folders (the run's, as found at its start) keep theirs.
      if (LINKED_FOLDERS.has(name)) continue;
      await Deno.remove(path.join(mirror, name), { recursive: true }).catch(() => {});
    }
  }
}

/** The dependency folders the clean copy links in (see `copy/dependency_folders.ts`). */
const LINKED_FOLDERS: ReadonlySet<string> = new Set(["node_modules", ".venv", "venv", "vendor"]);

/**
 * The lines the `checks` command prints about the environment the checks run in.
 *
 * @returns One line per variable, the first a heading.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeCheckEnvironment } from "./check_env.ts";
 *
 * assert.match(describeCheckEnvironment(), /^Environment: yours, with these set for every check/);
 * assert.match(describeCheckEnvironment(), /\n  CI=true: /);
 * ```
 */
export function describeCheckEnvironment(): string {
  return [
    "Environment: yours, with these set for every check (the same at the baseline and at each claim):",
    ...checkVariables().map((variable) => `  ${variable.name}=${variable.value}: ${variable.why}`),
  ].join("\n");
}
