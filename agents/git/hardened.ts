/**
 * git on a repository only finishline writes, read by object hash. The
 * agent controls much of what git consults besides the objects: the user's
 * global and system config (filter drivers, textconv, `core.hooksPath`,
 * `includeIf`), `refs/replace/*`, committed `.gitattributes` (`filter=`,
 * `-diff`, `text`/`eol`, `working-tree-encoding`, `ident`) and the config of
 * the repository it works in. {@linkcode hardenedGit} runs git so that none
 * of them counts:
 *
 * - `GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`: no global or
 *   system config (and so no `includeIf`, no `core.attributesFile`);
 * - `GIT_NO_REPLACE_OBJECTS=1`: objects are what their hash says;
 * - `GIT_ATTR_NOSYSTEM=1`, `core.attributesFile=/dev/null`, and the private
 *   repository's `info/attributes` (which outranks every `.gitattributes` in
 *   the tree) unsets every attribute that changes bytes or hides a diff
 *   ({@linkcode NEUTRAL_ATTRIBUTES});
 * - hooks, fsmonitor, line-ending and encoding conversion off; `diff`, `log`,
 *   `show` and `grep` read blobs as text (`--text`), never through a textconv
 *   or external diff driver.
 *
 * The repository's own config file is git's to read: it is finishline's,
 * written again before each use ({@linkcode HardenedRepo.reset}).
 *
 * @module
 */

import { dirname } from "node:path";
import { TIMEOUT_CODE, type ToolResult } from "../support/process.ts";

/** The environment of every hardened call. */
export const HARDENED_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_NO_REPLACE_OBJECTS: "1",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_OPTIONAL_LOCKS: "0",
  GIT_PAGER: "cat",
  GIT_EDITOR: ":",
  GIT_SEQUENCE_EDITOR: ":",
  GIT_TERMINAL_PROMPT: "0",
  GIT_ASKPASS: "",
  SSH_ASKPASS: "",
  GIT_EXTERNAL_DIFF: "",
  GIT_CONFIG_COUNT: "0",
  GIT_CONFIG_PARAMETERS: "",
  LC_ALL: "C",
};

/** Settings of every hardened call (`-c`), over whatever a config file says. */
export const HARDENED_CONFIG: readonly string[] = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.attributesFile=/dev/null",
  "core.autocrlf=false",
  "core.eol=lf",
  "core.safecrlf=false",
  "core.symlinks=true",
  "core.ignoreCase=false",
  "core.untrackedCache=false",
  "core.splitIndex=false",
  "core.sparseCheckout=false",
  "core.checkRoundtripEncoding=",
  "diff.external=",
  "diff.noprefix=false",
  "diff.mnemonicPrefix=false",
  "diff.relative=false",
  "color.ui=false",
  "log.showSignature=false",
  "protocol.ext.allow=never",
  "protocol.file.allow=always",
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
  "fetch.fsckObjects=true",
  "transfer.fsckObjects=true",
  "gc.auto=0",
  "maintenance.auto=false",
  "advice.detachedHead=false",
];

/**
 * The private repository's `info/attributes`: every attribute that changes
 * what git writes or reads (filters, line endings, encodings, `ident`) or
 * hides a diff (`-diff`, `binary`) is unspecified for every path, whatever
 * the tree's `.gitattributes` say. Binary is then what git finds by content.
 */
export const NEUTRAL_ATTRIBUTES: string =
  "* !filter !diff !text !eol !crlf !ident !working-tree-encoding !encoding !merge !binary !export-subst !export-ignore !delta\n";

/** Flags of the subcommands that show blob contents: as text, no driver. */
const READ_FLAGS: Readonly<Record<string, readonly string[]>> = {
  diff: ["--no-ext-diff", "--no-textconv", "--text", "--no-color", "--no-relative"],
  log: ["--no-ext-diff", "--no-textconv", "--text", "--no-color"],
  show: ["--no-ext-diff", "--no-textconv", "--text", "--no-color"],
  grep: ["--no-textconv", "--text", "--no-color"],
};

/** Options of {@linkcode hardenedGit}. */
export interface HardenedGitOptions {
  /** The repository's git folder. */
  gitDir: string;
  /** Its work tree, when the call needs one. */
  workTree?: string;
  /** Kill git after this many milliseconds. @default 120000 */
  timeoutMs?: number;
  /** Written to git's standard input. */
  stdin?: string;
  /** Extra environment. */
  env?: Record<string, string>;
  /**
   * Whether `diff`, `log`, `show` and `grep` read every blob as text (`--text`);
   * false lets git tell binary files by their content. @default true
   */
  text?: boolean;
}

