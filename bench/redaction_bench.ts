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

import process from "node:process";
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

/** Milliseconds of this process's CPU time: on a loaded machine, wall time measures the load. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Wall and CPU milliseconds a function takes. */
async function timed(run: () => unknown): Promise<{ wall: number; cpu: number }> {
  const wall = performance.now();
  const cpu = cpuMs();
  await run();
  return { wall: performance.now() - wall, cpu: cpuMs() - cpu };
}

async function writeLog(
  records: unknown[],
  redactor: Redactor,
): Promise<{ wall: number; cpu: number }> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-redaction-bench-" });
  try {
    const log = RunLog.open(`${dir}/run.jsonl`, redactor);
    const time = await timed(() => {
      for (const record of records) log.message(1, record);
      log.close();
    });
    return time;
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
const plain: Array<{ wall: number; cpu: number }> = [];
const redacted: Array<{ wall: number; cpu: number }> = [];
for (let round = 0; round < rounds; round++) {
  plain.push(await writeLog(records, new NoRedaction({})));
  redacted.push(await writeLog(records, redactor));
}
const text = (records as Array<{ message: { content: Array<{ content?: string }> } }>)
  .map((record) => record.message.content[0].content ?? "").join("\n")
  .slice(0, megabytes * 1024 * 1024);
const textTimes: Array<{ wall: number; cpu: number }> = [];
for (let round = 0; round < rounds; round++) {
  textTimes.push(await timed(() => redactor.redact(text)));
}
const perMb = (ms: number, bytes: number) => (ms / (bytes / 1024 / 1024)).toFixed(1);
const logBytes = records.reduce<number>((sum, record) => sum + JSON.stringify(record).length, 0);
const of = (samples: Array<{ wall: number; cpu: number }>, key: "wall" | "cpu") =>
  median(samples.map((sample) => sample[key]));
console.log(
  `records: ${records.length}, log: ${(logBytes / 1024 / 1024).toFixed(1)} MB, rounds: ${rounds}`,
);
console.log("                       wall       cpu");
const line = (label: string, wall: number, cpu: number, bytes: number) =>
  console.log(
    `${label} ${perMb(wall, bytes).padStart(6)} ms/MB ${perMb(cpu, bytes).padStart(6)} ms/MB`,
  );
line("log without redaction: ", of(plain, "wall"), of(plain, "cpu"), logBytes);
line("log with redaction:    ", of(redacted, "wall"), of(redacted, "cpu"), logBytes);
line(
  "redaction's own cost:  ",
  of(redacted, "wall") - of(plain, "wall"),
  of(redacted, "cpu") - of(plain, "cpu"),
  logBytes,
);
line("one large text:        ", of(textTimes, "wall"), of(textTimes, "cpu"), text.length);
