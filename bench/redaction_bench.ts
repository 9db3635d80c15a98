/**
 * `deno task bench:redaction`: what the redaction layer costs, per MB, on a
 * large run log. It writes a log of agent messages (text, tool uses, tool
 * results, a secret now and then) through {@linkcode RunLog}, which redacts
 * every string of every record, and times it against the same records
 * written without redaction; then the same for one large text (a check's
 * output), as the report and stderr see it. The redactor knows the
 * catalogue's runner credentials (`tests/support/_secrets.ts`), as a real
 * run knows its own keys.
 *
 *     deno task bench:redaction [--mb 20] [--rounds 3]
 *
 * @module
 */

import { parseArgs } from "node:util";
import { RunLog } from "../agents/support/log.ts";
import { Redactor } from "../agents/support/redact.ts";
import { catalogueEnv, SECRET_KINDS } from "../tests/support/_secrets.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { mb: { type: "string", default: "20" }, rounds: { type: "string", default: "3" } },
});
const megabytes = Number(values.mb);
const rounds = Number(values.rounds);

const WORDS = "the build reads src/lib/parse.ts line 42 and fails with TypeError: cannot read"
  .split(" ");

function sentence(seed: number, words: number): string {
  return Array.from({ length: words }, (_, i) => WORDS[(seed * 7 + i * 3) % WORDS.length]).join(
    " ",
  );
}

/** Agent messages as a run log holds them; one string in 200 carries a secret. */
function messages(totalBytes: number): unknown[] {
  const out: unknown[] = [];
  let size = 0;
  for (let i = 0; size < totalBytes; i++) {
    const secret = i % 200 === 0 ? ` ${SECRET_KINDS[i % SECRET_KINDS.length].text}` : "";
    const message = i % 3 === 0
      ? {
        type: "assistant",
        message: { content: [{ type: "text", text: sentence(i, 60) + secret }] },
      }
      : i % 3 === 1
      ? {
        type: "assistant",
        message: {
          content: [{
            type: "tool_use",
            name: "Bash",
            input: { command: `npm test -- ${sentence(i, 8)}` },
          }],
        },
      }
      : {
        type: "user",
        message: {
          content: [{
            type: "tool_result",
            content: Array.from({ length: 20 }, (_, n) => sentence(i + n, 14)).join("\n") + secret,
          }],
        },
      };
    size += JSON.stringify(message).length;
    out.push(message);
  }
  return out;
}

/** A redactor that finds nothing and costs nothing: the baseline. */
class NoRedaction extends Redactor {
  override redact(text: string): string {
    return text;
  }
  override redactValue<T>(value: T): T {
    return value;
  }
}

async function writeLog(records: unknown[], redactor: Redactor): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-redaction-bench-" });
  try {
    const log = RunLog.open(`${dir}/run.jsonl`, redactor);
    const start = performance.now();
    for (const record of records) log.message(1, record);
    log.close();
    return performance.now() - start;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const records = messages(megabytes * 1024 * 1024);
// A runner's environment holds its own credentials: their every form is looked for.
const redactor = new Redactor({ ...Deno.env.toObject(), ...catalogueEnv() });
const plain: number[] = [];
const redacted: number[] = [];
for (let round = 0; round < rounds; round++) {
  plain.push(await writeLog(records, new NoRedaction({})));
  redacted.push(await writeLog(records, redactor));
}
const text = (records as Array<{ message: { content: Array<{ content?: string }> } }>)
  .map((record) => record.message.content[0].content ?? "").join("\n")
  .slice(0, megabytes * 1024 * 1024);
const textTimes: number[] = [];
for (let round = 0; round < rounds; round++) {
  const start = performance.now();
  redactor.redact(text);
  textTimes.push(performance.now() - start);
}
const perMb = (ms: number, bytes: number) => (ms / (bytes / 1024 / 1024)).toFixed(1);
const logBytes = records.reduce<number>((sum, record) => sum + JSON.stringify(record).length, 0);
console.log(
  `records: ${records.length}, log: ${(logBytes / 1024 / 1024).toFixed(1)} MB, rounds: ${rounds}`,
);
console.log(`log without redaction: ${perMb(median(plain), logBytes)} ms/MB`);
console.log(`log with redaction:    ${perMb(median(redacted), logBytes)} ms/MB`);
console.log(`redaction's own cost:  ${perMb(median(redacted) - median(plain), logBytes)} ms/MB`);
console.log(`one large text:        ${perMb(median(textTimes), text.length)} ms/MB`);
