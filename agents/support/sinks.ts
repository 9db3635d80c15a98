/**
 * The outputs of finishline as redacted sinks: each takes the redactor when
 * it is made, so no caller has to remember it. The run log
 * ({@linkcode RunLog}), the run history (the store), the model requests
 * (`redactingBackend`), gh's arguments and the embeddings requests carry
 * their own; this module gives the same to standard output and error and to
 * files written whole (the report, the fleet's report and record).
 *
 * @module
 */

import { stripControls, stripControlsButColour } from "./controls.ts";
import { type Redactor, redactorOfProcess } from "./redact.ts";

/**
 * A writer whose every text is redacted first: for stdout and stderr.
 *
 * @param write Where the text goes.
 * @param redactor The redactor. @default the process's
 * @returns The redacting writer.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redactor } from "./redact.ts";
 * import { redactingWriter } from "./sinks.ts";
 *
 * const out: string[] = [];
 * const write = redactingWriter((text) => out.push(text), new Redactor({ DB_PASSWORD: "hunter2hunter2" }));
 * write("password hunter2hunter2\n");
 * assert.deepEqual(out, ["password [redacted]\n"]);
 * ```
 */
export function redactingWriter(
  write: (text: string) => void,
  redactor: Redactor = redactorOfProcess(),
): (text: string) => void {
  return (text) => write(redactor.redact(text));
}

/**
 * A writer for a terminal (stdout and stderr): every text has its terminal
 * escapes and control characters removed (an agent's OSC 52 would write the
 * user's clipboard, OSC 0 the window title, CSI 2J clear the screen) but
 * colour (finishline's painter's), then is redacted. Only finishline's own live line draws with escapes, through
 * the raw stream.
 *
 * @param write Where the text goes.
 * @param redactor The redactor. @default the process's
 * @returns The writer.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redactor } from "./redact.ts";
 * import { terminalWriter } from "./sinks.ts";
 *
 * const out: string[] = [];
 * const write = terminalWriter((text) => out.push(text), new Redactor({}));
 * write("[agent] done\x1b]52;c;Y3VybCBldmls\x07\x1b[2J\n");
 * assert.deepEqual(out, ["[agent] done\n"]);
 * ```
 */
export function terminalWriter(
  write: (text: string) => void,
  redactor: Redactor = redactorOfProcess(),
): (text: string) => void {
  return (text) => {
    // Controls first: a secret split by one is whole again for the redactor. Colour is kept
    // only when the text without it holds nothing to hide, so a colour code cannot split a secret.
    const plain = stripControls(text);
    const redacted = redactor.redact(plain);
    write(redacted !== plain ? redacted : redactor.redact(stripControlsButColour(text)));
  };
}

/**
 * Write a whole text file, redacted: the report, the fleet's report and record.
 *
 * @param path The file.
 * @param text Its text.
 * @param options `redactor` (the process's by default), and `createNew`, `mode` as for
 *   `Deno.writeTextFile`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redactor } from "./redact.ts";
 * import { writeRedactedFile } from "./sinks.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   await writeRedactedFile(`${dir}/report.md`, "key: xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", {
 *     redactor: new Redactor({}),
 *   });
 *   assert.equal(await Deno.readTextFile(`${dir}/report.md`), "key: xoxb-…UvWx [redacted]");
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function writeRedactedFile(
  path: string,
  text: string,
  options: { redactor?: Redactor } & Deno.WriteFileOptions = {},
): Promise<void> {
  const { redactor = redactorOfProcess(), ...write } = options;
  await Deno.writeTextFile(path, redactor.redact(text), write);
}
