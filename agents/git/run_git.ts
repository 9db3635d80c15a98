/**
 * git as finishline runs it: a built-in subcommand that starts no program the
 * repository names. The agent can write the repository's config
 * (`.git/config`, `config.worktree`, the files they include) and its hooks,
 * and git starts programs from there: hooks, `core.fsmonitor`, filter drivers,
 * external diff and textconv drivers, pagers, editors, `core.sshCommand`,
 * credential helpers, signing programs. finishline's own git calls (status,
 * diff, the baseline worktree, snapshot commits, the push) would then run the
 * agent's code where the agent cannot otherwise reach, and could forge the
 * evidence. Every git call of finishline goes through {@linkcode runGit}:
 *
 * - always: `--no-pager`, `core.hooksPath=/dev/null`, `core.fsmonitor=false`,
 *   `log.showSignature=false`, `protocol.ext.allow=never`, `GIT_PAGER=cat`,
 *   `GIT_EDITOR=:` and `GIT_SEQUENCE_EDITOR=:`; `diff`, `log` and `show` get
 *   `--no-ext-diff --no-textconv --no-color` (and `diff` `--no-relative`);
 * - every configured hook (`hook.<name>.command`, git 2.54 and later) is off;
 * - a setting that runs a program and comes from the repository's own config
 *   (scope `local` or `worktree`) is overridden, unless it was there when the
 *   run started ({@linkcode trustGitConfig}): with the value the user's
 *   global or system config gives, else a value that runs nothing. Filter
 *   drivers have no global switch, so each one named is overridden.
 *
 * Settings from the user's global and system config are the user's, and kept:
 * a Git LFS filter or a credential helper configured there still works.
 *
 * @module
 */

import { resolve } from "node:path";
import { runTool, type ToolResult } from "../support/process.ts";

/** Options of {@linkcode runGit}. */
export interface RunGitOptions {
  /** Working directory. */
  cwd: string;
  /** Extra environment over the parent's. */
  env?: Record<string, string>;
  /** Kill git after this many milliseconds. */
  timeoutMs: number;
}

/** One entry of `git config --list --show-scope --show-origin`. */
export interface GitConfigEntry {
  /** `system`, `global`, `local`, `worktree` or `command`. */
  scope: string;
  /** The file it comes from, absolute (or `command line:`). */
  origin: string;
  /** The key as git lists it: section and name in lower case. */
  key: string;
  /** The value; null for a key given without `=`. */
  value: string | null;
}

/** Settings every call carries: they switch off what runs a program whatever the config says. */
const FIXED_CONFIG: readonly string[] = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  // `git log` would run gpg to verify signatures, and print them into output finishline parses.
  "log.showSignature=false",
  // The ext:: transport runs a command named in a URL that config can rewrite.
  "protocol.ext.allow=never",
];

/** The environment every call carries. */
const FIXED_ENV: Readonly<Record<string, string>> = {
  GIT_PAGER: "cat",
  GIT_EDITOR: ":",
  GIT_SEQUENCE_EDITOR: ":",
  // finishline reads the agent's repository while the agent works in it: a `git status`
  // that refreshed the index would hold `index.lock`, and the agent's own `git commit`
  // at that moment would fail ("Another git process seems to be running").
  GIT_OPTIONAL_LOCKS: "0",
};

/**
 * Subcommands that read refs, objects or config only: no hook, filter,
 * signing program or transport can run, so the config is not read first.
 * Not `write-tree`: with a racily clean index it re-reads files through
 * their clean filter (seen in a test, one run in two).
 */
const READ_ONLY: ReadonlySet<string> = new Set([
  "rev-parse",
  "rev-list",
  "symbolic-ref",
  "config",
  "ls-tree",
  "log",
  "for-each-ref",
  "show-ref",
  "merge-base",
  "remote",
  "version",
]);

/** Flags of the diff family that keep diff and textconv drivers from running. */
const DIFF_FLAGS: Readonly<Record<string, readonly string[]>> = {
  diff: ["--no-ext-diff", "--no-textconv", "--no-color", "--no-relative"],
  log: ["--no-ext-diff", "--no-textconv", "--no-color"],
  show: ["--no-ext-diff", "--no-textconv", "--no-color"],
};

