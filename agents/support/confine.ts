/**
 * Keeping an agent inside its folder: every file an agent definition names
 * (system prompt, prompt registry and its templates, fallback templates,
 * custom handlers and checkers) must resolve, after following symlinks,
 * inside `.agent/<name>/`. Anything else is a one-line
 * {@linkcode UsageError} naming the field, before a byte is read.
 *
 * @module
 */

import { dirname, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { firstLine, UsageError } from "./errors.ts";
import { displayPathOf } from "./resource.ts";

/** How {@linkcode confinePath} checks a path and names it in messages. */
export interface ConfineOptions {
  /** The agent.json field that names the path, for messages. */
  field: string;
  /** The key of a prompt registry entry, named after the field in messages. */
  entry?: string;
  /** The working directory, to show paths relative to it. */
  cwd: string;
  /** The folder a relative path starts from. @default the agent folder */
  base?: URL;
  /** What must be at the path. @default "file" */
  expect?: "file" | "folder";
  /** Whether nothing at the path is fine: the result is then `undefined`. @default false */
  optional?: boolean;
  /** Further folders (trailing slash) the path may resolve into, such as the built-in prompts. */
  alsoInside?: readonly URL[];
  /** What messages call the folder. @default "the agent folder" */
  folderName?: string;
}

/** A path from an agent definition that stays inside the agent folder. */
export interface ConfinedPath {
  /** The path resolved against its base, symlinks kept: what messages show and modules import. */
  url: URL;
  /** Where it is after following symlinks: what is read. The same as `url` for remote folders. */
  real: URL;
}

/**
 * Resolve a path that an agent definition names, refusing anything that
 * leaves the agent folder: absolute paths, `..`, and symlinks (of the file or
 * of a folder on the way) that lead outside. Remote agent folders (`https:`)
 * have no symlinks; there the URL must start with the folder's.
 *
 * @param agentDir The agent folder URL (trailing slash).
 * @param path The path as the definition gives it.
 * @param options The field for messages, what is expected there, and where it may lead.
 * @returns The resolved path; `undefined` only for an `optional` path with nothing there.
 * @throws {UsageError} For a path that leads outside, a symlink loop, a missing
 * path, or a folder where a file is expected (and the reverse).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { confinePath } from "./confine.ts";
 *
 * const agentDir = new URL("https://example.com/.agent/x/");
 * const inside = await confinePath(agentDir, "prompts/system.md", {
 *   field: "behavior.systemPromptPath",
 *   cwd: "/work",
 * });
 * assert.equal(inside.url.href, "https://example.com/.agent/x/prompts/system.md");
 * await assert.rejects(
 *   confinePath(agentDir, "../y/system.md", { field: "behavior.systemPromptPath", cwd: "/work" }),
 *   {
 *     message: 'Refusing "behavior.systemPromptPath" "../y/system.md": ' +
 *       'it must stay inside the agent folder "https://example.com/.agent/x/"',
 *   },
 * );
 * ```
 */
export function confinePath(
  agentDir: URL,
  path: string,
  options: ConfineOptions & { optional: true },
): Promise<ConfinedPath | undefined>;
/**
 * Resolve a path that an agent definition names and that must exist.
 *
 * @param agentDir The agent folder URL (trailing slash).
 * @param path The path as the definition gives it.
 * @param options The field for messages, what is expected there, and where it may lead.
 * @returns The resolved path.
 */
export function confinePath(
  agentDir: URL,
  path: string,
  options: ConfineOptions,
): Promise<ConfinedPath>;
export async function confinePath(
  agentDir: URL,
  path: string,
  options: ConfineOptions,
): Promise<ConfinedPath | undefined> {
  const folders = [agentDir, ...(options.alsoInside ?? [])];
  const expect = options.expect ?? "file";
  const url = new URL(path, options.base ?? agentDir);
  const subject = `${quote(options.field)}${
    options.entry === undefined ? "" : ` entry ${quote(options.entry)}`
  }`;
  const folderName = options.folderName ?? "the agent folder";
  // A folder's URL ends in a slash, so that files in it resolve against it.
  const named = expect === "folder" && !url.pathname.endsWith("/") ? new URL(`${url.href}/`) : url;
  if (!folders.some((folder) => named.href.startsWith(folder.href))) {
    throw new UsageError(
      `Refusing ${subject} ${quote(path)}: it must stay inside ${folderName} ${
        quote(displayPathOf(agentDir, options.cwd))
      }`,
    );
  }
  if (url.protocol !== "file:") return { url: named, real: named };
  const shown = quote(displayPathOf(url, options.cwd));
  let real: string;
  let isFolder: boolean;
  let isSpecial: boolean;
  try {
    real = await Deno.realPath(url);
    const info = await Deno.stat(real);
    isFolder = info.isDirectory;
    // A FIFO, a socket or a device (a link to /dev/zero) is read for ever or blocks.
    isSpecial = !isFolder && !info.isFile;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      if (options.optional) return undefined;
      throw new UsageError(`Cannot load ${subject} ${shown}: ${expect} not found`);
    }
    if (error instanceof Deno.errors.FilesystemLoop) {
      throw new UsageError(`Cannot load ${subject} ${shown}: it is a loop of symbolic links`);
    }
    throw new UsageError(`Cannot load ${subject} ${shown}: ${firstLine(error)}`, {
      cause: error,
    });
  }
  const realFolders = await Promise.all(folders.map(realFolder));
  const isInside = realFolders.some((folder) =>
    folder !== undefined && (real === folder || real.startsWith(`${folder}${sep}`))
  );
  if (!isInside) {
    throw new UsageError(
      `Refusing ${subject} ${shown}: it resolves outside ${folderName} (to ${quote(real)})`,
    );
  }
  if (isSpecial) {
    throw new UsageError(
      `Cannot load ${subject} ${shown}: expected a regular ${expect}, found a FIFO, socket or device`,
    );
  }
  if (isFolder !== (expect === "folder")) {
    throw new UsageError(
      `Cannot load ${subject} ${shown}: expected a ${expect}, found a ${
        isFolder ? "folder" : "file"
      }`,
    );
  }
  return { url: named, real: pathToFileURL(isFolder ? `${real}${sep}` : real) };
}