/** What reads a repository: `exec` as {@linkcode HardenedRepo.exec} or `GitRepo.exec` run it. */
export interface GitReader {
  /** Run a git subcommand for its output. */
  exec(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

const decoder = new TextDecoder();

/**
 * Run git on a repository with every setting the agent could have written
 * switched off (see the module documentation). Never throws.
 *
 * @param args The subcommand and its arguments.
 * @param options The git folder, work tree, timeout and standard input.
 * @returns Exit code, stdout and stderr.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hardenedGit } from "./hardened.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const init = await hardenedGit(["init", "-q", "--bare", dir], { gitDir: dir });
 *   assert.equal(init.code, 0, init.stderr);
 *   const format = await hardenedGit(["rev-parse", "--show-object-format"], { gitDir: dir });
 *   assert.match(format.stdout, /^sha(1|256)\n$/);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function hardenedGit(
  args: string[],
  options: HardenedGitOptions,
): Promise<ToolResult> {
  const [subcommand, ...rest] = args;
  const global = [
    "--no-pager",
    "--no-replace-objects",
    `--git-dir=${options.gitDir}`,
    ...(options.workTree ? [`--work-tree=${options.workTree}`] : []),
    ...HARDENED_CONFIG.flatMap((setting) => ["-c", setting]),
  ];
  const flags = (READ_FLAGS[subcommand] ?? []).filter((flag) =>
    options.text !== false || flag !== "--text"
  );
  const full = [...global, subcommand, ...flags, ...rest];
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 120_000);
  try {
    const child = new Deno.Command("git", {
      args: full,
      // git init runs before its folder exists: from the folder above.
      cwd: subcommand === "init" ? dirname(options.gitDir) : options.workTree ?? options.gitDir,
      env: { ...HARDENED_ENV, ...options.env },
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      signal: timeout,
    }).spawn();
    // Read while writing: git answers line by line, and a full pipe would stop both.
    const pending = child.output();
    if (options.stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(options.stdin)).catch(() => {});
      await writer.close().catch(() => {});
    }
    const output = await pending;
    if (timeout.aborted) {
      return { code: TIMEOUT_CODE, stdout: "", stderr: `git ${subcommand} timed out` };
    }
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: decoder.decode(output.stderr),
    };
  } catch (error) {
    return { code: 1, stdout: "", stderr: `cannot run git: ${String(error)}` };
  }
}

/**
 * A repository finishline owns: its git folder and, when it has one, its
 * work tree. Every call is {@linkcode hardenedGit}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HardenedRepo } from "./hardened.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const repo = await HardenedRepo.init(`${dir}/git`, { workTree: `${dir}/tree`, objectFormat: "sha1" });
 *   assert.equal(typeof repo, "object");
 *   const listed = await (repo as HardenedRepo).exec(["ls-files"]);
 *   assert.equal(listed.code, 0);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class HardenedRepo implements GitReader {
  /** The git folder. */
  readonly gitDir: string;
  /** The work tree, if any. */
  readonly workTree: string | undefined;
  readonly #objectFormat: string;

  private constructor(gitDir: string, workTree: string | undefined, objectFormat: string) {
    this.gitDir = gitDir;
    this.workTree = workTree;
    this.#objectFormat = objectFormat;
  }

  /**
   * Make a new repository at `gitDir` (and its work tree's folder).
   *
   * @param gitDir Where the git folder goes.
   * @param options The work tree, and the object format of the repository it copies.
   * @returns The repository, or why git could not make it.
   */
  static async init(
    gitDir: string,
    options: { workTree?: string; objectFormat: string },
  ): Promise<HardenedRepo | string> {
    const init = await hardenedGit(
      ["init", "-q", "--bare", `--object-format=${options.objectFormat}`, gitDir],
      { gitDir },
    );
    if (init.code !== 0) return `cannot make a repository: ${init.stderr.trim()}`;
    if (options.workTree) await Deno.mkdir(options.workTree, { recursive: true });
    const repo = new HardenedRepo(gitDir, options.workTree, options.objectFormat);
    await repo.reset();
    return repo;
  }

  /**
   * Write the repository's config, `info/attributes` and the work tree's
   * `.git` link again, drop alternates and hooks: what a check run in the
   * work tree may have changed in them no longer counts.
   *
   * @returns Resolves once written.
   */
  async reset(): Promise<void> {
    const sha256 = this.#objectFormat === "sha256";
    await Deno.writeTextFile(
      `${this.gitDir}/config`,
      [
        "[core]",
        `\trepositoryformatversion = ${sha256 ? 1 : 0}`,
        "\tfilemode = true",
        `\tbare = ${this.workTree ? "false" : "true"}`,
        "\tlogallrefupdates = false",
        ...(sha256 ? ["[extensions]", "\tobjectformat = sha256"] : []),
        "",
      ].join("\n"),
    );
    await Deno.mkdir(`${this.gitDir}/info`, { recursive: true });
    await Deno.writeTextFile(`${this.gitDir}/info/attributes`, NEUTRAL_ATTRIBUTES);
    await Deno.writeTextFile(`${this.gitDir}/info/exclude`, "");
    for (const stray of ["objects/info/alternates", "objects/info/http-alternates", "hooks"]) {
      await Deno.remove(`${this.gitDir}/${stray}`, { recursive: true }).catch(() => {});
    }
    await Deno.remove(`${this.gitDir}/refs/replace`, { recursive: true }).catch(() => {});
    if (this.workTree) {
      // Tools the checks run find the repository as they would in a checkout.
      const link = `${this.workTree}/.git`;
      await Deno.remove(link, { recursive: true }).catch(() => {});
      await Deno.writeTextFile(link, `gitdir: ${this.gitDir}\n`);
    }
  }

  /**
   * Run a git subcommand on this repository.
   *
   * @param args The subcommand and its arguments.
   * @param options Timeout, standard input, and extra environment.
   * @returns Exit code, stdout and stderr.
   */
  exec(
    args: string[],
    options: {
      timeoutMs?: number;
      stdin?: string;
      text?: boolean;
      env?: Record<string, string>;
    } = {},
  ): Promise<ToolResult> {
    return hardenedGit(args, { gitDir: this.gitDir, workTree: this.workTree, ...options });
  }
}
