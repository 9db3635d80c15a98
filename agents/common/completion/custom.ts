/**
 * Loading `custom` completion handlers from the agent folder.
 *
 * @module
 */

import { firstLine, UsageError } from "../errors.ts";
import { displayPathOf } from "../resource.ts";
import type { AgentDefinition, CompletionHandler, HandlerFactoryContext } from "./types.ts";

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
 * Resolve a path from agent.json inside the agent folder, refusing anything
 * that leaves it (also through symlinks).
 *
 * @param agentDir The agent folder URL (trailing slash).
 * @param path The relative path from agent.json.
 * @param options The definition field and the working directory, for messages.
 * @returns The module URL.
 */
export async function resolveInsideAgentDir(
  agentDir: URL,
  path: string,
  options: { field: string; cwd: string },
): Promise<URL> {
  const url = new URL(path, agentDir);
  const shown = displayPathOf(url, options.cwd);
  if (!url.href.startsWith(agentDir.href)) {
    throw new UsageError(
      `Refusing "${options.field}" "${path}": it must stay inside the agent folder "${
        displayPathOf(agentDir, options.cwd)
      }"`,
    );
  }
  if (url.protocol !== "file:") return url;
  let real: string;
  let realDir: string;
  try {
    real = await Deno.realPath(url);
    realDir = await Deno.realPath(agentDir);
  } catch {
    throw new UsageError(
      `Cannot load "${options.field}" "${shown}": file not found`,
    );
  }
  if (!real.startsWith(realDir.endsWith("/") ? realDir : `${realDir}/`)) {
    throw new UsageError(
      `Refusing "${options.field}" "${shown}": it resolves outside the agent folder (to "${real}")`,
    );
  }
  return url;
}

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
  const options = context;
  const handlerPath = definition.behavior.completionConfig.handlerPath;
  if (!handlerPath) {
    throw new UsageError(
      `Agent "${definition.name}" has completionType "custom" but no "behavior.completionConfig.handlerPath"`,
    );
  }
  const url = await resolveInsideAgentDir(options.agentDir, handlerPath, {
    field: "behavior.completionConfig.handlerPath",
    cwd: options.cwd,
  });
  const shown = displayPathOf(url, options.cwd);
  let module: Record<string, unknown>;
  try {
    module = await import(url.href);
  } catch (error) {
    throw new UsageError(
      `Cannot load custom handler "${shown}": ${firstLine(error)}`,
      {
        cause: error,
      },
    );
  }
  if (typeof module.default !== "function") {
    throw new UsageError(
      `Cannot load custom handler "${shown}": expected a default export that is a factory function (definition, args) => CompletionHandler`,
    );
  }
  let handler: unknown;
  try {
    handler = await module.default(definition, args, context);
  } catch (error) {
    throw new UsageError(
      `Custom handler factory "${shown}" failed: ${firstLine(error)}`,
      {
        cause: error,
      },
    );
  }
  return checkHandler(handler, shown);
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
