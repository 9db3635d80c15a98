/**
 * The gate the maintainers run: the `run:` steps of the workflows that run
 * on push and pull requests, and the commands of the contributing guide.
 * Each command is mapped to what it means locally (see `_ci_commands.ts`);
 * the ones that are checks join the detected checks, in the order CI runs
 * them (a build CI runs before the tests runs before them here too); a
 * command that is already a check adds a note to it.
 *
 * Left out, each with its reason: workflows that run only on tags, releases,
 * schedules or by hand; jobs that start services, deploy to an environment
 * or tolerate failure; steps that use secrets, run only on some refs or in
 * another shell; setup (installs, checkouts) and publishing. A guide's
 * setup and unknown commands are ignored, and only its test, lint,
 * typecheck and check commands count: a guide shows many commands that are
 * not its gate.
 *
 * @module
 */

import { join } from "node:path";
import { meaningOf } from "./_ci_commands.ts";
import type { Sequence } from "./_ci_meaning.ts";
import { readGuides } from "./_ci_guides.ts";
import {
  addConfigFile,
  inRepository,
  isObject,
  knownCheck,
  messageOf,
  onPath,
  quote,
  readPath,
  registerKeys,
  type Scan,
  skip,
} from "./_detect_scan.ts";
import { splitShell } from "../_shell_words.ts";
import { compositeCheck } from "./_ci_composite.ts";
import type { DetectedCheck } from "./detected.ts";

const GATE_EVENTS = new Set(["push", "pull_request", "merge_group"]);

/** The events a workflow runs on, and whether any of them is a gate (push of branches, pull requests). */
function eventsOf(on: unknown): { events: string[]; gate: boolean; tagsOnly: boolean } {
  const events = typeof on === "string"
    ? [on]
    : Array.isArray(on)
    ? on.filter((event): event is string => typeof event === "string")
    : isObject(on)
    ? Object.keys(on)
    : [];
  // A push filtered to tags (and no branches) is a release, not a gate.
  const push = isObject(on) ? on.push : undefined;
  const tagsOnly = isObject(push) &&
    (push.tags !== undefined || push["tags-ignore"] !== undefined) &&
    push.branches === undefined && push["branches-ignore"] === undefined;
  const gate = events.some((event) => GATE_EVENTS.has(event) && !(event === "push" && tagsOnly));
  return { events, gate, tagsOnly };
}

/**
 * Conditions that confine a job or step to releases, deploys, failures, or
 * to anything but pull requests (a job that never runs on a pull request
 * does not gate a change: dtolnay's crates run clippy that way).
 */
