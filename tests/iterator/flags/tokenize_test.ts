/**
 * The command line's tokenizer splits arguments exactly as `node:util`'s
 * parseArgs does (the CLI used it before; its semantics are the contract).
 */

import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import { type Options, tokenize } from "../../../agents/iterator/flags/_tokenize.ts";

const OPTIONS: Options = {
  task: { type: "string", short: "t" },
  agent: { type: "string", short: "a" },
  "dry-run": { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
  verbose: { type: "boolean", short: "v" },
};

/** Flags alone and with values, groups, unknown flags, `--`, `-` and plain words. */
const PIECES = [
  "--task",
  "-t",
  "-q",
  "-qv",
  "-qt",
  "-qtx",
  "-tq",
  "-xq",
  "--task=",
  "--task=a=b",
  "--dry-run",
  "--dry-run=1",
  "--other",
  "--other=1",
  "-x",
  "--=x",
  "--",
  "-",
  "word",
  "-1",
  "--constructor",
];

/** Every list of `length` pieces. */
function* lists(length: number): Generator<string[]> {
  if (length === 0) {
    yield [];
    return;
  }
  for (const rest of lists(length - 1)) {
    for (const piece of PIECES) yield [...rest, piece];
  }
}

/** A token without its absent fields (parseArgs sets some to undefined). */
const plain = (token: object) =>
  Object.fromEntries(Object.entries(token).filter(([, value]) => value !== undefined));

Deno.test("tokenize splits every list of up to three arguments as node:util's parseArgs does", () => {
  let compared = 0;
  for (let length = 0; length <= 3; length++) {
    for (const args of lists(length)) {
      const { tokens } = parseArgs({
        args,
        options: OPTIONS,
        strict: false,
        allowPositionals: true,
        tokens: true,
      });
      assert.deepEqual(tokenize(args, OPTIONS).map(plain), tokens.map(plain), JSON.stringify(args));
      compared++;
    }
  }
  assert.equal(compared, 1 + PIECES.length + PIECES.length ** 2 + PIECES.length ** 3);
});
