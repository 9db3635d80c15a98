/**
 * The clean copy's repository: a repository finishline owns, in a private
 * folder of its own (never registered in the user's `.git/worktrees`), that
 * holds the commits under judgement as git's own transport brought them: a
 * fetch from the user's repository re-hashes every object it receives, and
 * pack-objects never follows `refs/replace`. Every call is hardened
 * ({@linkcode HardenedRepo}): no global or system config, no replace
 * objects, no attributes, filters, hooks or conversions. After each checkout
 * every file of the work tree is checked against its blob
 * ({@linkcode ObjectCopy.verify}); a mismatch refuses the claim.
 *
 * @module
 */

import path from "node:path";
import { type GitReader, HardenedRepo } from "../../git/hardened.ts";
import type { GitRepo } from "../../git/repo.ts";

/**
 * The upload-pack finishline's fetch starts in the user's repository: it
 * serves any commit by hash (a snapshot commit no ref names), and runs no
 * hook, fsmonitor or alternate-refs command that repository's config names.
 */
const UPLOAD_PACK =
  "git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.alternateRefsCommand= " +
  "-c uploadpack.allowAnySHA1InWant=true upload-pack";

/** One entry of a commit's tree: mode, object and path. */
interface TreeEntry {
  mode: string;
  object: string;
  path: string;
}

