/**
 * The prompt resolver: a registry of prompt keys to Markdown templates, and
 * `{uv-name}` variable filling.
 *
 * A key is looked up in the agent's registry, then as `<key>.md` in the
 * agent's fallback folder, then in finishline's built-in `prompts/`. Values
 * are inserted literally in one pass: a value that itself contains
 * `{uv-...}` is never expanded again. Every template, the registry and the
 * fallback folder must resolve inside the agent folder, symlinks followed
 * (see {@linkcode confinePath}); this is checked when the resolver is created.
 *
 * @module
 */

import { parse as parseJsonc, type ParseError } from "jsonc-parser";
import { type ConfinedPath, confinePath } from "../support/confine.ts";
import { describeSyntaxError } from "../definition/parse.ts";
import { firstLine, UsageError } from "../support/errors.ts";
import { displayPathOf, readTextResource } from "../support/resource.ts";

/** Where the built-in templates live: `prompts/` at the package root. */
export const BUILTIN_PROMPTS_DIR: URL = new URL(
  "../../prompts/",
  import.meta.url,
);

/** Options for {@linkcode PromptResolver.create}. */
export interface PromptResolverOptions {
  /** The agent folder (trailing slash), against which registry and fallbackDir resolve. */
  agentDir: URL;
  /** Registry path relative to the agent folder. @default "prompts/registry.json" */
  registry?: string;
  /** Folder relative to the agent folder searched for `<key>.md`. @default "prompts" */
  fallbackDir?: string;
  /** Template used for the `system` key instead of the registry's, relative to the agent folder. */
  systemPromptPath?: string;
  /** The built-in prompts folder (trailing slash). @default BUILTIN_PROMPTS_DIR */
  builtinDir?: URL;
  /** Whether the agent is finishline's own, whose paths may also lead into the built-in prompts folder. @default false */
  builtinAgent?: boolean;
  /** Working directory, to shorten paths in messages. @default Deno.cwd() */
  cwd?: string;
}

/** Template values: keys with or without the `uv-` prefix. */
export type PromptVariables = Record<
  string,
  string | number | boolean | undefined
>;

const VARIABLE = /\{uv-([A-Za-z0-9_]+)\}/g;
const FRONT_MATTER = /^\uFEFF?---\r?\n(?:[\s\S]*?\r?\n)?---[ \t]*(?:\r?\n|$)/;

/**
 * Convert a flag or parameter name to its template variable name: kebab and
 * camel case both become snake case (`iterate-max` and `iterateMax` give
 * `iterate_max`).
 *
 * @param name A flag (with or without dashes) or parameter name.
 * @returns The snake_case name used after `uv-`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toVariableName } from "./resolver.ts";
 *
 * assert.equal(toVariableName("--iterate-max"), "iterate_max");
 * assert.equal(toVariableName("targetDecisions"), "target_decisions");
 * ```
 */
export function toVariableName(name: string): string {
  return name
    .replace(/^-+/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/-/g, "_")
    .toLowerCase();
}

/**
 * Turn run arguments into template variables: each argument under its own
 * name (`uv-targetDecisions`, as the completion handlers design's templates
 * write it) and in snake case (`uv-target_decisions`); a name with dashes,
 * which a placeholder cannot hold, only in snake case. An argument whose own
 * name is another's snake case keeps that name. Arrays are joined with ", ";
 * objects, `undefined` and `null` are left out.
 *
 * @param args The run's arguments, keyed by flag or parameter name.
 * @returns Variables keyed `uv-<name>` and `uv-<snake_name>`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { argsToVariables } from "./resolver.ts";
 *
 * assert.deepEqual(
 *   argsToVariables({ iterateMax: 3, topic: "x", tags: ["a", "b"], skip: undefined }),
 *   {
 *     "uv-iterate_max": "3",
 *     "uv-iterateMax": "3",
 *     "uv-topic": "x",
 *     "uv-tags": "a, b",
 *   },
 * );
 * assert.deepEqual(argsToVariables({ "--dry-run": true }), { "uv-dry_run": "true" });
 * ```
 */
export function argsToVariables(
  args: Record<string, unknown>,
): Record<string, string> {
  const snake: Record<string, string> = {};
  const own: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    let text: string;
    if (Array.isArray(value)) text = value.map(String).join(", ");
    else if (typeof value !== "object" && typeof value !== "function") text = String(value);
    else continue;
    snake[`uv-${toVariableName(key)}`] = text;
    const name = key.replace(/^-+/, "");
    if (/^[A-Za-z0-9_]+$/.test(name)) own[`uv-${name}`] = text;
  }
  return { ...snake, ...own };
}

