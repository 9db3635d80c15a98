/**
 * Turns the JSONC text of an agent.json into an {@linkcode AgentDefinition}
 * with every default filled in. Every mistake becomes a one-line
 * {@linkcode UsageError} that names the file and the field, or the line and
 * column of a syntax error, so the CLI can print it as is.
 *
 * @module
 */

import { parse as parseJsonc, type ParseError, printParseErrorCode } from "jsonc-parser";
import type { z } from "zod";
import { UsageError } from "../support/errors.ts";
import { agentDefinitionSchema } from "./schema.ts";
import type { AgentDefinition } from "./definition_types.ts";
import { oneOf, quote } from "./_wording.ts";
import { definitionKeyRouteProblem } from "./key_routes.ts";

function formatPath(segments: readonly PropertyKey[]): string {
  let result = "";
  for (const segment of segments) {
    if (typeof segment === "number") result += `[${segment}]`;
    else result += result === "" ? String(segment) : `.${String(segment)}`;
  }
  return result;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
  record: "an object",
};

/** Says what was expected, for the issues the schema does not word itself. */
function describeIssue(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type": {
      const expected = `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
      return issue.input === undefined ? `${expected} (the field is missing)` : expected;
    }
    case "invalid_value":
      return `expected ${oneOf(issue.values)}`;
    case "too_small":
      if (issue.origin === "string") return "expected a non-empty string";
      if (issue.origin === "array") {
        return `expected at least ${issue.minimum} items`;
      }
      return `expected a number ${
        issue.inclusive ? "of at least" : "greater than"
      } ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "array") {
        return `expected at most ${issue.maximum} items`;
      }
      return `expected a number ${issue.inclusive ? "of at most" : "less than"} ${issue.maximum}`;
    case "invalid_key":
      return issue.issues[0]?.message;
    case "invalid_format":
      return issue.format === "regex"
        ? `expected a string matching ${issue.pattern}`
        : `expected a ${issue.format}`;
    default:
      return undefined;
  }
}

const JSONC_ERRORS: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "invalid number",
  PropertyNameExpected: "expected a property name in double quotes",
  ValueExpected: "expected a value",
  ColonExpected: "expected a colon",
  CommaExpected: "expected a comma",
  CloseBraceExpected: 'expected a closing "}"',
  CloseBracketExpected: 'expected a closing "]"',
  EndOfFileExpected: "expected the end of the file",
  InvalidCommentToken: "invalid comment",
  UnexpectedEndOfComment: "unterminated comment",
  UnexpectedEndOfString: "unterminated string",
  UnexpectedEndOfNumber: "unterminated number",
  InvalidUnicode: "invalid unicode escape",
  InvalidEscapeCharacter: "invalid escape character",
  InvalidCharacter: "invalid character in string",
};

/**
 * Where a JSON or JSONC syntax error is and what it is, without quoting the text.
 *
 * @param text The text that failed to parse.
 * @param error The first error jsonc-parser reported.
 * @returns `line 3, column 5: expected a value`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse, type ParseError } from "jsonc-parser";
 * import { describeSyntaxError } from "./parse.ts";
 *
 * const text = '{\n  "a": 1,\n  "b": }';
 * const errors: ParseError[] = [];
 * parse(text, errors);
 * assert.equal(describeSyntaxError(text, errors[0]), "line 3, column 8: expected a value");
 * ```
 */
export function describeSyntaxError(text: string, error: ParseError): string {
  const before = text.slice(0, error.offset);
  const line = before.split("\n").length;
  const column = error.offset - (before.lastIndexOf("\n") + 1) + 1;
  const name = printParseErrorCode(error.error);
  const what = JSONC_ERRORS[name] ?? name;
  const atEnd = text.slice(error.offset).trim() === "";
  return `line ${line}, column ${column}: ${atEnd ? `unexpected end of file, ${what}` : what}`;
}

/** Options of {@linkcode parseDefinition}. */
export interface ParseDefinitionOptions {
  /** Where the text came from, as shown in error messages. */
  displayPath: string;
  /** The name the definition must have (its folder name); unchecked when absent. */
  expectedName?: string;
  /** The user's environment, for the key routes they allow (`FINISHLINE_KEY_HOSTS`). @default Deno.env */
  env?: { get(name: string): string | undefined };
}