/**
 * A private repository and its work tree, filled from the user's
 * repository by fetch.
 *
 * @example Fetch a commit into a private folder and check its files
 * ```ts
 * import assert from "node:assert/strict";
 * import { GitRepo } from "../../git/repo.ts";
 * import { ObjectCopy } from "./object_copy.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const git = (...args: string[]) => new Deno.Command("git", { args, cwd: dir }).output();
 * try {
 *   await git("init", "-q", "-b", "main");
 *   await Deno.writeTextFile(`${dir}/a.txt`, "a\n");
 *   await git("add", "a.txt");
 *   await git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-q", "-m", "a");
 *   const repo = (await GitRepo.open(dir))!;
 *   const copy = await ObjectCopy.create(repo, { prefix: "finishline-example-" });
 *   assert.ok(copy instanceof ObjectCopy);
 *   const head = (await repo.head())!;
 *   assert.equal(await copy.checkout(head), undefined);
 *   assert.equal(await Deno.readTextFile(`${copy.workTree}/a.txt`), "a\n");
 *   assert.equal(await copy.verify(head), undefined);
 *   await Deno.writeTextFile(`${copy.workTree}/a.txt`, "forged\n");
 *   assert.match((await copy.verify(head))!, /"a.txt"/);
 *   await copy.remove();
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class ObjectCopy implements GitReader {
  /** The private folder that holds the repository and its work tree. */
  readonly folder: string;
  /** The work tree: where the checks run. */
  readonly workTree: string;
  readonly #git: HardenedRepo;
  readonly #source: string;
  readonly #objectFormat: string;
  readonly #fetched = new Set<string>();
  /** The object store's files as finishline's last write of them left them ({@linkcode ObjectCopy.intact}). */
  #sealed: string | undefined;
  /** finishline's own writes of objects under way: the store is not compared meanwhile. */
  #writing = 0;

  private constructor(
    folder: string,
    git: HardenedRepo,
    source: string,
    objectFormat: string,
  ) {
    this.folder = folder;
    this.workTree = git.workTree!;
    this.#git = git;
    this.#source = source;
    this.#objectFormat = objectFormat;
  }

  /**
   * Make the private repository in a new temporary folder.
   *
   * @param source The user's repository, fetched from.
   * @param options The temporary folder's name prefix.
   * @returns The copy, or why it could not be made.
   */
  static async create(
    source: GitRepo,
    options: { prefix: string },
  ): Promise<ObjectCopy | string> {
    const format = await source.exec(["rev-parse", "--show-object-format"]);
    const objectFormat = format.code === 0 ? format.stdout.trim() || "sha1" : "sha1";
    const folder = await Deno.makeTempDir({ prefix: options.prefix });
    const git = await HardenedRepo.init(path.join(folder, "git"), {
      workTree: path.join(folder, "tree"),
      objectFormat,
    });
    if (typeof git === "string") {
      await Deno.remove(folder, { recursive: true }).catch(() => {});
      return git;
    }
    return new ObjectCopy(folder, git, source.root, objectFormat);
  }

  /**
   * Bring `commits` in from the user's repository (those not fetched yet),
   * through git's transport: each object is hashed again as it arrives.
   * The first fetch takes the commit alone (no history); later ones the
   * history back to what is here.
   *
   * @param commits Commit hashes.
   * @returns Undefined, or why the fetch failed.
   */
  async fetch(commits: readonly string[]): Promise<string | undefined> {
    const wanted = [...new Set(commits)].filter((commit) => !this.#fetched.has(commit));
    if (wanted.length === 0) return undefined;
    const tampered = await this.intact();
    if (tampered) return tampered;
    this.#writing++;
    try {
      return await this.#fetchNow(wanted);
    } finally {
      this.#writing--;
      this.#sealed = await this.#listing();
    }
  }

  async #fetchNow(wanted: string[]): Promise<string | undefined> {
    await this.#git.reset();
    const first = this.#fetched.size === 0;
    const fetched = await this.#git.exec([
      "fetch",
      "-q",
      "--no-tags",
      "--no-write-fetch-head",
      "--no-recurse-submodules",
      `--upload-pack=${UPLOAD_PACK}`,
      ...(first ? ["--depth=1"] : []),
      this.#source,
      ...wanted.map((commit) => `+${commit}:refs/finishline/${commit}`),
    ], { timeoutMs: 600_000 });
    if (fetched.code !== 0) {
      return `cannot fetch ${wanted.map((commit) => commit.slice(0, 12)).join(", ")}: ${
        fetched.stderr.trim().split("\n").slice(-3).join(" ")
      }`;
    }
    for (const commit of wanted) this.#fetched.add(commit);
    return undefined;
  }

  /**
   * Check out `commit` (fetched if needed), forced, detached.
   *
   * @param commit The commit.
   * @returns Undefined, or why git failed.
   */
  async checkout(commit: string): Promise<string | undefined> {
    const fetched = await this.fetch([commit]) ?? await this.intact();
    if (fetched) return fetched;
    await this.#git.reset();
    const checkout = await this.#git.exec(["checkout", "--detach", "--force", "--quiet", commit]);
    return checkout.code === 0
      ? undefined
      : `cannot check out ${commit.slice(0, 12)}: ${checkout.stderr.trim()}`;
  }

  /**
   * Put back every tracked file that differs from `commit` (its bytes, its
   * mode, or a file gone), without writing the files that did not change:
   * their times stay, and with them what a build made of them. The
   * repository's own files (config, attributes, the work tree's link) are
   * written again first, and the index is read from the commit again and
   * every file hashed: a check that staged a file, or set an entry's
   * assume-unchanged or skip-worktree bit, hides no change from the diff.
   *
   * @param commit The commit the work tree holds.
   * @returns Undefined, or why git failed.
   */
  async restore(commit: string): Promise<string | undefined> {
    const tampered = await this.intact();
    if (tampered) return tampered;
    await this.#git.reset();
    // The index is the checks' to write (git add, update-index): it is the commit's again, no
    // entry's stat or flag trusted. Refreshing hashes the files (exit code: some differ).
    const read = await this.#git.exec(["read-tree", commit]);
    if (read.code !== 0) return `cannot read ${commit.slice(0, 12)}: ${read.stderr.trim()}`;
    await this.#git.exec(["update-index", "-q", "--refresh"], { timeoutMs: 600_000 });
    const changed = await this.#git.exec(["diff", "--name-only", "-z", "--no-renames", commit]);
    if (changed.code !== 0) {
      return `cannot compare with ${commit.slice(0, 12)}: ${changed.stderr.trim()}`;
    }
    const paths = changed.stdout.split("\0").filter((path) => path.length > 0);
    if (paths.length === 0) return undefined;
    const restored = await this.#git.exec([
      "checkout",
      "--force",
      commit,
      "--",
      ...paths.map((path) => `:(literal)${path}`),
    ]);
    return restored.code === 0
      ? undefined
      : `cannot put back ${paths.length} file(s) of ${
        commit.slice(0, 12)
      }: ${restored.stderr.trim()}`;
  }

  /**
   * Check every file `commit` tracks against its blob: a regular file's
   * bytes hashed as they are on disk (`hash-object --no-filters`), a link's
   * target; a link that leads out of the work tree is refused too. Links
   * to submodules (gitlinks) are folders left empty.
   *
   * @param commit The commit the work tree holds.
   * @param only Paths to check (default: every tracked file).
   * @returns Undefined when every file is its blob, else the finding.
   */
  async verify(commit: string, only?: readonly string[]): Promise<string | undefined> {
    const tampered = await this.intact();
    if (tampered) return tampered;
    const listed = await this.#git.exec([
      "ls-tree",
      "-r",
      "-z",
      "--full-tree",
      commit,
      ...(only ? ["--", ...only.map((file) => `:(literal)${file}`)] : []),
    ]);
    if (listed.code !== 0) return `cannot list ${commit.slice(0, 12)}: ${listed.stderr.trim()}`;
    const entries = parseTree(listed.stdout);
    const files = entries.filter((entry) => entry.mode === "100644" || entry.mode === "100755");
    const wrong: string[] = files.filter((entry) => entry.path.includes("\n")).map((entry) =>
      `${quote(entry.path)} (a name with a line break)`
    );
    if (files.length > 0 && wrong.length === 0) {
      const hashed = await this.#git.exec(["hash-object", "--no-filters", "--stdin-paths"], {
        stdin: files.map((entry) => `${entry.path}\n`).join(""),
        timeoutMs: 600_000,
      });
      const hashes = hashed.stdout.split("\n");
      if (hashed.code !== 0 && hashes.length <= files.length) {
        // A file missing or unreadable stops git at it: that one is named.
        wrong.push(`${quote(files[hashes.length - 1]?.path ?? "?")} (cannot be read)`);
      }
      files.forEach((entry, index) => {
        if (hashes[index] !== undefined && hashes[index] !== "" && hashes[index] !== entry.object) {
          wrong.push(`${quote(entry.path)} (not the bytes of its blob)`);
        }
      });
    }
    for (const entry of entries.filter((entry) => entry.mode === "120000")) {
      const problem = await this.#checkLink(entry);
      if (problem) wrong.push(problem);
    }
    if (wrong.length === 0) return undefined;
    const shown = wrong.slice(0, 10).join(", ");
    const more = wrong.length > 10 ? ` and ${wrong.length - 10} more` : "";
    return `the clean copy of ${
      commit.slice(0, 12)
    } does not hold what its objects hold: ${shown}${more}`;
  }

  /** A tracked link: its target as the blob says, and inside the work tree. */
  async #checkLink(entry: TreeEntry): Promise<string | undefined> {
    const file = path.join(this.workTree, entry.path);
    const target = await Deno.readLink(file).catch(() => undefined);
    if (target === undefined) return `${quote(entry.path)} (not a link, as its entry says)`;
    if (await blobHash(target, this.#objectFormat) !== entry.object) {
      return `${quote(entry.path)} (a link to another target than its blob's)`;
    }
    const resolved = path.resolve(path.dirname(file), target);
    const inside = resolved === this.workTree || resolved.startsWith(`${this.workTree}/`);
    if (!inside || resolved.split("/").includes(".git")) {
      return `${
        quote(entry.path)
      } (a link to "${target}", outside the commit: the checks would run what it points to, which the commit does not hold)`;
    }
    return undefined;
  }

  /**
   * Run a git subcommand on the private repository (hardened).
   *
   * @param args The subcommand and its arguments.
   * @returns Exit code, stdout and stderr.
   */
  exec(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return this.#git.exec(args);
  }

  /**
   * Run a git subcommand on the private repository, with standard input or
   * binary detection by content.
   *
   * @param args The subcommand and its arguments.
   * @param options Standard input, timeout, and whether blobs are read as text.
   * @returns Exit code, stdout and stderr.
   */
  run(
    args: string[],
    options: { stdin?: string; timeoutMs?: number; text?: boolean },
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    return this.#git.exec(args, options);
  }

  /**
   * Make here, never in the user's repository, the commit that holds
   * `base`'s tree with `head`'s version of `paths` (a path `head` does not
   * hold is left out): what the seed of a claim's changed build definitions
   * is built from (`claim_seed.ts`). The same three give the same commit.
   * It can be checked out and verified as a fetched one.
   *
   * @param base A fetched commit.
   * @param head A fetched commit.
   * @param paths Paths that differ between them.
   * @returns The commit's hash, or why git failed.
   */
  async compose(base: string, head: string, paths: readonly string[]): Promise<
    string | {
      error: string;
    }
  > {
    const index = path.join(this.folder, "compose.index");
    const env = {
      GIT_INDEX_FILE: index,
      GIT_AUTHOR_NAME: "finishline",
      GIT_AUTHOR_EMAIL: "finishline@localhost",
      GIT_AUTHOR_DATE: "946684800 +0000",
      GIT_COMMITTER_NAME: "finishline",
      GIT_COMMITTER_EMAIL: "finishline@localhost",
      GIT_COMMITTER_DATE: "946684800 +0000",
    };
    const literal = paths.map((file) => `:(literal)${file}`);
    const tampered = await this.intact();
    if (tampered) return { error: tampered };
    this.#writing++;
    try {
      const steps: Array<() => Promise<{ code: number; stdout: string; stderr: string }>> = [
        () => this.#git.exec(["read-tree", base], { env }),
        // update-index reads names as they are (no pathspec); one missing from base is skipped.
        () => this.#git.exec(["update-index", "--force-remove", "--", ...paths], { env }),
      ];
      for (const step of steps) {
        const done = await step();
        if (done.code !== 0) return { error: done.stderr.trim() };
      }
      const listed = await this.#git.exec([
        "ls-tree",
        "-r",
        "-z",
        "--full-tree",
        head,
        "--",
        ...literal,
      ]);
      if (listed.code !== 0) return { error: listed.stderr.trim() };
      const lines = parseTree(listed.stdout).map((entry) =>
        `${entry.mode} ${entry.object}\t${entry.path}\0`
      );
      if (lines.length > 0) {
        const added = await this.#git.exec(["update-index", "-z", "--index-info"], {
          env,
          stdin: lines.join(""),
        });
        if (added.code !== 0) return { error: added.stderr.trim() };
      }
      const tree = await this.#git.exec(["write-tree"], { env });
      if (tree.code !== 0) return { error: tree.stderr.trim() };
      const made = await this.#git.exec(
        ["commit-tree", tree.stdout.trim(), "-p", base, "-m", "finishline: build seed"],
        { env },
      );
      if (made.code !== 0) return { error: made.stderr.trim() };
      const commit = made.stdout.trim();
      // Kept from git's pruning, and checked out as a fetched commit is.
      await this.#git.exec(["update-ref", `refs/finishline/${commit}`, commit]);
      this.#fetched.add(commit);
      return commit;
    } finally {
      await Deno.remove(index).catch(() => {});
      this.#writing--;
      this.#sealed = await this.#listing();
    }
  }

  /**
   * Whether the object store is as finishline's last fetch or commit left
   * it. The checks run in the work tree, whose `.git` link leads here: a
   * check that wrote an object (a tree or a blob under a hash whose bytes
   * are not its own, the packs moved aside so that a loose forgery is read)
   * would have every later checkout, diff and verification read what it
   * wrote. Any file of `objects/` added, removed or changed counts.
   *
   * @returns Undefined when intact (or while finishline writes objects), else the finding.
   */
  async intact(): Promise<string | undefined> {
    if (this.#sealed === undefined || this.#writing > 0) return undefined;
    if (await this.#listing() === this.#sealed) return undefined;
    return "a check wrote into the object store of finishline's private repository (through the copy's .git link): what it reads there is no longer what was fetched";
  }

  /** Every file below `objects/`: name, size, inode, mode and times. */
  async #listing(): Promise<string> {
    const lines: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for await (const entry of Deno.readDir(dir)) {
        const file = path.join(dir, entry.name);
        const stat = await Deno.lstat(file);
        if (stat.isDirectory) await walk(file);
        else {
          lines.push(
            [file, stat.size, stat.ino, stat.mode, stat.mtime?.getTime(), stat.ctime?.getTime()]
              .join("\0"),
          );
        }
      }
    };
    await walk(path.join(this.#git.gitDir, "objects")).catch((error) => {
      lines.push(`unreadable: ${String(error)}`);
    });
    return lines.sort().join("\n");
  }

  /**
   * Remove the private folder; never throws.
   *
   * @returns Resolves once it is gone.
   */
  async remove(): Promise<void> {
    await Deno.remove(this.folder, { recursive: true }).catch(() => {});
  }
}

/** `git ls-tree -r -z` output as entries. */
function parseTree(output: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const line of output.split("\0")) {
    const tab = line.indexOf("\t");
    if (tab < 0) continue;
    const [mode, , object] = line.slice(0, tab).split(" ");
    entries.push({ mode, object, path: line.slice(tab + 1) });
  }
  return entries;
}

/** The hash git gives a blob holding `text`. */
async function blobHash(text: string, objectFormat: string): Promise<string> {
  const body = new TextEncoder().encode(text);
  const header = new TextEncoder().encode(`blob ${body.length}\0`);
  const data = new Uint8Array(header.length + body.length);
  data.set(header);
  data.set(body, header.length);
  const digest = await crypto.subtle.digest(objectFormat === "sha256" ? "SHA-256" : "SHA-1", data);
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function quote(file: string): string {
  return `"${file}"`;
}
