/**
 * Every process a finishline run starts carries a tag in its environment
 * (`FINISHLINE_RUN=<run id>/<pid>`, and `FINISHLINE_FLEET=<fleet id>/<pid>`
 * under a fleet: the pid of the finishline process, so that a `--resume`
 * started at once is never taken for what the killed process left), inherited by whatever it starts in turn: agents, adapters, checks,
 * the daemons a check backgrounds, even after they leave their process group
 * or their parent dies. At its end a run stops every process with its tag;
 * while it runs, a watchdog outside its process group waits for it to die,
 * however it dies (SIGKILL included), and then stops them; and the next run
 * in the repository stops the tagged processes of runs whose lock is free.
 * A process is named by its pid and its start time, never by its name, so a
 * reused pid is never hit. Linux only (it reads `/proc`); elsewhere nothing
 * is found and nothing is stopped.
 *
 * @module
 */

/** The variable that tags a run's processes. */
export const RUN_TAG = "FINISHLINE_RUN";
/** The variable that tags a fleet's processes. */
export const FLEET_TAG = "FINISHLINE_FLEET";

/** A running process, named safely: its pid and its start time (clock ticks since boot). */
export interface ProcessId {
  /** The process id. */
  pid: number;
  /** When it started, from `/proc/<pid>/stat`: a reused pid has another. */
  start: number;
}

/**
 * When a process started, and whether it still runs (a zombie does not).
 *
 * @param pid The process.
 * @returns Its start time, or undefined when it is gone or a zombie.
 */
export async function startTime(pid: number): Promise<number | undefined> {
  const fields = await runningStat(pid);
  return fields ? Number(fields[19]) : undefined;
}

/**
 * Whether a process of group `group` still runs (zombies do not), from
 * `/proc`.
 *
 * @param group The process group.
 * @returns True while one runs; undefined when `/proc` cannot tell.
 */
export async function groupRuns(group: number): Promise<boolean | undefined> {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync("/proc")];
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry.name)) continue;
    // After the state: the parent, then the process group.
    if (Number((await runningStat(Number(entry.name)))?.[2]) === group) return true;
  }
  return false;
}

/** The fields of `/proc/<pid>/stat` after the command name, while the process runs. */
async function runningStat(pid: number): Promise<string[] | undefined> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => undefined);
  if (!stat) return undefined;
  // Fields after the command name, which may hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[0] === "Z" || fields[0] === "X" ? undefined : fields;
}

/**
 * The processes whose environment holds `name=value` (or, without a value,
 * any value of `name`; with `prefix`, a value that starts with `value`), with
 * that value.
 *
 * @param name The variable.
 * @param value The value to match; any when undefined.
 * @param options `prefix`: match values that start with `value`.
 * @returns The processes, with the tag's value, this process left out.
 */
export async function taggedProcesses(
  name: string,
  value?: string,
  options: { prefix?: boolean } = {},
): Promise<Array<ProcessId & { value: string }>> {
  const found: Array<ProcessId & { value: string }> = [];
  const prefix = `${name}=`;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync("/proc")];
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    if (pid === Deno.pid) continue;
    let environ: Uint8Array;
    try {
      environ = await Deno.readFile(`/proc/${pid}/environ`);
    } catch {
      continue;
    }
    const tag = new TextDecoder().decode(environ).split("\0").find((entry) =>
      entry.startsWith(prefix)
    )?.slice(prefix.length);
    if (tag === undefined || tag === "") continue;
    if (value !== undefined && (options.prefix ? !tag.startsWith(value) : tag !== value)) continue;
    const start = await startTime(pid);
    if (start !== undefined) found.push({ pid, start, value: tag });
  }
  return found;
}

/**
 * Stop processes: SIGTERM, then SIGKILL to those still running after
 * `graceMs`. A process whose pid now belongs to another start time is left
 * alone.
 *
 * @param processes The processes.
 * @param graceMs How long they get to exit on SIGTERM.
 * @returns How many were running when asked to stop.
 */
export async function stopProcesses(processes: ProcessId[], graceMs = 2_000): Promise<number> {
  const same = async (process: ProcessId) => await startTime(process.pid) === process.start;
  const running: ProcessId[] = [];
  for (const process of processes) {
    if (!(await same(process))) continue;
    running.push(process);
    signal(process.pid, "SIGTERM");
  }
  const deadline = performance.now() + graceMs;
  let left = running;
  while (left.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const still: ProcessId[] = [];
    for (const process of left) if (await same(process)) still.push(process);
    left = still;
  }
  for (const process of left) if (await same(process)) signal(process.pid, "SIGKILL");
  return running.length;
}

function signal(pid: number, name: Deno.Signal): void {
  try {
    Deno.kill(pid, name);
  } catch {
    // gone in between
  }
}

/**
 * Stop every process tagged `name=value` (with `prefix`, any value starting
 * with `value`: `<run id>/` for every process of a run).
 *
 * @param name The variable.
 * @param value Its value.
 * @param options `prefix` matching, and how long they get to exit on SIGTERM.
 * @returns How many were stopped.
 */