/** The folder's path after following symlinks, without a trailing slash; `undefined` when absent. */
async function realFolder(folder: URL): Promise<string | undefined> {
  if (folder.protocol !== "file:") return undefined;
  try {
    const real = await Deno.realPath(folder);
    return real.endsWith(sep) ? real.slice(0, -1) : real;
  } catch {
    return undefined;
  }
}

/** Values in messages are JSON-quoted, so that a newline in a path cannot break the line. */
function quote(value: string): string {
  return JSON.stringify(value);
}

/** Options of {@linkcode confineWritableFolder}. */
export interface WritableFolderOptions {
  /** The agent.json field that names the folder, for messages. */
  field: string;
  /** What messages call the root. @default "the repository" */
  rootName?: string;
}

/**
 * Confine a folder finishline will write into (the log and report folder) to
 * a root, after symlinks are followed. The folder need not exist yet: its
 * nearest existing ancestor must resolve inside the root and be a folder, so
 * that creating the rest cannot lead out.
 *
 * @param root The absolute folder the path must stay in.
 * @param path The path, relative to `root` (or absolute, inside it).
 * @param options The field, for messages.
 * @returns The absolute path (symlinks inside the root kept).
 * @throws {UsageError} When it is, or resolves, outside the root, or a file is in the way.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { confineWritableFolder } from "./confine.ts";
 *
 * const root = await Deno.makeTempDir();
 * try {
 *   assert.equal(
 *     await confineWritableFolder(root, "logs/here", { field: "logging.directory" }),
 *     `${root}/logs/here`,
 *   );
 *   await assert.rejects(confineWritableFolder(root, "../up", { field: "logging.directory" }));
 * } finally {
 *   await Deno.remove(root, { recursive: true });
 * }
 * ```
 */
export async function confineWritableFolder(
  root: string,
  path: string,
  options: WritableFolderOptions,
): Promise<string> {
  const rootName = options.rootName ?? "the repository";
  const absolute = resolve(root, path);
  const refuse = (why: string) =>
    new UsageError(
      `Refusing ${quote(options.field)} ${quote(path)}: ${why} (${rootName} ${quote(root)})`,
    );
  if (absolute !== root && !absolute.startsWith(`${root}${sep}`)) {
    throw refuse(`it must stay inside ${rootName}`);
  }
  let realRoot: string;
  try {
    realRoot = await Deno.realPath(root);
  } catch (error) {
    throw new UsageError(
      `Cannot use ${quote(root)} for ${quote(options.field)}: ${firstLine(error)}`,
    );
  }
  // The nearest part of the path that exists decides where the rest is created.
  let existing = absolute;
  for (;;) {
    try {
      await Deno.lstat(existing);
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) {
        throw new UsageError(
          `Cannot use ${quote(options.field)} ${quote(path)}: ${firstLine(error)}`,
        );
      }
      existing = dirname(existing);
    }
  }
  let real: string;
  try {
    real = await Deno.realPath(existing);
  } catch (error) {
    // A dangling symlink: what it would create is wherever it points.
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.FilesystemLoop) {
      throw refuse("a symbolic link in it leads nowhere, or out");
    }
    throw new UsageError(`Cannot use ${quote(options.field)} ${quote(path)}: ${firstLine(error)}`);
  }
  if (real !== realRoot && !real.startsWith(`${realRoot}${sep}`)) {
    throw refuse(`it resolves outside ${rootName} (to ${quote(real)})`);
  }
  if (!(await Deno.stat(real)).isDirectory) {
    throw new UsageError(
      `Cannot use ${quote(options.field)} ${quote(path)}: ${
        quote(existing)
      } is a file, not a folder`,
    );
  }
  return absolute;
}