/**
 * Remove YAML front matter (`---` ... `---` at the top) from a template.
 *
 * @param text The template text.
 * @returns The text without front matter.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stripFrontMatter } from "./resolver.ts";
 *
 * assert.equal(stripFrontMatter("---\ntitle: x\n---\nHello"), "Hello");
 * assert.equal(stripFrontMatter("No front matter"), "No front matter");
 * ```
 */
export function stripFrontMatter(text: string): string {
  return text.replace(FRONT_MATTER, "");
}

/**
 * Fill `{uv-name}` placeholders in one pass; values are inserted literally.
 *
 * @param template The template text.
 * @param variables Values keyed with or without `uv-`.
 * @returns The filled text and the names of the variables that had no value.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fillTemplate } from "@finishline/agents";
 *
 * // A value that holds a placeholder is inserted as is, not expanded again.
 * assert.deepEqual(
 *   fillTemplate("Fix #{uv-issue}: {uv-title}", { issue: 4, title: "{uv-issue}" }),
 *   {
 *     text: "Fix #4: {uv-issue}",
 *     missing: [],
 *   },
 * );
 * assert.deepEqual(fillTemplate("{uv-who} did it", {}).missing, ["who"]);
 * ```
 */
export function fillTemplate(
  template: string,
  variables: PromptVariables,
): { text: string; missing: string[] } {
  const values = new Map<string, string>();
  for (const [key, value] of Object.entries(variables)) {
    if (value === undefined) continue;
    values.set(key.startsWith("uv-") ? key.slice(3) : key, String(value));
  }
  const missing = new Set<string>();
  const text = template.replace(VARIABLE, (whole, name: string) => {
    const value = values.get(name);
    if (value === undefined) {
      missing.add(name);
      return whole;
    }
    return value;
  });
  return { text, missing: [...missing] };
}

interface Registry {
  url: URL;
  templates: Map<string, ConfinedPath>;
}

interface TemplateSource {
  file: ConfinedPath;
  origin: string;
}

/** Where an agent's files may lead, and how messages name them. */
interface Confinement {
  agentDir: URL;
  cwd: string;
  alsoInside: readonly URL[];
}

