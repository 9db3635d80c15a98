/**
 * The completion handler factory: definition + arguments -> handler.
 *
 * @module
 */

import { pathToFileURL } from "node:url";
import { COMPLETION_TYPES } from "../definition/definition_types.ts";
import { UsageError } from "../support/errors.ts";
import { PromptResolver } from "../prompts/resolver.ts";
import { DEFAULT_MAX_ITERATIONS, type HandlerContext } from "./base_handler.ts";
import { checkHandler, loadCustomHandler } from "./custom.ts";
import { GitHubCli, type GitHubOptions } from "../github/port.ts";
import { IssueCompletionHandler } from "./issue.ts";
import { IterateCompletionHandler } from "./iterate.ts";
import { ProjectCompletionHandler } from "./project.ts";
import { ManualCompletionHandler } from "./manual.ts";
import { TaskCompletionHandler } from "./task.ts";
import { getRegisteredHandler, registeredTypes } from "./registry.ts";
import { type RunInputs, selectorsOf } from "./run_inputs.ts";
import type { AgentDefinition, CompletionHandler } from "./handler_contract.ts";

export { DEFAULT_MAX_ITERATIONS };

/** Options for {@linkcode createCompletionHandler}. */
export interface CreateHandlerOptions {
  /** The agent folder (trailing slash). @default `<cwd>/.agent/<name>/` */
  agentDir?: URL;
  /** Working directory. @default Deno.cwd() */
  cwd?: string;
  /** A prompt resolver to use; built from the definition when absent. */
  resolver?: PromptResolver;
  /** The run's iteration cap. @default completionConfig.maxIterations ?? 10 */
  maxIterations?: number;
  /** Finds learnings of earlier runs for `{uv-learnings}`. */
  learnings?: (query: string) => string;
  /**
   * gh settings for the issue and project handlers (executable, env, timeouts, retries).
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  github?: Omit<GitHubOptions, "cwd" | "repo">;
  /**
   * The run's inputs, typed, as the command line parsed them (`args` is built
   * from them). @default the issue, project, repo, owner and label found in `args`
   *
   * @ignore The CLI's plumbing, not part of the contract: it may change.
   */
  inputs?: RunInputs;
}

async function createGitHubHandler(
  type: "issue" | "project",
  context: HandlerContext,
  options: { cwd: string; inputs: RunInputs; github?: Omit<GitHubOptions, "cwd" | "repo"> },
): Promise<CompletionHandler> {
  const { definition } = context;
  const { inputs } = options;
  const number = type === "issue" ? inputs.issue : inputs.project;
  if (number === undefined) {
    throw new UsageError(
      `Agent "${definition.name}" uses the "${type}" completion handler: pass --${type} N (the ${type} number)`,
    );
  }
  const faults: string[] = [];
  const github = new GitHubCli({
    ...options.github,
    cwd: options.cwd,
    repo: inputs.repo,
    onFault: (fault) => {
      faults.push(
        `gh ${fault.args.slice(0, 3).join(" ")}: ${fault.message} (attempt ${fault.attempt}${
          fault.willRetry ? ", retrying" : ", giving up"
        })`,
      );
      options.github?.onFault?.(fault);
    },
  });
  await github.preflight();
  if (type === "issue") {
    const issue = await github.issue(number);
    const knownComments = await github.issueComments(number) ?? [];
    faults.length = 0;
    return new IssueCompletionHandler(context, { issue, github, knownComments, faults });
  }
  const owner = inputs.owner ?? (await github.repository()).owner;
  const project = await github.project(number, owner);
  const items = await github.projectItems(number, owner, { strict: true }) ?? [];
  const label = inputs.label;
  if (items.length === 0) {
    throw new UsageError(
      `Project #${number} of owner "${owner}" has no items: there is nothing to work on`,
    );
  }
  if (label && !items.some((item) => item.labels.includes(label))) {
    throw new UsageError(
      `No item of project #${number} has the label "${label}" (flag "--label"); the items' labels are: ${
        [...new Set(items.flatMap((item) => item.labels))].map((name) => `"${name}"`).join(", ") ||
        "(none)"
      }`,
    );
  }
  return new ProjectCompletionHandler(context, {
    project,
    items,
    github,
    label,
    faults,
  });
}