export async function stopTagged(
  name: string,
  value: string,
  options: { prefix?: boolean; graceMs?: number } = {},
): Promise<number> {
  return await stopProcesses(
    await taggedProcesses(name, value, { prefix: options.prefix }),
    options.graceMs,
  );
}

/**
 * The watchdog's script. Its standard input is a pipe whose other end only
 * finishline holds: the read returns at end of file the moment finishline
 * dies, however it dies (the kernel closes its descriptors), with no polling
 * and no delay. Then it stops every process tagged `$1=$2`: one `grep` over
 * every process's environment finds them, SIGTERM, half a second for them
 * to exit, then SIGKILL, again until none is left (one forked in between is
 * found in the next round). It carries no tag itself.
 */
const WATCHDOG = String.raw`
name=$1 value=$2
while read -r _; do :; done
tagged() {
  grep -lszxF "$name=$value" /proc/[0-9]*/environ | sed -e 's#^/proc/##' -e 's#/environ$##'
}
pids=$(tagged)
[ -n "$pids" ] || exit 0
kill -TERM $pids 2>/dev/null
rounds=0
while [ $rounds -lt 5 ]; do
  sleep 0.1
  [ -n "$(tagged)" ] || exit 0
  rounds=$((rounds + 1))
done
# The same tag only: no process started since carries it (it names the dead process).
rounds=0
while [ $rounds -lt 50 ]; do
  pids=$(tagged)
  [ -n "$pids" ] || exit 0
  kill -KILL $pids 2>/dev/null
  sleep 0.02
  rounds=$((rounds + 1))
done
exit 0
`;

/** The write ends of the watchdogs' pipes: held (never written) while this process lives. */
const lifelines = new Set<WritableStreamDefaultWriter<Uint8Array>>();

/** A watchdog that outlives the process it watches, to stop what that process left. */
export interface Watchdog {
  /** The tag's value this process's children carry: `<value>/<pid>`. */
  tag: string;
  /**
   * The watched process ends normally: stop every process it tagged, take the
   * tag off, and end the watchdog.
   */
  end(): Promise<void>;
}

/**
 * Tag this process's environment, so that every process it starts from now
 * on carries `name=<value>/<pid>`: before its watchdog starts (a process
 * started then is stopped by the watchdog once it runs, and with the run at
 * its end). Tagging again with the same value changes nothing.
 *
 * @param name {@linkcode RUN_TAG} or {@linkcode FLEET_TAG}.
 * @param value The run's or fleet's id.
 * @returns What takes the tag off again, restoring what was there before
 * (a no-op once the tag is off or another has replaced it).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RUN_TAG, tagProcess } from "./process_tags.ts";
 *
 * const untag = tagProcess(RUN_TAG, "run-1");
 * assert.equal(Deno.env.get(RUN_TAG), `run-1/${Deno.pid}`);
 * untag();
 * assert.equal(Deno.env.get(RUN_TAG), undefined);
 * ```
 */
export function tagProcess(name: string, value: string): () => void {
  const tag = `${value}/${Deno.pid}`;
  const before = Deno.env.get(name);
  if (before === tag) return () => {};
  Deno.env.set(name, tag);
  return () => {
    if (Deno.env.get(name) !== tag) return;
    if (before === undefined) Deno.env.delete(name);
    else Deno.env.set(name, before);
  };
}

/**
 * Tag this process's environment, so that every process it starts from now
 * on carries `name=value`, and start a watchdog in a session of its own that
 * stops them once this process has died, however it dies. Without `/proc`
 * (not Linux) the tag is set and no watchdog starts.
 *
 * @param name {@linkcode RUN_TAG} or {@linkcode FLEET_TAG}.
 * @param value The run's or fleet's id.
 * @returns The watchdog.
 */
export async function guardProcesses(name: string, value: string): Promise<Watchdog> {
  const tag = `${value}/${Deno.pid}`;
  const untag = tagProcess(name, value);
  const end = async (watchdog?: Deno.ChildProcess) => {
    await stopTagged(name, tag);
    untag();
    try {
      watchdog?.kill("SIGKILL");
    } catch {
      // ended already
    }
    watchdog?.status.catch(() => {});
  };
  // The watchdog reads /proc: without it (not Linux), only the tag is set.
  if (await startTime(Deno.pid) === undefined) return { tag, end: () => end() };
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("sh", {
      args: ["-c", WATCHDOG, "finishline-watchdog", name, tag],
      // Untagged: it must not stop itself.
      env: { [name]: "" },
      stdin: "piped",
      stdout: "null",
      stderr: "null",
      detached: true,
    }).spawn();
  } catch {
    return { tag, end: () => end() };
  }
  // The pipe's write end is this process's alone (close-on-exec: no child inherits it).
  const lifeline = child.stdin.getWriter();
  lifelines.add(lifeline);
  child.unref();
  return {
    tag,
    end: async () => {
      await end(child);
      lifelines.delete(lifeline);
      await lifeline.close().catch(() => {});
    },
  };
}
