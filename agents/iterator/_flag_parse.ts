/**
 * Argument lists -> raw flag values, through `node:util`'s parseArgs, with
 * its errors turned into one-line usage errors that name the flag. Private
 * to the iterator's command line.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { ParameterSpec } from "../common/definition/types.ts";
import { UsageError } from "../common/errors.ts";
import type { FlagSpec } from "./_flag_table.ts";
import { needsValue, type RawValue, readValue, valueText } from "./_flag_values.ts";

/** parseArgs options. */
export type Options = Record<string, { type: "string" | "boolean"; short?: string }>;
/** Raw values by flag name. */
export type Values = Record<string, RawValue>;

/**
 * parseArgs options for some flags of the table.
 *
 * @param flags The flags.
 * @returns The options.
 */
export function optionsOf(flags: readonly FlagSpec[]): Options {
  return Object.fromEntries(flags.map((flag) => [flag.name, {
    type: flag.kind === "boolean" ? "boolean" : "string",
    ...(flag.short ? { short: flag.short } : {}),
  }]));
}

/**
 * Read raw values by each flag's kind, into the flags' fields.
 *
 * @param values Raw values by flag name.
 * @param flags The flags to read.
 * @returns Typed values by field.
 */
export function readFlags(values: Values, flags: readonly FlagSpec[]): Record<string, unknown> {
  return Object.fromEntries(flags.map((flag) => [flag.key, readValue(flag, values[flag.name])]));
}

/**
 * Parse leniently: other flags are passed over, and the first one is named.
 *
 * @param argv The arguments.
 * @param flags The flags of the table to read.
 * @returns Raw values, and the first other argument that looks like a flag.
 */
export function lenientParse(
  argv: readonly string[],
  flags: readonly FlagSpec[],
): { values: Values; other?: string } {
  const { values, tokens } = parseArgs({
    args: [...argv],
    options: optionsOf(flags),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const known = new Set(flags.map((flag) => flag.name));
  const other = tokens.find((token) => token.kind === "option" && !known.has(token.name));
  return { values, other: other && argv[other.index] };
}

/** What a strict parse may meet besides the table's flags. */
export interface StrictOptions {
  /** Agent parameters, by flag name (without dashes). */
  parameters?: Map<string, [string, ParameterSpec]>;
  /** Whether positionals are allowed. */
  positionals?: boolean;
  /** The message for an unknown flag. */
  unknown?: (flag: string) => UsageError;
}

/**
 * Parse strictly: every flag known, values checked by parseArgs.
 *
 * @param argv The arguments.
 * @param flags The flags of the table allowed.
 * @param options Agent parameters, positionals, the unknown-flag message.
 * @returns Raw values and positionals.
 * @throws {UsageError} For an unknown flag, a missing value or a stray argument.
 */
export function strictParse(
  argv: readonly string[],
  flags: readonly FlagSpec[],
  options: StrictOptions = {},
): { values: Values; positionals: string[] } {
  const parameters = options.parameters ?? new Map();
  const specs: Options = optionsOf(flags);
  for (const [flag, [, spec]] of parameters) {
    specs[flag] = { type: spec.type === "boolean" ? "boolean" : "string" };
  }
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: specs,
      strict: true,
      allowPositionals: options.positionals ?? false,
    });
    return { values: parsed.values as Values, positionals: parsed.positionals };
  } catch (error) {
    throw parseError(error, (name) => {
      const flag = flags.find((spec) => spec.name === name);
      if (flag) return valueText(flag);
      const parameter = parameters.get(name);
      return parameter && `the agent's parameter "${parameter[0]}"`;
    }, options.unknown);
  }
}

function parseError(
  error: unknown,
  describe: (name: string) => string | undefined,
  unknown?: (flag: string) => UsageError,
): UsageError {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const flag = message.match(/'(-{1,2}[^' ]+)/)?.[1] ?? message;
    return unknown?.(flag) ??
      new UsageError(`Unknown flag "${flag}": run with --help to see the flags`);
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const arg = message.match(/'([^']*)'/)?.[1] ?? "";
    return new UsageError(
      `Unexpected argument "${arg}": flags take their values as "--flag value"; run with --help`,
    );
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const flag = message.match(/--([a-zA-Z0-9_-]+)/)?.[0] ?? "flag";
    if (message.includes("does not take an argument")) {
      return new UsageError(`Flag "${flag}" takes no value: give it alone, as "${flag}"`);
    }
    if (message.includes("argument is ambiguous")) {
      return new UsageError(
        `Flag "${flag}" needs a value: to give one that starts with "-", write "${flag}=VALUE"`,
      );
    }
    return needsValue(flag, describe(flag.slice(2)));
  }
  return new UsageError(`Bad command line: ${message.split("\n")[0].replace(/\.$/, "")}`);
}
