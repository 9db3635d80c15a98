/**
 * Finds agents: loads one by name from `<cwd>/.agent/<name>/agent.json`, else
 * the built-in agent of that name, and lists the local and built-in agents.
 *
 * @module
 */

import path from "node:path";
import { pathToFileURL } from "node:url";
import { UsageError } from "../support/errors.ts";
import { readTextResource } from "../support/resource.ts";
import { parseDefinition } from "./parse.ts";
import type { AgentDefinition, LoadedDefinition } from "./definition_types.ts";
import { AGENT_NAME_PATTERN } from "./_fields.ts";
import { quote } from "./_wording.ts";

const BUILTIN_PREFIX = "<builtin>";

/** Options of {@linkcode loadDefinition} and {@linkcode listAgents}. */
export interface LoadDefinitionOptions {
  /** The working directory whose `.agent/` folder holds local agents. */
  cwd: string;
  /**
   * Root of the finishline package, whose `.agent/` holds the built-in agents;
   * a `file:` URL, or `https:` when run from JSR.
   * @default the repository root of this module
   */
  builtinRoot?: URL;
}

/** One agent found by {@linkcode listAgents}. */
export interface AgentListEntry {
  /** The agent's folder name. */
  name: string;
  /** True for an agent shipped with finishline. */
  builtin: boolean;
  /** The definition's display name, or the name when the definition is broken. */
  displayName: string;
  /** The definition's description; empty when the definition is broken. */
  description: string;
  /** The completion type; empty when the definition is broken. */
  completionType: string;
  /** Where the definition is, as shown in messages. */
  path: string;
  /** Why the definition cannot be loaded; absent when it loads. */
  error?: string;
}

/** The repository root: this file is `agents/definition/load.ts`. */
function defaultBuiltinRoot(): URL {
  return new URL("../../", import.meta.url);
}

function checkAgentName(name: string): void {
  if (!AGENT_NAME_PATTERN.test(name)) {
    throw new UsageError(
      `Invalid agent name ${
        quote(name)
      }: expected lowercase letters, digits and dashes, starting with a letter`,
    );
  }
}

interface Candidate {
  url: URL;
  builtin: boolean;
  displayPath: string;
}

function localCandidate(name: string, home: string, cwd: string): Candidate {
  const file = path.join(home, ".agent", name, "agent.json");
  return {
    url: pathToFileURL(file),
    builtin: false,
    displayPath: path.relative(path.resolve(cwd), file),
  };
}

async function exists(file: string): Promise<boolean> {
  try {
    await Deno.lstat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * The folder whose `.agent/` holds the local agents: the nearest one that has
 * an `.agent/` folder, from the working directory up to the root of its git
 * repository (the folder with `.git`); when none has, that root, or the
 * working directory outside a repository. So an agent of the repository is
 * found from any of its subfolders, and `--init` scaffolds where it is found.
 *
 * @param cwd The working directory.
 * @returns The folder, absolute.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentsHome } from "./load.ts";
 *
 * const repo = await Deno.makeTempDir();
 * try {
 *   await Deno.mkdir(`${repo}/.git`);
 *   await Deno.mkdir(`${repo}/src/deep`, { recursive: true });
 *   assert.equal(await agentsHome(`${repo}/src/deep`), repo);
 *   await Deno.mkdir(`${repo}/src/.agent`);
 *   assert.equal(await agentsHome(`${repo}/src/deep`), `${repo}/src`);
 * } finally {
 *   await Deno.remove(repo, { recursive: true });
 * }
 * ```
 */
export async function agentsHome(cwd: string): Promise<string> {
  const start = path.resolve(cwd);
  for (let dir = start;; dir = path.dirname(dir)) {
    if (await exists(path.join(dir, ".agent"))) return dir;
    if (await exists(path.join(dir, ".git"))) return dir;
    if (path.dirname(dir) === dir) return start;
  }
}

function builtinCandidate(name: string, builtinRoot: URL): Candidate {
  const relative = `.agent/${name}/agent.json`;
  return {
    url: new URL(relative, builtinRoot),
    builtin: true,
    displayPath: `${BUILTIN_PREFIX}/${relative}`,
  };
}

/** Reads a candidate; `undefined` when absent, a `UsageError` when unreadable. */
async function readCandidate(
  candidate: Candidate,
): Promise<string | undefined> {
  try {
    return await readTextResource(candidate.url);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `Cannot read agent definition ${quote(candidate.displayPath)}: ${detail}`,
      { cause: error },
    );
  }
}

function loaded(
  candidate: Candidate,
  definition: AgentDefinition,
): LoadedDefinition {
  return {
    definition,
    url: candidate.url,
    agentDir: new URL("./", candidate.url),
    builtin: candidate.builtin,
    displayPath: candidate.displayPath,
  };
}

/**
 * Finds and loads the agent of the given name: `.agent/<name>/agent.json` in
 * the working directory or the nearest folder above it, up to its git
 * repository's root, that has an `.agent/` folder; else the built-in agent of
 * that name.
 *
 * @param name The agent's name, which is also its folder name.
 * @param options The working directory and where the built-in agents are.
 * @returns The definition, where it was found, and its folder.
 * @throws {UsageError} When the name is invalid, no agent has it, or its definition is broken.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadDefinition } from "@finishline/agents";
 *
 * const cwd = await Deno.makeTempDir();
 * try {
 *   const { definition, builtin, displayPath } = await loadDefinition("iterator", { cwd });
 *   assert.equal(builtin, true);
 *   assert.equal(displayPath, "<builtin>/.agent/iterator/agent.json");
 *   assert.equal(definition.behavior.completionType, "iterate");
 * } finally {
 *   await Deno.remove(cwd, { recursive: true });
 * }
 * ```
 */
export async function loadDefinition(
  name: string,
  options: LoadDefinitionOptions,
): Promise<LoadedDefinition> {
  checkAgentName(name);
  const builtinRoot = options.builtinRoot ?? defaultBuiltinRoot();
  const home = await agentsHome(options.cwd);
  for (
    const candidate of [
      localCandidate(name, home, options.cwd),
      builtinCandidate(name, builtinRoot),
    ]
  ) {
    const text = await readCandidate(candidate);
    if (text === undefined) continue;
    const definition = parseDefinition(text, {
      displayPath: candidate.displayPath,
      expectedName: name,
    });
    return loaded(candidate, definition);
  }
  throw new UsageError(
    `Unknown agent ${quote(name)}: found no ${quote(`.agent/${name}/agent.json`)} in ${
      quote(home)
    } and no built-in agent of that name; run with --list to see the agents`,
  );
}

async function listFolder(folder: URL): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      if (entry.isDirectory || entry.isSymlink) names.push(entry.name);
    }
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory
    ) {
      return [];
    }
    throw error;
  }
  return names;
}