/**
 * Resolves prompt keys to templates and fills them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PromptResolver } from "@finishline/agents";
 *
 * // An agent folder without prompts of its own: every key falls back to the built-ins.
 * const dir = await Deno.makeTempDir();
 * try {
 *   const resolver = await PromptResolver.create({ agentDir: new URL(`file://${dir}/`) });
 *   const prompt = await resolver.resolve("initial_manual", {
 *     completion_keyword: "DONE",
 *     task: "Tidy up the README",
 *     max_iterations: 3,
 *     learnings: "(none)",
 *   });
 *   assert.match(prompt, /^# Task\n\nTidy up the README/);
 *   assert.match(prompt, /`DONE`/);
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class PromptResolver {
  #agent: Registry | undefined;
  #builtin: Registry;
  #confinement: Confinement;
  #fallbackDir: ConfinedPath | undefined;
  #systemPrompt: ConfinedPath | undefined;
  #cwd: string;
  #cache = new Map<string, string>();

  private constructor(
    agent: Registry | undefined,
    builtin: Registry,
    options: {
      confinement: Confinement;
      fallbackDir?: ConfinedPath;
      systemPrompt?: ConfinedPath;
    },
  ) {
    this.#agent = agent;
    this.#builtin = builtin;
    this.#confinement = options.confinement;
    this.#fallbackDir = options.fallbackDir;
    this.#systemPrompt = options.systemPrompt;
    this.#cwd = options.confinement.cwd;
  }

  /**
   * Load the agent's registry (a missing file means every key falls back)
   * and the built-in one, and check that every file the agent names stays
   * inside its folder: the system prompt, the registry and each of its
   * templates, the fallback folder and each `<key>.md` in it.
   *
   * @param options Where the agent and the built-in templates are.
   * @returns A resolver.
   * @throws {UsageError} When a file the agent names leads outside its folder
   * or is missing, or a registry cannot be read or is not a map of keys to paths.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { PromptResolver } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await Deno.mkdir(`${dir}/prompts`);
   *   await Deno.writeTextFile(
   *     `${dir}/prompts/greeting.md`,
   *     "---\ntitle: x\n---\nHello {uv-name}!\n",
   *   );
   *   const resolver = await PromptResolver.create({
   *     agentDir: new URL(`file://${dir}/`),
   *     cwd: dir,
   *   });
   *   // The agent's own `prompts/<key>.md` is found before the built-in templates.
   *   assert.equal(await resolver.resolve("greeting", { name: "Ada" }), "Hello Ada!");
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  static async create(options: PromptResolverOptions): Promise<PromptResolver> {
    const cwd = options.cwd ?? Deno.cwd();
    const builtinDir = options.builtinDir ?? BUILTIN_PROMPTS_DIR;
    const builtinFile = new URL("registry.json", builtinDir);
    const builtin = await loadRegistry(
      { url: builtinFile, real: builtinFile },
      {
        confinement: { agentDir: builtinDir, cwd, alsoInside: [] },
        field: "built-in prompts/registry.json",
        folderName: "the built-in prompts folder",
      },
    );
    if (!builtin) {
      throw new UsageError(
        `Cannot read prompt registry "${displayPathOf(builtinFile, cwd)}": file not found`,
      );
    }
    const confinement: Confinement = {
      agentDir: options.agentDir,
      cwd,
      alsoInside: options.builtinAgent ? [builtinDir] : [],
    };
    const systemPrompt = options.systemPromptPath === undefined
      ? undefined
      : await confinePath(options.agentDir, options.systemPromptPath, {
        ...confinement,
        field: "behavior.systemPromptPath",
      });
    const registryFile = await confinePath(
      options.agentDir,
      options.registry ?? "prompts/registry.json",
      { ...confinement, field: "prompts.registry", optional: true },
    );
    const agent = registryFile &&
      await loadRegistry(registryFile, { confinement, field: "prompts.registry" });
    const fallbackDir = await confinePath(
      options.agentDir,
      options.fallbackDir ?? "prompts",
      { ...confinement, field: "prompts.fallbackDir", expect: "folder", optional: true },
    );
    if (fallbackDir) await checkFallbackTemplates(fallbackDir, confinement);
    return new PromptResolver(agent, builtin, { confinement, fallbackDir, systemPrompt });
  }

  /**
   * Whether a key resolves to a template (without reading it).
   *
   * @param key The prompt key.
   * @returns True when the agent or the built-ins define it.
   * @throws {UsageError} When `<key>.md` in the fallback folder leads outside the agent folder.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { PromptResolver } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await Deno.mkdir(`${dir}/prompts`);
   *   await Deno.writeTextFile(
   *     `${dir}/prompts/greeting.md`,
   *     "---\ntitle: x\n---\nHello {uv-name}!\n",
   *   );
   *   const resolver = await PromptResolver.create({
   *     agentDir: new URL(`file://${dir}/`),
   *     cwd: dir,
   *   });
   *   assert.equal(await resolver.has("greeting"), true);
   *   assert.equal(await resolver.has("initial_iterate"), true);
   *   assert.equal(await resolver.has("farewell"), false);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async has(key: string): Promise<boolean> {
    return (await this.#locate(key)) !== undefined;
  }

  /**
   * Resolve a key to its template and fill it.
   *
   * @param key The prompt key (`initial_issue`, `continuation_iterate`, ...).
   * @param variables Values for `{uv-...}` placeholders.
   * @returns The prompt text.
   * @throws {UsageError} For an unknown key, an unreadable template, a
   * `<key>.md` that leads outside the agent folder, or a placeholder without a value.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { PromptResolver } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await Deno.mkdir(`${dir}/prompts`);
   *   await Deno.writeTextFile(
   *     `${dir}/prompts/greeting.md`,
   *     "---\ntitle: x\n---\nHello {uv-name}!\n",
   *   );
   *   const resolver = await PromptResolver.create({
   *     agentDir: new URL(`file://${dir}/`),
   *     cwd: dir,
   *   });
   *   assert.equal(await resolver.resolve("greeting", { "uv-name": "Ada" }), "Hello Ada!");
   *   await assert.rejects(resolver.resolve("greeting", {}), {
   *     message: 'Cannot fill prompt template "prompts/greeting.md" (key "greeting"): ' +
   *       'no value for "uv-name"',
   *   });
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async resolve(key: string, variables: PromptVariables): Promise<string> {
    const source = await this.#locate(key);
    if (!source) {
      const where = this.#agent ? `"${displayPathOf(this.#agent.url, this.#cwd)}" or ` : "";
      throw new UsageError(
        `Unknown prompt key "${key}": not in ${where}the built-in registry "prompts/registry.json"`,
      );
    }
    const template = await this.#read(source);
    const { text, missing } = fillTemplate(template, variables);
    if (missing.length > 0) {
      const names = missing.map((name) => `"uv-${name}"`).join(", ");
      throw new UsageError(
        `Cannot fill prompt template "${
          displayPathOf(source.file.url, this.#cwd)
        }" (key "${key}"): no value for ${names}`,
      );
    }
    return text.trim();
  }

  async #locate(key: string): Promise<TemplateSource | undefined> {
    if (key === "system" && this.#systemPrompt) {
      return { file: this.#systemPrompt, origin: "behavior.systemPromptPath" };
    }
    const own = this.#agent?.templates.get(key);
    if (own !== undefined && this.#agent) {
      return { file: own, origin: displayPathOf(this.#agent.url, this.#cwd) };
    }
    // Only a folder on disk can be searched; from JSR an agent names its templates in its registry.
    if (this.#fallbackDir?.url.protocol === "file:") {
      // Checked again here: a key may name a subfolder, and files may have changed since create().
      const fallback = await confinePath(this.#confinement.agentDir, `${key}.md`, {
        ...this.#confinement,
        base: this.#fallbackDir.url,
        field: "prompts.fallbackDir",
        optional: true,
      });
      if (fallback) return { file: fallback, origin: "prompts.fallbackDir" };
    }
    const builtin = this.#builtin.templates.get(key);
    if (builtin !== undefined) return { file: builtin, origin: "built-in" };
    return undefined;
  }

  async #read(source: TemplateSource): Promise<string> {
    const shown = displayPathOf(source.file.url, this.#cwd);
    const cached = this.#cache.get(source.file.real.href);
    if (cached !== undefined) return cached;
    let text: string | undefined;
    try {
      text = await readTextResource(source.file.real);
    } catch (error) {
      throw new UsageError(
        `Cannot read prompt template "${shown}" (from ${source.origin}): ${firstLine(error)}`,
      );
    }
    if (text === undefined) {
      throw new UsageError(
        `Cannot read prompt template "${shown}" (from ${source.origin}): file not found`,
      );
    }
    const stripped = stripFrontMatter(text);
    this.#cache.set(source.file.real.href, stripped);
    return stripped;
  }
}

/** Every `<key>.md` in the fallback folder must stay inside the agent folder too. */
async function checkFallbackTemplates(
  folder: ConfinedPath,
  confinement: Confinement,
): Promise<void> {
  if (folder.real.protocol !== "file:") return;
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder.real)) {
      if (entry.name.endsWith(".md")) names.push(entry.name);
    }
  } catch (error) {
    throw new UsageError(
      `Cannot load "prompts.fallbackDir" "${displayPathOf(folder.url, confinement.cwd)}": ${
        firstLine(error)
      }`,
    );
  }
  for (const name of names) {
    // A dangling symlink is as good as no file: the key falls back, as it does in #locate.
    await confinePath(confinement.agentDir, name, {
      ...confinement,
      base: folder.url,
      field: "prompts.fallbackDir",
      optional: true,
    });
  }
}

