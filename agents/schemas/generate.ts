/**
 * Generates `agents/schemas/agent.schema.json`, the JSON Schema editors use to
 * complete and check agent.json files, from the zod schema of the definition.
 *
 * Run `deno task schema` after changing the schema; a test fails while the
 * committed file is out of date.
 *
 * @module
 */

import { z } from "zod";
import { agentDefinitionSchema } from "../definition/schema.ts";

/**
 * Renders the JSON Schema of agent.json from the zod schema, describing the
 * file as written (fields with defaults are optional).
 *
 * @returns Pretty-printed JSON ending in a newline, the content of `agent.schema.json`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateAgentSchema } from "./generate.ts";
 *
 * const schema = JSON.parse(generateAgentSchema());
 * assert.deepEqual(schema.required, ["name"]);
 * assert.equal(schema.additionalProperties, false);
 * ```
 */
export function generateAgentSchema(): string {
  const generated = z.toJSONSchema(agentDefinitionSchema, {
    io: "input",
    target: "draft-07",
  });
  const { $schema, ...rest } = generated;
  const schema = {
    $schema,
    title: "finishline agent definition",
    description:
      "An agent definition for finishline (.agent/<name>/agent.json). JSONC: comments and trailing commas are allowed.",
    ...rest,
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (import.meta.main) {
  const target = new URL("./agent.schema.json", import.meta.url);
  await Deno.writeTextFile(target, generateAgentSchema());
  console.log(`Wrote ${decodeURIComponent(target.pathname)}`);
}
