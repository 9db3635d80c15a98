/**
 * Loading `custom` completion handlers from the agent folder.
 *
 * @module
 */

import { importAgentModule, runFactory } from "../support/module_loading.ts";
import { UsageError } from "../support/errors.ts";
import type {
  AgentDefinition,
  CompletionHandler,
  HandlerFactoryContext,
} from "./handler_contract.ts";

/** The third argument a custom handler factory receives. */
export type CustomHandlerContext = HandlerFactoryContext;

const REQUIRED_METHODS = [
  "buildInitialPrompt",
  "buildContinuationPrompt",
  "buildCompletionCriteria",
  "isComplete",
  "getCompletionDescription",
] as const;

/**
 * Load a custom handler: the module's default export must be a factory
 * `(definition, args, context) => CompletionHandler` (the seed's two-argument
 * factories work unchanged).
 *
 * @param definition The agent definition (its handlerPath names the module).
 * @param args The run's arguments.
 * @param context Resolver, cap, agent folder and working directory.
 * @returns The handler the factory built, checked for every method.
 */
export async function loadCustomHandler(
  definition: AgentDefinition,
  args: Record<string, unknown>,
  context: CustomHandlerContext,
): Promise<CompletionHandler> {
  const handlerPath = definition.behavior.completionConfig.handlerPath;
  if (!handlerPath) {
    throw new UsageError(
      `Agent "${definition.name}" has completionType "custom" but no "behavior.completionConfig.handlerPath"`,
    );
  }
  const module = await importAgentModule(handlerPath, "handler", {
    agentDir: context.agentDir,
    cwd: context.cwd,
    field: "behavior.completionConfig.handlerPath",
  });
  const factory = module.exports.default;
  if (typeof factory !== "function") {
    throw new UsageError(
      `Cannot load custom handler "${module.shown}": expected a default export that is a factory function (definition, args) => CompletionHandler`,
    );
  }
  const handler = await runFactory(module, () => factory(definition, args, context));
  return checkHandler(handler, module.shown);
}

/**
 * Check that an object has every CompletionHandler method.
 *
 * @param handler What a factory returned.
 * @param source Where it came from, for the message.
 * @returns The handler.
 */
export function checkHandler(
  handler: unknown,
  source: string,
): CompletionHandler {
  if (typeof handler !== "object" || handler === null) {
    throw new UsageError(
      `Custom handler "${source}": the factory returned ${
        handler === null ? "null" : typeof handler
      }, expected a CompletionHandler object`,
    );
  }
  const record = handler as Record<string, unknown>;
  const missing = REQUIRED_METHODS.filter((name) => typeof record[name] !== "function");
  if (missing.length > 0) {
    throw new UsageError(
      `Custom handler "${source}": the handler lacks ${
        missing.map((name) => `${name}()`).join(", ")
      }`,
    );
  }
  return handler as CompletionHandler;
}