/**
 * Parses and validates the JSONC text of an agent.json, filling every default.
 *
 * @param text The file's content; comments and trailing commas are allowed.
 * @param options Where the text came from, and the name it must have.
 * @returns The validated definition.
 * @throws {UsageError} On a syntax error (with line and column) or the first schema error (with the field path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDefinition } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   `{
 *     // The smallest useful agent: three iterations of the default prompts.
 *     "name": "polish",
 *     "behavior": { "completionConfig": { "maxIterations": 3 } },
 *   }`,
 *   { displayPath: ".agent/polish/agent.json", expectedName: "polish" },
 * );
 * assert.equal(definition.displayName, "polish");
 * assert.equal(definition.behavior.completionType, "iterate");
 * assert.equal(definition.logging.directory, ".agent/polish/logs");
 *
 * assert.throws(
 *   () =>
 *     parseDefinition(`{ "name": "x", "behavior": { "completionType": "done" } }`, {
 *       displayPath: "agent.json",
 *     }),
 *   {
 *     message:
 *       'Cannot load agent definition "agent.json": "behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task"',
 *   },
 * );
 * ```
 */
export function parseDefinition(
  text: string,
  options: ParseDefinitionOptions,
): AgentDefinition {
  const prefix = `Cannot load agent definition ${quote(options.displayPath)}`;
  // Editors on Windows may save a byte order mark; it is not part of the JSON.
  const source = text.replace(/^\uFEFF/, "");
  const data = parseJsoncText(source, prefix);
  const result = agentDefinitionSchema.safeParse(data, { error: describeIssue });
  if (!result.success) {
    throw new UsageError(`${prefix}: ${describeFirstIssue(result.error.issues)}`, {
      cause: result.error,
    });
  }
  const definition = result.data;
  if (
    options.expectedName !== undefined &&
    definition.name !== options.expectedName
  ) {
    throw new UsageError(
      `${prefix}: "name": expected ${quote(options.expectedName)} to match the folder name, got ${
        quote(definition.name)
      }`,
    );
  }
  const route = definitionKeyRouteProblem(definition, { env: options.env });
  if (route) throw new UsageError(`${prefix}: ${quote(route.field)}: ${route.problem}`);
  return definition;
}

/** The largest agent.json read: definitions are a few kilobytes. */
export const MAX_DEFINITION_BYTES = 1024 * 1024;
/** The deepest nesting of objects and arrays in an agent.json (the schema needs 5). */
export const MAX_DEFINITION_DEPTH = 64;

/**
 * How deep objects and arrays nest in JSONC text, strings and comments
 * skipped; counting stops past `limit`, so that a file nested 200,000 levels
 * deep costs no more than one nested `limit` levels.
 *
 * @param source The text.
 * @param limit The depth at which to stop.
 * @returns The deepest nesting, at most `limit + 1`.
 */
function nestingDepth(source: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '"') {
      for (index++; index < source.length && source[index] !== '"'; index++) {
        if (source[index] === "\\") index++;
      }
    } else if (char === "/" && source[index + 1] === "/") {
      while (index < source.length && source[index] !== "\n") index++;
    } else if (char === "/" && source[index + 1] === "*") {
      const end = source.indexOf("*/", index + 2);
      index = end === -1 ? source.length : end + 1;
    } else if (char === "{" || char === "[") {
      deepest = Math.max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (char === "}" || char === "]") {
      depth--;
    }
  }
  return deepest;
}

/** Parses JSONC text; a syntax error becomes a `UsageError` with line and column. */
function parseJsoncText(source: string, prefix: string): unknown {
  // Limits first: the parser recurses, and a deep enough file overflows its stack.
  const bytes = new TextEncoder().encode(source).length;
  if (bytes > MAX_DEFINITION_BYTES) {
    throw new UsageError(
      `${prefix}: the file is ${bytes} bytes, more than the limit of ${MAX_DEFINITION_BYTES} bytes`,
    );
  }
  if (nestingDepth(source, MAX_DEFINITION_DEPTH) > MAX_DEFINITION_DEPTH) {
    throw new UsageError(
      `${prefix}: objects and arrays nest more than ${MAX_DEFINITION_DEPTH} levels deep, the limit`,
    );
  }
  const errors: ParseError[] = [];
  const data: unknown = parseJsonc(source, errors, {
    allowTrailingComma: true,
    disallowComments: false,
    allowEmptyContent: false,
  });
  if (errors.length > 0) {
    throw new UsageError(
      `${prefix}: ${describeSyntaxError(source, errors[0])}`,
    );
  }
  return data;
}

/** Words the issue worth reporting: the field path, then what was expected there. */
function describeFirstIssue(issues: readonly z.core.$ZodIssue[]): string {
  // A misspelt key usually causes a second error (the field it should have set
  // is missing); the misspelling is the one worth reporting.
  const issue = issues.find((candidate) => candidate.code === "unrecognized_keys") ?? issues[0];
  const segments = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]] : issue.path;
  const field = segments.length === 0 ? "" : `${quote(formatPath(segments))}: `;
  return `${field}${issue.message}`;
}