/**
 * The iteration cap of a run: the definition's `maxIterations`, else 10.
 *
 * @param definition The agent definition.
 * @returns The cap.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDefinition } from "@finishline/agents";
 * import { iterationCap } from "./factory.ts";
 *
 * const definition = parseDefinition(
 *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 4 } } }',
 *   { displayPath: ".agent/polish/agent.json" },
 * );
 * assert.equal(iterationCap(definition), 4);
 * ```
 */
export function iterationCap(definition: AgentDefinition): number {
  return definition.behavior.completionConfig.maxIterations ??
    DEFAULT_MAX_ITERATIONS;
}

/**
 * Build the completion handler that `behavior.completionType` names: a
 * built-in one, a custom module from the agent folder, or a type registered
 * with `registerCompletionHandler`.
 *
 * @param definition The agent definition (after CLI overrides).
 * @param args The run's arguments, as handlers see them.
 * @param options Agent folder, cwd, resolver, cap and the typed inputs.
 * @returns The handler.
 * @throws {UsageError} For an unknown type or a handler that cannot be built.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   createCompletionHandler,
 *   emptySummary,
 *   parseDefinition,
 *   UsageError,
 * } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 2 } } }',
 *   { displayPath: ".agent/polish/agent.json" },
 * );
 * const agentDir = new URL("file:///nonexistent/");
 * const handler = await createCompletionHandler(definition, {}, { agentDir });
 * assert.equal(handler.type, "iterate");
 * assert.equal(await handler.isComplete(emptySummary(2)), true);
 *
 * // The issue handler needs the issue number among the arguments.
 * const issueAgent = {
 *   ...definition,
 *   behavior: { ...definition.behavior, completionType: "issue" as const },
 * };
 * await assert.rejects(createCompletionHandler(issueAgent, {}, { agentDir }), UsageError);
 * ```
 */
export async function createCompletionHandler(
  definition: AgentDefinition,
  args: Record<string, unknown>,
  options: CreateHandlerOptions = {},
): Promise<CompletionHandler> {
  const cwd = options.cwd ?? Deno.cwd();
  const agentDir = options.agentDir ??
    new URL(
      `.agent/${definition.name}/`,
      pathToFileURL(cwd.endsWith("/") ? cwd : `${cwd}/`),
    );
  const { completionType, completionConfig } = definition.behavior;
  const resolver = options.resolver ?? await PromptResolver.create({
    agentDir,
    registry: definition.prompts.registry,
    fallbackDir: definition.prompts.fallbackDir,
    systemPromptPath: definition.behavior.systemPromptPath,
    cwd,
  });
  const context: HandlerContext = {
    definition,
    args,
    resolver,
    maxIterations: options.maxIterations ?? iterationCap(definition),
    learnings: options.learnings,
  };
  switch (completionType) {
    case "iterate":
      return new IterateCompletionHandler(
        context,
        completionConfig.maxIterations ?? context.maxIterations,
      );
    case "task":
      return new TaskCompletionHandler(context);
    case "manual": {
      const keyword = completionConfig.completionKeyword;
      if (!keyword || keyword.trim() === "") {
        throw new UsageError(
          `Agent "${definition.name}": completionType "manual" needs "behavior.completionConfig.completionKeyword" or --keyword`,
        );
      }
      return new ManualCompletionHandler(context, keyword);
    }
    case "issue":
    case "project":
      return await createGitHubHandler(completionType as "issue" | "project", context, {
        cwd,
        inputs: options.inputs ?? selectorsOf(args),
        github: options.github,
      });
    case "custom":
      return await loadCustomHandler(definition, args, {
        agentDir,
        cwd,
        resolver,
        maxIterations: context.maxIterations,
        learnings: options.learnings,
      });
    default: {
      const factory = getRegisteredHandler(completionType);
      if (factory) {
        const handler = await factory(definition, args, {
          agentDir,
          cwd,
          resolver,
          maxIterations: context.maxIterations,
          learnings: options.learnings,
        });
        return checkHandler(handler, `registered completion type "${completionType}"`);
      }
      const known = [...COMPLETION_TYPES, ...registeredTypes()].map((type) => `"${type}"`);
      throw new UsageError(
        `Unknown completion type "${completionType}" in "behavior.completionType": expected one of ${
          known.join(", ")
        }`,
      );
    }
  }
}
