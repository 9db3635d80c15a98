/**
 * Argument lists -> tokens, split as `node:util`'s parseArgs splits them
 * (`--flag value`, `--flag=value`, `-f value`, `-fvalue`, groups of short
 * flags, `--` ending the flags), without loading Node's compatibility layer,
 * whose own start adds tens of milliseconds to every command's (see
 * docs/performance.md). Private to the iterator's command line.
 *
 * @module
 */

/** How each flag is given, by its long name: whether it takes a value, and its letter. */
export type Options = Record<string, { type: "string" | "boolean"; short?: string }>;

/** One argument, or one flag of a group of short flags (`-qv`). */
export type Token =
  | {
    kind: "option";
    /** The long name (a short flag not in the options keeps its letter). */
    name: string;
    /** The flag as given: `--name` (without `=value`) or `-n`. */
    rawName: string;
    /** The argument's place in the list. */
    index: number;
    /** The value: inline (`--name=value`, `-nvalue`) or the next argument. */
    value?: string;
    /** Whether the value was inline. */
    inlineValue?: boolean;
  }
  | { kind: "positional"; index: number; value: string }
  | { kind: "option-terminator"; index: number };

/**
 * Split an argument list into tokens. A flag that takes a value takes the
 * next argument whatever it is (a strict parse refuses one that looks like a
 * flag); an unknown flag takes none.
 *
 * @param argv The arguments.
 * @param options The flags known.
 * @returns The tokens, in order.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tokenize } from "./_tokenize.ts";
 *
 * const tokens = tokenize(["-t", "x", "--", "-q"], { task: { type: "string", short: "t" } });
 * assert.deepEqual(tokens.map((token) => token.kind), ["option", "option-terminator", "positional"]);
 * ```
 */
export function tokenize(argv: readonly string[], options: Options): Token[] {
  const longName = (letter: string) =>
    Object.entries(options).find(([, option]) => option.short === letter)?.[0] ?? letter;
  const takesValue = (name: string) =>
    Object.hasOwn(options, name) && options[name].type === "string";
  const tokens: Token[] = [];
  const rest = [...argv];
  let index = -1;
  // The flags of a short group, expanded into `rest`, share the group's index.
  let grouped = 0;
  // A flag alone in its argument; one that takes a value takes the next argument.
  const alone = (name: string, rawName: string): Token => {
    if (!takesValue(name) || rest.length === 0) return { kind: "option", name, rawName, index };
    const token: Token = {
      kind: "option",
      name,
      rawName,
      index,
      value: rest.shift()!,
      inlineValue: false,
    };
    index++;
    return token;
  };
  while (rest.length > 0) {
    const arg = rest.shift()!;
    if (grouped > 0) grouped--;
    else index++;
    if (arg === "--") {
      tokens.push({ kind: "option-terminator", index });
      for (const value of rest) tokens.push({ kind: "positional", index: ++index, value });
      break;
    }
    if (arg.length < 2 || arg[0] !== "-") {
      tokens.push({ kind: "positional", index, value: arg });
      continue;
    }
    if (arg[1] !== "-") {
      const name = longName(arg[1]);
      if (arg.length === 2) {
        tokens.push(alone(name, arg));
        continue;
      }
      if (takesValue(name)) {
        tokens.push({
          kind: "option",
          name,
          rawName: `-${arg[1]}`,
          index,
          value: arg.slice(2),
          inlineValue: true,
        });
        continue;
      }
      const expanded: string[] = [];
      for (let at = 1; at < arg.length; at++) {
        if (!takesValue(longName(arg[at])) || at === arg.length - 1) {
          expanded.push(`-${arg[at]}`);
        } else {
          // `-qtVALUE`: the flag that takes a value takes the rest.
          expanded.push(`-${arg.slice(at)}`);
          break;
        }
      }
      rest.unshift(...expanded);
      grouped = expanded.length;
      continue;
    }
    const equals = arg.indexOf("=", 3);
    if (equals === -1) {
      tokens.push(alone(arg.slice(2), arg));
      continue;
    }
    const name = arg.slice(2, equals);
    tokens.push({
      kind: "option",
      name,
      rawName: `--${name}`,
      index,
      value: arg.slice(equals + 1),
      inlineValue: true,
    });
  }
  return tokens;
}
