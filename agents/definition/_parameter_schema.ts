/**
 * The schema of one entry of `parameters` in agent.json: a CLI flag the agent
 * takes, its type, default and validation rules.
 *
 * @module
 */

import { z } from "zod";
import { strictObject } from "./_fields.ts";
import { quote } from "./_wording.ts";

const CLI_FLAG_PATTERN = /^--[a-z][a-z0-9-]*$/;

function regexError(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const validationSchema = strictObject({
  pattern: z.string().superRefine((pattern, context) => {
    const problem = regexError(pattern);
    if (problem !== undefined) {
      context.addIssue({
        code: "custom",
        message: `expected a valid regular expression: ${problem}`,
      });
    }
  }).optional().describe("Regular expression a string value must match."),
  min: z.number().optional().describe("Smallest allowed number."),
  max: z.number().optional().describe("Largest allowed number."),
  enum: z.array(
    z.union([z.string(), z.number()], {
      error: "expected a string or a number",
    }),
  )
    .optional().describe("The allowed values."),
});

function hasType(
  value: unknown,
  type: "string" | "number" | "boolean",
): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
  }
}

/** The schema of one parameter; its default and allowed values must have its type. */
export const parameterSchema = strictObject({
  type: z.enum(["string", "number", "boolean"]).default("string").describe(
    "The value's type.",
  ),
  description: z.string().default("").describe("Shown in --help."),
  required: z.boolean().default(false).describe(
    "Whether the flag must be given.",
  ),
  default: z.union([z.string(), z.number(), z.boolean()], {
    error: "expected a string, a number or a boolean",
  }).optional().describe(
    "Value used when the flag is absent; must match `type`.",
  ),
  cli: z.string().regex(CLI_FLAG_PATTERN, {
    error: `expected a flag like "--topic" (two dashes, then lowercase letters, digits and dashes)`,
  }).optional().describe(
    "The CLI flag, with leading dashes; derived from the name when absent.",
  ),
  validation: validationSchema.optional().describe(
    "Rules the value must satisfy.",
  ),
}).superRefine((parameter, context) => {
  if (
    parameter.default !== undefined &&
    !hasType(parameter.default, parameter.type)
  ) {
    context.addIssue({
      code: "custom",
      path: ["default"],
      message: `expected a ${parameter.type}, as "type" is ${quote(parameter.type)}`,
    });
  }
  const allowed = parameter.validation?.enum ?? [];
  const index = allowed.findIndex((value) => !hasType(value, parameter.type));
  if (index !== -1) {
    context.addIssue({
      code: "custom",
      path: ["validation", "enum", index],
      message: `expected a ${parameter.type}, as "type" is ${quote(parameter.type)}`,
    });
  }
});