/** Describes one candidate; `undefined` when it has no agent.json. */
async function describeCandidate(
  name: string,
  candidate: Candidate,
): Promise<AgentListEntry | undefined> {
  const entry = {
    name,
    builtin: candidate.builtin,
    displayName: name,
    description: "",
    completionType: "",
    path: candidate.displayPath,
  };
  let text: string | undefined;
  try {
    text = await readCandidate(candidate);
  } catch (error) {
    return {
      ...entry,
      error: error instanceof Error ? error.message : String(error),
    };
  }
  if (text === undefined) return undefined;
  try {
    checkAgentName(name);
    const definition = parseDefinition(text, {
      displayPath: candidate.displayPath,
      expectedName: name,
    });
    return {
      ...entry,
      displayName: definition.displayName,
      description: definition.description,
      completionType: definition.behavior.completionType,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { ...entry, error: error.message };
  }
}

/**
 * Lists the agents available in a working directory: its local agents, and the
 * built-in agents that no local agent of the same name shadows.
 *
 * A broken local agent is listed with its `error` rather than failing the list.
 *
 * @param options The working directory and where the built-in agents are.
 * @returns The agents, sorted by name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listAgents } from "@finishline/agents";
 *
 * const cwd = await Deno.makeTempDir();
 * try {
 *   await Deno.mkdir(`${cwd}/.agent/docs`, { recursive: true });
 *   await Deno.writeTextFile(`${cwd}/.agent/docs/agent.json`, `{ "name": "docs" }`);
 *   const agents = await listAgents({ cwd });
 *   const docs = agents.find((agent) => agent.name === "docs");
 *   assert.equal(docs?.builtin, false);
 *   assert.match(
 *     docs?.error ?? "",
 *     /"behavior.completionConfig.maxIterations": expected a positive integer/,
 *   );
 *   assert.equal(agents.find((agent) => agent.name === "iterator")?.builtin, true);
 * } finally {
 *   await Deno.remove(cwd, { recursive: true });
 * }
 * ```
 */
export async function listAgents(
  options: LoadDefinitionOptions,
): Promise<AgentListEntry[]> {
  const builtinRoot = options.builtinRoot ?? defaultBuiltinRoot();
  const agents = new Map<string, AgentListEntry>();
  const home = await agentsHome(options.cwd);
  const localRoot = pathToFileURL(path.join(home, ".agent") + path.sep);
  for (const name of await listFolder(localRoot)) {
    const entry = await describeCandidate(
      name,
      localCandidate(name, home, options.cwd),
    );
    if (entry !== undefined) agents.set(name, entry);
  }
  // Only a file: root can be scanned; from JSR the built-in agent is known by name.
  const builtinNames = builtinRoot.protocol === "file:"
    ? await listFolder(new URL(".agent/", builtinRoot))
    : ["iterator"];
  for (const name of builtinNames) {
    if (agents.has(name)) continue;
    const entry = await describeCandidate(
      name,
      builtinCandidate(name, builtinRoot),
    );
    if (entry !== undefined) agents.set(name, entry);
  }
  return [...agents.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}