/**
 * Single-valued settings that run a program (or, for `core.excludesFile`,
 * hide files from finishline's view of the tree), and the value that
 * replaces an untrusted one when the user's own config has none.
 */
const PROGRAM_KEYS: ReadonlyArray<readonly [RegExp, () => string]> = [
  [/^filter\..+\.(?:clean|smudge|process)$/, () => ""],
  [/^filter\..+\.required$/, () => "false"],
  [/^core\.sshcommand$/, () => {
    // Without core.sshCommand git runs GIT_SSH, else ssh: the same, as a command line.
    const ssh = Deno.env.get("GIT_SSH");
    return ssh ? `'${ssh.replaceAll("'", `'\\''`)}'` : "ssh";
  }],
  [/^core\.askpass$/, () => ""],
  [/^gpg\.(?:openpgp\.)?program$/, () => "gpg"],
  [/^gpg\.x509\.program$/, () => "gpgsm"],
  [/^gpg\.ssh\.program$/, () => "ssh-keygen"],
  [/^gpg\.ssh\.defaultkeycommand$/, () => ""],
  [/^(?:commit|tag|push)\.gpgsign$/, () => "false"],
  [/^core\.excludesfile$/, () => {
    const base = Deno.env.get("XDG_CONFIG_HOME") || `${Deno.env.get("HOME") ?? ""}/.config`;
    return `${base}/git/ignore`;
  }],
];

/**
 * The program a transport starts for a remote: for these the first value
 * git reads wins, so a later `-c` cannot override one; the subcommand's own
 * flag does.
 */
const PACK_KEY = /^remote\.(.+)\.(receivepack|uploadpack)$/;
const PACK_FLAGS: Readonly<Record<string, readonly [string, string, string]>> = {
  push: ["receivepack", "--receive-pack", "git-receive-pack"],
  fetch: ["uploadpack", "--upload-pack", "git-upload-pack"],
  pull: ["uploadpack", "--upload-pack", "git-upload-pack"],
  "ls-remote": ["uploadpack", "--upload-pack", "git-upload-pack"],
};

/** Credential helpers form a list: an empty value clears it, then the trusted ones are added back. */
const CREDENTIAL_HELPER = /^credential\.(?:.+\.)?helper$/;
/** Configured hooks (git 2.54 and later): `hook.<name>.command` and `hook.<name>.event`. */
const HOOK_KEY = /^hook\.(.+)\.[^.]+$/;

/** Entries of the repository's own config present when the run started: `origin\0key\0value`. */
const trusted = new Set<string>();
const realPaths = new Map<string, string>();

/**
 * Run a built-in git subcommand such that it starts no program the
 * repository's config or hooks name (see the module documentation). Never
 * throws; when the config cannot be read, git is not run and the result
 * says why.
 *
 * @param args git arguments, the subcommand first (or after `-c` pairs).
 * @param options Working directory, extra environment and timeout.
 * @returns Exit code, stdout and stderr.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runGit } from "./run_git.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   await runGit(["init", "-q", dir], { cwd: dir, timeoutMs: 10_000 });
 *   // A hook the agent installs never runs for finishline's commits.
 *   await Deno.writeTextFile(`${dir}/.git/hooks/pre-commit`, `#!/bin/sh\ntouch ${dir}/ran\n`, { mode: 0o755 });
 *   const commit = await runGit(
 *     ["-c", "user.name=Ada", "-c", "user.email=ada@example.com", "commit", "-q", "--allow-empty", "-m", "x"],
 *     { cwd: dir, timeoutMs: 10_000 },
 *   );
 *   assert.equal(commit.code, 0, commit.stderr);
 *   await assert.rejects(Deno.stat(`${dir}/ran`));
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function runGit(args: string[], options: RunGitOptions): Promise<ToolResult> {
  const subcommand = subcommandOf(args);
  let config: GitConfigEntry[] = [];
  if (!READ_ONLY.has(subcommand)) {
    const listed = await listGitConfig(options);
    if ("error" in listed) return listed.error;
    config = listed.entries;
  }
  const hardened = hardenedGitArgs(args, config, { isTrusted: isTrustedEntry });
  return await runTool("git", hardened.args, {
    cwd: options.cwd,
    env: { ...options.env, ...hardened.env },
    timeoutMs: options.timeoutMs,
  });
}

/**
 * Record the repository's own config as the user's: settings present now
 * are kept by {@linkcode runGit}, those added or changed later are
 * overridden. Called when a run starts, before the agent works.
 *
 * @param cwd A folder in the repository.
 * @returns How many entries of the repository's config were recorded.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runGit, trustGitConfig } from "./run_git.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   await runGit(["init", "-q", dir], { cwd: dir, timeoutMs: 10_000 });
 *   assert.ok(await trustGitConfig(dir) > 0);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function trustGitConfig(cwd: string): Promise<number> {
  const listed = await listGitConfig({ cwd, timeoutMs: 10_000 });
  if ("error" in listed) return 0;
  let count = 0;
  for (const entry of listed.entries) {
    if (!fromRepository(entry)) continue;
    trusted.add(trustKey(entry));
    count++;
  }
  return count;
}

/**
 * The arguments and environment that make a git call safe, given the
 * config it would read (see the module documentation).
 *
 * @param args The caller's git arguments.
 * @param config The config as `git config --list --show-scope --show-origin` gives it.
 * @param options Which entries of the repository's config to keep.
 * @returns The full argument list and the extra environment.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hardenedGitArgs } from "./run_git.ts";
 *
 * const { args } = hardenedGitArgs(["status"], [
 *   { scope: "local", origin: "/r/.git/config", key: "filter.x.smudge", value: "./evil" },
 * ], { isTrusted: () => false });
 * assert.ok(args.includes("core.hooksPath=/dev/null"));
 * assert.ok(args.includes("filter.x.smudge="));
 * assert.equal(args.at(-1), "status");
 * ```
 */
export function hardenedGitArgs(
  args: string[],
  config: GitConfigEntry[],
  options: { isTrusted: (entry: GitConfigEntry) => boolean },
): { args: string[]; env: Record<string, string> } {
  const env: Record<string, string> = { ...FIXED_ENV };
  const settings: Array<[string, string]> = FIXED_CONFIG.map((setting) => {
    const at = setting.indexOf("=");
    return [setting.slice(0, at), setting.slice(at + 1)];
  });
  const keep = (entry: GitConfigEntry) => !fromRepository(entry) || options.isTrusted(entry);
  const overridden = new Set<string>();
  const hooks = new Set<string>();
  const subcommandFlags = [...DIFF_FLAGS[subcommandOf(args)] ?? []];
  const pack = PACK_FLAGS[subcommandOf(args)];
  const remote = pack ? remoteOf(args) : undefined;
  let clearHelpers = false;
  for (const entry of config) {
    const hook = HOOK_KEY.exec(entry.key);
    if (hook) hooks.add(hook[1]);
    if (keep(entry)) continue;
    const packKey = PACK_KEY.exec(entry.key);
    if (packKey) {
      if (pack && packKey[2] === pack[0] && (remote === undefined || packKey[1] === remote)) {
        const kept = config.find((other) => other.key === entry.key && keep(other));
        subcommandFlags.push(`${pack[1]}=${kept?.value ?? pack[2]}`);
      }
    } else if (CREDENTIAL_HELPER.test(entry.key)) clearHelpers = true;
    else if (entry.key === "core.gitproxy") {
      // The first matching core.gitProxy wins, so a later override cannot win; the variable can.
      if (Deno.env.get("GIT_PROXY_COMMAND") === undefined) env.GIT_PROXY_COMMAND = "";
    } else if (PROGRAM_KEYS.some(([pattern]) => pattern.test(entry.key))) {
      overridden.add(entry.key);
    }
  }
  for (const key of overridden) {
    const kept = config.findLast((entry) => entry.key === key && keep(entry));
    const neutral = PROGRAM_KEYS.find(([pattern]) => pattern.test(key))![1];
    settings.push([key, kept ? kept.value ?? "true" : neutral()]);
  }
  if (clearHelpers) {
    settings.push(["credential.helper", ""]);
    for (const entry of config) {
      if (CREDENTIAL_HELPER.test(entry.key) && keep(entry) && entry.value !== null) {
        settings.push([entry.key, entry.value]);
      }
    }
  }
  for (const name of hooks) settings.push([`hook.${name}.enabled`, "false"]);
  const global = ["--no-pager"];
  let variable = 0;
  for (const [key, value] of settings) {
    if (!key.includes("=")) {
      global.push("-c", `${key}=${value}`);
      continue;
    }
    // `-c` splits at the first "=", and a subsection may hold one: `--config-env`
    // takes the name up to the last "=" and the value from a variable.
    const name = `FINISHLINE_GIT_CONFIG_${variable++}`;
    env[name] = value;
    global.push(`--config-env=${key}=${name}`);
  }
  const at = subcommandIndex(args);
  const tail = [...args.slice(0, at + 1), ...new Set(subcommandFlags), ...args.slice(at + 1)];
  return { args: [...global, ...tail], env };
}

/** The remote a push or fetch names: its first argument that is not an option. */
function remoteOf(args: string[]): string | undefined {
  return args.slice(subcommandIndex(args) + 1).find((arg) => !arg.startsWith("-"));
}

/** The subcommand's index: after global options (`-c key=value`, `-C dir`, `--flag`). */
function subcommandIndex(args: string[]): number {
  let index = 0;
  while (index < args.length && args[index].startsWith("-")) {
    index += args[index] === "-c" || args[index] === "-C" ? 2 : 1;
  }
  return index;
}

function subcommandOf(args: string[]): string {
  return args[subcommandIndex(args)] ?? "";
}

/** Whether an entry comes from a file the agent can write: the repository's config. */
function fromRepository(entry: GitConfigEntry): boolean {
  return entry.scope === "local" || entry.scope === "worktree";
}

function trustKey(entry: GitConfigEntry): string {
  return `${entry.origin}\0${entry.key}\0${entry.value}`;
}

function isTrustedEntry(entry: GitConfigEntry): boolean {
  return trusted.has(trustKey(entry));
}

/** The config git would read in `cwd`, every entry with its scope and file. */
async function listGitConfig(
  options: RunGitOptions,
): Promise<{ entries: GitConfigEntry[] } | { error: ToolResult }> {
  const listed = await runTool(
    "git",
    ["--no-pager", "config", "--list", "--show-scope", "--show-origin", "-z"],
    options,
  );
  if (listed.code !== 0) {
    // Unread config could name a program: git is not run at all then.
    return {
      error: {
        ...listed,
        stderr:
          `finishline cannot read the git config to keep it from running programs (git 2.26 or later is needed): ${
            listed.stderr.trim() || `exit code ${listed.code}`
          }`,
      },
    };
  }
  const fields = listed.stdout.split("\0");
  const entries: GitConfigEntry[] = [];
  for (let index = 0; index + 2 < fields.length; index += 3) {
    const [scope, origin, pair] = fields.slice(index, index + 3);
    const newline = pair.indexOf("\n");
    entries.push({
      scope,
      origin: await originPath(origin, options.cwd),
      key: newline < 0 ? pair : pair.slice(0, newline),
      value: newline < 0 ? null : pair.slice(newline + 1),
    });
  }
  return { entries };
}

/** `file:.git/config` as an absolute, real path, so the same file compares equal from any worktree. */
async function originPath(origin: string, cwd: string): Promise<string> {
  if (!origin.startsWith("file:")) return origin;
  const path = resolve(cwd, origin.slice("file:".length));
  const known = realPaths.get(path);
  if (known !== undefined) return known;
  try {
    const real = await Deno.realPath(path);
    realPaths.set(path, real);
    return real;
  } catch {
    return path;
  }
}