const CONFINED =
  /github\.ref\b|refs\/tags|github\.event\.release|github\.event_name\s*==\s*'(?:release|schedule|workflow_dispatch)'|github\.event_name\s*!=\s*['"]pull_request['"]|\bfailure\(\)|\bcancelled\(\)/;

const SECRET = /\bsecrets\.[A-Za-z_][\w-]*|\bgithub\.token\b/;

/** Names bound to secrets in an `env:` mapping, and the literal values of the others. */
function readEnv(env: unknown): { secrets: string[]; values: Record<string, string> } {
  const secrets: string[] = [];
  const values: Record<string, string> = {};
  if (!isObject(env)) return { secrets, values };
  for (const [name, value] of Object.entries(env)) {
    // `NAME:` with no value is YAML's null: an empty variable.
    const text = value === null || value === undefined ? "" : String(value);
    if (SECRET.test(text)) secrets.push(name);
    else if (!text.includes("${{")) values[name] = text;
  }
  return { secrets, values };
}

function runDefaults(data: Record<string, unknown>): Record<string, unknown> {
  const defaults = data.defaults;
  return isObject(defaults) && isObject(defaults.run) ? defaults.run : {};
}

/** A workflow's parsed top level, or undefined (recorded in skipped). */
async function loadWorkflow(
  scan: Scan,
  file: string,
): Promise<Record<string, unknown> | undefined> {
  const text = await readPath(scan, file);
  if (text === undefined) return undefined;
  try {
    // Loaded with the first workflow: a run without workflows never waits for it.
    const { parseDocument } = await import("yaml");
    const document = parseDocument(text);
    if (document.errors.length > 0) {
      // The message's first line holds the reason and the position; the rest is a code frame.
      const [first] = document.errors[0].message.split("\n");
      skip(scan, file, `invalid YAML: ${first.replace(/:$/, "")}`);
      return undefined;
    }
    const data: unknown = document.toJS();
    if (!isObject(data) || !isObject(data.jobs)) {
      skip(scan, file, 'no "jobs" mapping');
      return undefined;
    }
    return data;
  } catch (error) {
    skip(scan, file, `cannot read it: ${messageOf(error)}`);
    return undefined;
  }
}

interface WorkflowContext {
  file: string;
  data: Record<string, unknown>;
  sequences: Sequence[];
  /** Workflows already read, so that a reusable workflow calling itself ends. */
  visited: Set<string>;
}

async function readJob(
  scan: Scan,
  context: WorkflowContext,
  id: string,
  job: Record<string, unknown>,
): Promise<void> {
  const { file, data } = context;
  const source = `${file} job ${quote(id)}`;
  const sequence: Sequence = { file, job: id, guide: false, items: [] };
  context.sequences.push(sequence);
  const place = `${file}, job ${quote(id)}`;
  // Skips are items too, so that the report lists them in the order CI has them.
  const skipHere = (where: string, why: string) =>
    sequence.items.push({
      source: where,
      place,
      step: "",
      text: "",
      dir: ".",
      meaning: { type: "skip", why },
    });
  if (typeof job.uses === "string") {
    const local = /^\.\/(\.github\/workflows\/[^@]+\.ya?ml)$/.exec(job.uses)?.[1];
    if (local === undefined) {
      skipHere(source, `calls ${quote(job.uses)}, a workflow outside this repository`);
      return;
    }
    if (context.visited.has(local)) return;
    context.visited.add(local);
    const called = await loadWorkflow(scan, local);
    if (called !== undefined) {
      await readJobs(scan, { ...context, file: local, data: called });
    }
    return;
  }
  if (!Array.isArray(job.steps)) return;
  if (isObject(job.services)) {
    skipHere(
      source,
      `starts services (${Object.keys(job.services).join(", ")}) that are not running here`,
    );
    return;
  }
  if (job.environment !== undefined) {
    const name = isObject(job.environment) ? job.environment.name : job.environment;
    skipHere(source, `deploys to the environment ${quote(String(name))}`);
    return;
  }
  if (job["continue-on-error"] === true) {
    skipHere(source, "CI tolerates its failure (continue-on-error)");
    return;
  }
  if (typeof job.if === "string" && CONFINED.test(job.if)) {
    skipHere(source, `runs only when ${quote(job.if.trim())}`);
    return;
  }
  const workflowEnv = readEnv(data.env);
  const jobEnv = readEnv(job.env);
  const defaults = { ...runDefaults(data), ...runDefaults(job) };
  // What the job's steps ran so far: a folder they make (cmake -B build) may be a later working-directory.
  let ranBefore = "";
  for (const step of job.steps) {
    if (isObject(step) && isObject(step.with) && typeof step.with.path === "string") {
      // An action may make the folder too: actions/checkout's path.
      ranBefore += `\n${step.with.path}`;
    }
    if (!isObject(step) || typeof step.run !== "string") continue;
    const run = step.run.trimEnd();
    const earlier = ranBefore;
    ranBefore += `\n${run}`;
    const name = typeof step.name === "string" && step.name.trim() !== ""
      ? step.name
      : run.trimStart().split("\n")[0];
    const stepSource = `${source} step ${quote(name)}`;
    const shell = step.shell ?? defaults.shell;
    if (typeof shell === "string" && !/^(?:bash|sh)\b/.test(shell)) {
      skipHere(stepSource, `runs in ${shell}, not a POSIX shell`);
      continue;
    }
    if (step["continue-on-error"] === true) {
      skipHere(stepSource, "CI tolerates its failure (continue-on-error)");
      continue;
    }
    if (typeof step.if === "string" && CONFINED.test(step.if)) {
      skipHere(stepSource, `runs only when ${quote(step.if.trim())}`);
      continue;
    }
    const stepEnv = readEnv(step.env);
    const secret = SECRET.exec(run)?.[0];
    const inherited = [...workflowEnv.secrets, ...jobEnv.secrets].filter((variable) =>
      new RegExp(`\\b${variable}\\b`).test(run)
    );
    if (secret !== undefined || stepEnv.secrets.length > 0 || inherited.length > 0) {
      skipHere(
        stepSource,
        secret !== undefined
          ? `uses ${secret}, which is not available here`
          : stepEnv.secrets.length > 0
          ? `is given ${stepEnv.secrets.join(", ")} from secrets, which are not available here`
          : `uses ${inherited.join(", ")}, set from secrets, which are not available here`,
      );
      continue;
    }
    const folder = step["working-directory"] ?? defaults["working-directory"];
    let dir = ".";
    if (folder !== undefined) {
      const inside = String(folder).includes("${{") ? undefined : inRepository(String(folder));
      if (inside === undefined) {
        skip(
          scan,
          stepSource,
          `its working-directory ${quote(String(folder))} is not a folder of the repository`,
        );
        continue;
      }
      if (!(await isFolder(join(scan.root, inside))) && !mentions(earlier, inside)) {
        skip(
          scan,
          stepSource,
          `its working-directory ${
            quote(String(folder))
          } is not in the repository and no earlier step of the job makes it`,
        );
        continue;
      }
      dir = inside;
    }
    const env = { ...workflowEnv.values, ...jobEnv.values, ...stepEnv.values };
    // `${{ env.NAME }}` with a plain value in the workflow is that value here too.
    const resolved = run.replace(
      /\$\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g,
      (whole, variable: string) => variable in env ? env[variable] : whole,
    );
    const split = splitShell(resolved);
    if ("unsupported" in split) {
      sequence.items.push({
        source: stepSource,
        place,
        step: name,
        text: run,
        dir,
        meaning: {
          type: "unknown",
          why: `uses ${split.unsupported}, which finishline does not read`,
        },
      });
      continue;
    }
    for (const unit of split.units) {
      const meaning = await meaningOf(scan, unit, dir, env);
      if (meaning.type === "cd") {
        dir = meaning.dir;
        continue;
      }
      sequence.items.push({ source: stepSource, place, step: name, text: unit.text, dir, meaning });
    }
  }
}

async function readJobs(scan: Scan, context: WorkflowContext): Promise<void> {
  for (const [id, job] of Object.entries(context.data.jobs as Record<string, unknown>)) {
    if (isObject(job)) await readJob(scan, context, id, job);
  }
}

/** Record why a whole file is not read, as the only item of its sequence. */
function notFile(sequence: Sequence, why: string): void {
  sequence.items.push({
    source: sequence.file,
    place: sequence.file,
    step: "",
    text: "",
    dir: ".",
    meaning: { type: "skip", why },
  });
}

async function readWorkflows(scan: Scan, sequences: Sequence[]): Promise<void> {
  const folder = ".github/workflows";
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(scan.root, folder))) {
      if (!entry.isDirectory && /\.ya?ml$/.test(entry.name)) names.push(entry.name);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
      skip(scan, folder, `cannot list it: ${messageOf(error)}`);
    }
    return;
  }
  const visited = new Set<string>();
  for (const name of names.sort()) {
    const file = `${folder}/${name}`;
    const data = await loadWorkflow(scan, file);
    if (data === undefined) continue;
    // YAML 1.1 readers turn `on` into true; the yaml package reads 1.2, but accept both.
    const { events, gate, tagsOnly } = eventsOf(data.on ?? data.true);
    if (!gate) {
      // A sequence of its own, so that the report keeps the order of the files.
      sequences.push({ file, job: "", guide: false, items: [] });
      notFile(
        sequences[sequences.length - 1],
        events.length === 1 && events[0] === "workflow_call"
          ? "a reusable workflow: its jobs count where a push or pull request workflow calls it"
          : `runs on ${events.join(", ") || "no event"}${
            tagsOnly ? " (tags only: a release)" : ""
          }, not on push or pull requests`,
      );
      continue;
    }
    visited.add(file);
    await readJobs(scan, { file, data, sequences, visited });
  }
}

