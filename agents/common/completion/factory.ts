/**
 * The completion handler factory: definition + arguments -> handler.
 *
 * @module
 */

import { pathToFileURL } from "node:url";
import { COMPLETION_TYPES } from "../agent_definition.ts";
import { UsageError } from "../errors.ts";
import { PromptResolver } from "../prompt_resolver.ts";
import type { HandlerContext } from "./_base.ts";
import { checkHandler, loadCustomHandler } from "./custom.ts";
import { IterateCompletionHandler } from "./iterate.ts";
import { ManualCompletionHandler } from "./manual.ts";
import { getRegisteredHandler, registeredTypes } from "./registry.ts";
import type { AgentDefinition, CompletionHandler } from "./types.ts";

/** The default iteration cap when neither the flag nor the definition sets one. */
export const DEFAULT_MAX_ITERATIONS = 10;

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
}

/**
 * The iteration cap of a run: the definition's `maxIterations`, else 10.
 *
 * @param definition The agent definition.
 * @returns The cap.
 * @example
 * ```ts
 * import { iterationCap } from "./factory.ts";
 * console.assert(iterationCap({ behavior: { completionConfig: {} } } as never) === 10);
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
 * @param args The run's arguments.
 * @param options Agent folder, cwd, resolver and cap.
 * @returns The handler.
 * @throws {UsageError} For an unknown type or a handler that cannot be built.
 * @example
 * ```ts
 * import { createCompletionHandler } from "./factory.ts";
 * const definition = {
 *   name: "demo",
 *   behavior: { completionType: "iterate", completionConfig: { maxIterations: 2 } },
 *   prompts: { registry: "prompts/registry.json", fallbackDir: "prompts" },
 * } as never;
 * const handler = await createCompletionHandler(definition, {}, { agentDir: new URL("file:///nonexistent/") });
 * console.assert(handler.type === "iterate");
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
  };
  switch (completionType) {
    case "iterate":
      return new IterateCompletionHandler(
        context,
        completionConfig.maxIterations ?? context.maxIterations,
      );
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
      throw new UsageError(
        `The "${completionType}" completion handler is not available in this version of finishline`,
      );
    case "custom":
      return await loadCustomHandler(definition, args, {
        agentDir,
        cwd,
        resolver,
        maxIterations: context.maxIterations,
      });
    default: {
      const factory = getRegisteredHandler(completionType);
      if (factory) {
        const handler = await factory(definition, args, {
          agentDir,
          cwd,
          resolver,
          maxIterations: context.maxIterations,
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