/**
 * Read a registry and confine each of its templates: relative to the
 * registry file, inside the confinement's folders.
 */
async function loadRegistry(
  file: ConfinedPath,
  options: { confinement: Confinement; field: string; folderName?: string },
): Promise<Registry | undefined> {
  const shown = displayPathOf(file.url, options.confinement.cwd);
  let text: string | undefined;
  try {
    text = await readTextResource(file.real);
  } catch (error) {
    throw new UsageError(`Cannot read prompt registry "${shown}": ${firstLine(error)}`);
  }
  if (text === undefined) return undefined;
  const prompts = registryPrompts(parseRegistry(text, shown), shown);
  const templates = new Map<string, ConfinedPath>();
  for (const [key, path] of prompts) {
    templates.set(
      key,
      await confinePath(options.confinement.agentDir, path, {
        ...options.confinement,
        base: new URL("./", file.url),
        field: options.field,
        entry: key,
        folderName: options.folderName,
      }),
    );
  }
  return { url: file.url, templates };
}

/** Parses a registry; a syntax error names its line and column, never the text. */
function parseRegistry(text: string, shown: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse quotes the input in its message; jsonc-parser gives a position instead.
    const errors: ParseError[] = [];
    parseJsonc(text, errors, {
      allowTrailingComma: false,
      disallowComments: true,
      allowEmptyContent: false,
    });
    const where = errors.length > 0 ? ` at ${describeSyntaxError(text, errors[0])}` : "";
    throw new UsageError(`Cannot load prompt registry "${shown}": not valid JSON${where}`);
  }
}

/** The key-to-path pairs of a parsed registry, with or without the `prompts` wrapper. */
function registryPrompts(data: unknown, shown: string): Array<[string, string]> {
  const prompts = isRecord(data) && isRecord(data.prompts) ? data.prompts : data;
  if (!isRecord(prompts)) {
    throw new UsageError(
      `Cannot load prompt registry "${shown}": expected an object mapping prompt keys to template paths`,
    );
  }
  const entries: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(prompts)) {
    if (key === "$schema" || key === "version") continue;
    if (typeof value !== "string" || value === "") {
      throw new UsageError(
        `Cannot load prompt registry "${shown}": ${
          JSON.stringify(key)
        }: expected a template path (string)`,
      );
    }
    entries.push([key, value]);
  }
  return entries;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