/** Script and target names a guide shows as its gate. */
const GUIDE_GATE =
  /^(?:check|checks|verify|validate|ci|all|ok|qa|pre-?commit|pre-?push|precheck)(?:[:_-]|$)/;

/** Add a sequence's checks in its order, and record what it skipped or does not know. */
async function merge(scan: Scan, sequence: Sequence): Promise<void> {
  const { detection } = scan;
  let pending: DetectedCheck[] = [];
  const who = sequence.guide ? "the contributing guide" : "CI";
  // A job of commands finishline does not know runs them as one check, when it can run here.
  const composite = sequence.guide ? undefined : await compositeCheck(scan, {
    file: sequence.file,
    id: sequence.job,
    commands: sequence.items,
  });
  for (const item of sequence.items) {
    const { meaning } = item;
    if (meaning.type === "quiet") continue;
    if (meaning.type === "same") {
      const same = knownCheck(scan, meaning.keys);
      if (same === undefined) {
        skip(scan, item.source, `${quote(item.text)}: ${meaning.why}`);
      } else if (!/ runs it too \(/.test(same.why)) {
        same.why += `; ${who} runs it too (${item.place}: ${item.text})`;
      }
      continue;
    }
    if (meaning.type === "setup") {
      if (!sequence.guide) skip(scan, item.source, `${quote(item.text)} ${meaning.why}`);
      continue;
    }
    if (meaning.type === "skip") {
      skip(
        scan,
        item.source,
        item.text === "" ? meaning.why : `${quote(item.text)}: ${meaning.why}`,
      );
      continue;
    }
    if (meaning.type === "unknown") {
      if (composite !== undefined && "check" in composite) continue;
      if (!sequence.guide) {
        const hint = { file: sequence.file, job: sequence.job, step: item.step, run: item.text };
        if (!detection.hints.some((other) => other.run === hint.run && other.file === hint.file)) {
          const notRun = composite !== undefined && "why" in composite &&
              !composite.why.endsWith(meaning.why)
            ? `; ${composite.why}`
            : "";
          detection.hints.push({ ...hint, why: `${meaning.why}${notRun}` });
        }
      }
      continue;
    }
    if (meaning.type !== "check") continue;
    const found = meaning.check;
    if (
      sequence.guide && !["test", "lint", "typecheck"].includes(found.kind) &&
      !GUIDE_GATE.test(found.task)
    ) {
      skip(
        scan,
        item.source,
        `${
          quote(item.text)
        }: the guide shows it, but only its test, lint, typecheck and check commands count as its gate`,
      );
      continue;
    }
    const existing = knownCheck(scan, [`cmd:${found.command}`, ...found.keys]);
    if (existing !== undefined) {
      const at = detection.checks.indexOf(existing);
      // A guide's order is the order of its prose, not of a run: its checks go last.
      if (at !== -1 && pending.length > 0 && !sequence.guide) {
        // What CI runs before an existing check (a build before the tests) runs before it here.
        detection.checks.splice(at, 0, ...pending);
        pending = [];
      }
      if (!/ runs it too \(/.test(existing.why) && !existing.why.startsWith(item.place)) {
        existing.why += `; ${who} runs it too (${item.place})`;
      }
      continue;
    }
    // The repository's own checks name their tool for the preflight to demand; an addition
    // from CI whose tool CI installs but this machine lacks, and no other check needs,
    // would only stop the run.
    const needed = detection.checks.some((other) => other.executable === found.executable);
    if (!needed && !(await onPath(scan, found.executable))) {
      skip(
        scan,
        item.source,
        `${quote(item.text)}: ${found.executable} is not installed here (CI installs it)`,
      );
      continue;
    }
    const absent: string[] = [];
    for (const tool of found.requires ?? []) if (!(await onPath(scan, tool))) absent.push(tool);
    if (absent.length > 0) {
      skip(
        scan,
        item.source,
        `${quote(item.text)}: ${found.task} runs ${
          absent.join(", ")
        }, not installed here (CI installs ${absent.length === 1 ? "it" : "them"})`,
      );
      continue;
    }
    const created: DetectedCheck = {
      name: found.command,
      command: found.command,
      source: item.source,
      why: `${item.place} runs it; ${found.facts}`,
      executable: found.executable,
      ...(found.runner !== undefined ? { runner: found.runner } : {}),
      kind: found.kind,
    };
    registerKeys(scan, created, found.keys);
    pending.push(created);
    await addConfigFile(scan, sequence.file);
    for (const file of found.configFiles) await addConfigFile(scan, file);
  }
  detection.checks.push(...pending);
  if (composite !== undefined && "check" in composite) {
    const { check } = composite;
    if (knownCheck(scan, [`cmd:${check.command}`]) === undefined) {
      detection.checks.push(check);
      registerKeys(scan, check, [`ci-job:${sequence.file}:${sequence.job}`]);
      await addConfigFile(scan, sequence.file);
    }
  }
}

/** Workflows on push and pull requests, then the contributing guide. */
export async function detectCiGate(scan: Scan): Promise<void> {
  const sequences: Sequence[] = [];
  await readWorkflows(scan, sequences);
  await readGuides(scan, sequences);
  for (const sequence of sequences) await merge(scan, sequence);
}

/** Whether `path` is a folder. */
async function isFolder(path: string): Promise<boolean> {
  return await Deno.stat(path).then((info) => info.isDirectory, () => false);
}

/** Whether shell text names `folder` as a word (`mkdir -p build`, `cmake -B build`, `-Bbuild`). */
function mentions(text: string, folder: string): boolean {
  const escaped = folder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?:^|[\\s=/"']|-[A-Za-z])(?:\\./)?${escaped}(?:$|[\\s/"';&|)])`, "m")
    .test(text);
}
