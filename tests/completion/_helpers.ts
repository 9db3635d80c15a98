/**
 * Helpers shared by the completion handler tests.
 *
 * @module
 */

import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentDefinition } from "../../agents/definition/definition_types.ts";
import { parseDefinition } from "../../agents/definition/parse.ts";
import { UsageError } from "../../agents/support/errors.ts";

/** Runs `fn` with a fresh temp directory that is removed afterwards. */
export async function withTempDir(
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-completion-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Writes a file below `root`, creating its folders. */
export async function write(
  root: string,
  relative: string,
  text: string,
): Promise<string> {
  const file = path.join(root, relative);
  await Deno.mkdir(path.dirname(file), { recursive: true });
  await Deno.writeTextFile(file, text);
  return file;
}

/** The file URL of a folder, with the trailing slash the resolvers expect. */
export function dirUrl(dir: string): URL {
  return pathToFileURL(`${dir}/`);
}

/** A definition parsed the way agent.json files are, from a plain object. */
export function definitionOf(data: Record<string, unknown>): AgentDefinition {
  return parseDefinition(JSON.stringify(data), {
    displayPath: `.agent/${data.name}/agent.json`,
  });
}

/** Asserts a one-line UsageError with exit code 2 and returns its message. */
export async function usageErrorOf(
  fn: () => Promise<unknown>,
): Promise<string> {
  let message = "";
  await assert.rejects(fn, (error: unknown) => {
    assert.ok(
      error instanceof UsageError,
      `expected a UsageError, got ${error}`,
    );
    assert.equal(error.exitCode, 2);
    assert.ok(!error.message.includes("\n"), `not one line: ${error.message}`);
    message = error.message;
    return true;
  });
  return message;
}

/**
 * Asserts that `text` contains `phrase`, ignoring how either is wrapped: the
 * templates are prose that `deno fmt` may rewrap.
 */
export function assertSays(text: string, phrase: string): void {
  const flat = (value: string) => value.replace(/\s+/g, " ");
  assert.ok(
    flat(text).includes(flat(phrase)),
    `expected the text to say ${JSON.stringify(phrase)}:\n${text}`,
  );
}
