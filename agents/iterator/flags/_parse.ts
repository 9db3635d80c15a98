/**
 * Argument lists -> raw flag values, split as `node:util`'s parseArgs splits
 * them (see `_tokenize.ts`), with one-line usage errors that name the flag.
 * Private to the iterator's command line.
 *
 * @module
 */

import type { ParameterSpec } from "../../definition/definition_types.ts";
import { UsageError } from "../../support/errors.ts";
import type { FlagSpec } from "./table.ts";
import { needsValue, type RawValue, readValue, valueText } from "./values.ts";
import { closest } from "./_suggest.ts";
import { type Options, type Token, tokenize } from "./_tokenize.ts";

/** Raw values by flag name. */
export type Values = Record<string, RawValue>;

/**
 * How some flags of the table are given: with a value or alone, and their letters.
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
 * @returns Raw values, the positionals, and the first other argument that looks like a flag.
 */
export function lenientParse(
  argv: readonly string[],
  flags: readonly FlagSpec[],
): { values: Values; positionals: string[]; other?: string } {
  const options = optionsOf(flags);
  const tokens = tokenize(argv, options);
  refuseRepeats(tokens, options);
  const known = new Set(flags.map((flag) => flag.name));
  const other = tokens.find((token) => token.kind === "option" && !known.has(token.name));
  return { ...valuesOf(tokens), other: other && argv[other.index] };
}

/**
 * The flag a mistyped one most likely meant.
 *
 * @param flag The flag as given, with dashes (and perhaps `=value`).
 * @param known The long names it may have meant, without dashes.
 * @returns The flag with dashes, or undefined when none is close (or it is a short flag).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { meantFlag } from "./_parse.ts";
 * assert.equal(meantFlag("--isue=3", ["issue", "project"]), "--issue");
 * assert.equal(meantFlag("-x", ["issue"]), undefined);
 * ```
 */
export function meantFlag(flag: string, known: Iterable<string>): string | undefined {
  if (!flag.startsWith("--")) return undefined;
  const meant = closest(flag.slice(2).split("=")[0], known);
  return meant && `--${meant}`;
}

/**
 * The message for a flag a command does not take: "did you mean" when one
 * of its flags is close, else the fallback.
 *
 * @param flag The flag as given.
 * @param options The command's flags (long names), its name, and the message without a suggestion.
 * @returns A one-line usage error.
 */
export function unknownFlag(
  flag: string,
  options: { known: Iterable<string>; command?: string; fallback: () => UsageError },
): UsageError {
  const meant = meantFlag(flag, options.known);
  if (!meant) return options.fallback();
  const where = options.command ? ` for "${options.command}"` : "";
  return new UsageError(`Unknown flag "${flag.split("=")[0]}"${where}: did you mean "${meant}"?`);
}

/** What a strict parse may meet besides the table's flags. */
export interface StrictOptions {
  /** Agent parameters, by flag name (without dashes). */
  parameters?: Map<string, [string, ParameterSpec]>;
  /** Whether positionals are allowed. */
  positionals?: boolean;
  /** The message for an unknown flag no known one is close to. */
  unknown?: (flag: string) => UsageError;
  /** The command, for messages ("runs"); none for a run. */
  command?: string;
}

/**
 * Parse strictly: every flag known and given as its kind asks.
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
  const known = [...flags.map((flag) => flag.name), ...parameters.keys()];
  const describe = (name: string) => {
    const flag = flags.find((spec) => spec.name === name);
    if (flag) return valueText(flag);
    const parameter = parameters.get(name);
    return parameter && `the agent's parameter "${parameter[0]}"`;
  };
  const tokens = tokenize(argv, specs);
  for (const token of tokens) {
    if (token.kind === "positional" && !options.positionals) {
      throw new UsageError(
        `Unexpected argument "${token.value}": flags take their values as "--flag value"; run with --help`,
      );
    }
    if (token.kind !== "option") continue;
    const flag = `--${token.name}`;
    const type = Object.hasOwn(specs, token.name) ? specs[token.name].type : undefined;
    if (type === undefined) {
      throw unknownFlag(token.rawName, {
        known,
        command: options.command,
        fallback: () =>
          options.unknown?.(token.rawName) ??
            new UsageError(`Unknown flag "${token.rawName}": run with --help to see the flags`),
      });
    }
    if (type === "string" && token.value === undefined) {
      throw needsValue(flag, describe(token.name));
    }
    if (type === "boolean" && token.value !== undefined) {
      throw new UsageError(`Flag "${flag}" takes no value: give it alone, as "${flag}"`);
    }
    // `--task --dry-run`: the next flag is more likely than a value that starts with "-".
    const value = token.inlineValue ? undefined : token.value;
    if (value !== undefined && value.length > 1 && value.startsWith("-")) {
      throw new UsageError(
        `Flag "${flag}" needs a value: to give one that starts with "-", write "${flag}=VALUE"`,
      );
    }
  }
  refuseRepeats(tokens, specs);
  return valuesOf(tokens);
}

/** Each flag's value (`true` for one given alone) and the positionals, from the tokens. */
function valuesOf(tokens: readonly Token[]): { values: Values; positionals: string[] } {
  const values: Values = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    // A later value wins; a flag that takes one is refused twice (refuseRepeats).
    else if (token.kind === "option" && token.name !== "__proto__") {
      values[token.name] = token.value ?? true;
    }
  }
  return { values, positionals };
}

/**
 * A flag that takes one value, given twice (`--task a --task b`): the user
 * meant one of them, and which one is a guess.
 */
function refuseRepeats(tokens: readonly Token[], specs: Options): void {
  const seen = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== "option" || specs[token.name]?.type !== "string") continue;
    const earlier = seen.get(token.name);
    if (earlier !== undefined) {
      const forms = earlier === token.rawName
        ? `"${earlier}"`
        : `"${earlier}" and "${token.rawName}"`;
      throw new UsageError(
        `Flag "--${token.name}" is given twice (${forms}): it takes one value; give it once`,
      );
    }
    seen.set(token.name, token.rawName);
  }
}
