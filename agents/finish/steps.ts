/**
 * The finish workflow's four model steps, each with its part of the one
 * finish question (`question.ts`), the JSON it expects (validated with zod)
 * and its fallback from what the run recorded: a structured summary,
 * learning extraction, a skill assessment and the next actions. A part that
 * is missing or not the JSON asked for, a failed session or a reached cost
 * cap gives that step's fallback, and the log says so.
 *
 * @module
 */

import { z } from "zod";
import { alwaysActions, withAlwaysActions } from "../record/finish_call.ts";
import type { IterationSummary } from "../record/iteration.ts";
import { extractJsonObject } from "../support/json_extract.ts";
import { EXTRACT_MARKER, parseLearnings, reportedLearnings } from "../store/learnings_text.ts";
import type { Learning, SkillRecord, StoredRun } from "../store/mod.ts";
import type { ModelAnswer } from "./model.ts";
import { assessSkills, runSummary } from "./aggregate.ts";

/** Marks each step's part of the finish question, so a scripted model can tell which are asked. */
export const STEP_MARKERS = {
  summary: "FINISHLINE SUMMARY",
  learnings: EXTRACT_MARKER,
  skills: "FINISHLINE SKILLS",
  next_actions: "FINISHLINE NEXT ACTIONS",
} as const;

/** What the model steps work from. */
export interface StepInput {
  /** The stored run. */
  run: StoredRun;
  /** Its iterations' summaries. */
  summaries: IterationSummary[];
  /** How it ended. */
  outcome: { status: string; reason: string };
  /** The answers of the one finish question. */
  answers: { part(step: keyof typeof STEP_MARKERS): Promise<ModelAnswer> };
  /** Records events. */
  onEvent?: (kind: string, data: Record<string, unknown>) => void;
}

const list = () => z.array(z.string()).default([]);

/** The structured summary the model returns. */
const SUMMARY_REPLY = z.object({
  task: z.string().min(1),
  done: list(),
  files: list(),
  remaining: list(),
  approaches_tried: list(),
  lessons: list(),
  challenges: list(),
});

const SKILL = z.object({ name: z.string().min(1), description: z.string().default("") });
/** The skill assessment the model returns. */
const SKILLS_REPLY = z.object({
  used: z.array(SKILL).default([]),
  missing: z.array(SKILL).default([]),
  update: z.array(SKILL).default([]),
});

/** The next actions the model returns. */
const NEXT_ACTIONS_REPLY = z.object({ next_actions: z.array(z.string().min(1)).max(10) });

/** The structured summary, as stored under the run summary's `structured`. */
export interface StructuredSummary {
  /** What was being attempted. */
  task: string | null;
  /** What was actually done. */
  done: string[];
  /** Files changed. */
  files: string[];
  /** What remains incomplete. */
  remaining: string[];
  /** Approaches tried, those that worked and those that failed. */
  approachesTried: string[];
  /** Lessons learned. */
  lessons: string[];
  /** Challenges met. */
  challenges: string[];
}

/** A part's JSON value: an array or an object; undefined when it is neither. */
function extractJsonValue(text: string): unknown {
  try {
    return JSON.parse(text.trim());
  } catch {
    return extractJsonObject(text);
  }
}

/** Parse a JSON object reply with a schema; undefined when it does not fit. */
function parseReply<T>(schema: z.ZodType<T>, text: string): T | undefined {
  const parsed = schema.safeParse(extractJsonObject(text));
  return parsed.success ? parsed.data : undefined;
}

/** This step's part of the finish answer, parsed, or the fallback's reason in the log. */
async function modelStep<T>(
  input: StepInput,
  step: keyof typeof STEP_MARKERS,
  parse: (text: string) => T | undefined,
): Promise<T | undefined> {
  const answer = await input.answers.part(step);
  const value = "text" in answer ? parse(answer.text) : undefined;
  if (value === undefined) {
    const reason = "skipped" in answer
      ? answer.skipped
      : `the reply's "${step}" part was not the JSON asked for`;
    input.onEvent?.("finish_fallback", { step, reason });
  }
  return value;
}

/** What each step's part of the finish question asks for. */
export const PART_QUESTIONS: Record<keyof typeof STEP_MARKERS, string> = {
  summary: "summarise this run: " +
    '{"task": "what was being attempted", "done": ["what was actually done"], "files": ["files changed"], ' +
    '"remaining": ["what remains incomplete"], "approaches_tried": ["approach, and whether it worked"], ' +
    '"lessons": ["lesson learned"], "challenges": ["challenge met"]}. Empty lists are fine.',
  learnings:
    "extract what is worth remembering from this run, for future runs on the same repository: " +
    "patterns and techniques, tool combinations that worked, approaches that failed, domain knowledge: " +
    '[{"learning": "...", "tool_or_technique": "...", "applicability": "...", "tags": ["..."]}]. ' +
    "An empty list is fine when nothing is worth keeping.",
  skills: "assess the skills (reusable instructions or tools for the agent) of this run: " +
    '{"used": [{"name": "skill-name", "description": "what it did here"}], ' +
    '"missing": [{"name": "skill-name", "description": "what it would have helped with"}], ' +
    '"update": [{"name": "skill-name", "description": "what to change in it"}]}. Names in kebab-case.',
  next_actions: "list what the user should do next about this run, most useful first, " +
    'at most five short imperative lines: ["..."].',
};

/**
 * Step 1: the run summary — what the run recorded, and the structured
 * summary the model gives (or the one derived from the record).
 *
 * @param input The run and the model.
 * @returns The run summary to checkpoint.
 */
export async function summaryStep(input: StepInput): Promise<Record<string, unknown>> {
  const aggregate = runSummary(input.run, input.summaries, input.outcome);
  const reply = await modelStep(input, "summary", (text) => parseReply(SUMMARY_REPLY, text));
  const structured: StructuredSummary = reply
    ? {
      task: reply.task,
      done: reply.done,
      files: reply.files,
      remaining: reply.remaining,
      approachesTried: reply.approaches_tried,
      lessons: reply.lessons,
      challenges: reply.challenges,
    }
    : fallbackSummary(input, aggregate);
  return {
    ...aggregate,
    task: aggregate.task ?? structured.task,
    structured,
    summarySource: reply ? "model" : "aggregation",
  };
}

/** The structured summary from the record alone. */
function fallbackSummary(input: StepInput, aggregate: Record<string, unknown>): StructuredSummary {
  const reports = input.summaries.flatMap((summary) => summary.completeTask ?? []);
  const errors = [...new Set(input.summaries.flatMap((summary) => summary.errors))];
  return {
    task: (aggregate.task as string | null) ?? argvTask(input.run.argv),
    done: reports.map((report) => report.summary),
    files: aggregate.filesChanged as string[],
    remaining: aggregate.remainingWork ? [String(aggregate.remainingWork)] : [],
    approachesTried: [],
    lessons: reportedLearnings(input.summaries, input.run.agent).map((learning) => learning.text),
    challenges: errors.slice(-5),
  };
}

/** The `--task` of a run's command line. */
function argvTask(argv: string[]): string | null {
  const at = argv.indexOf("--task");
  if (at !== -1 && argv[at + 1]) return argv[at + 1];
  return argv.find((arg) => arg.startsWith("--task="))?.slice("--task=".length) ?? null;
}

/**
 * Step 2: learnings extracted by the model from the run; the agent's own
 * are stored by the caller either way.
 *
 * @param input The run and the model.
 * @returns The extracted learnings; undefined when the step fell back.
 */
export async function learningsStep(input: StepInput): Promise<Learning[] | undefined> {
  return await modelStep(input, "learnings", (text) => {
    const found = parseLearnings(text);
    return found.length > 0 || isEmptyList(text) ? found : undefined;
  });
}

/** Whether a reply says "nothing": an empty list, bare or under `learnings`. */
function isEmptyList(text: string): boolean {
  const trimmed = text.trim();
  if (/^\[\s*\]$/.test(trimmed)) return true;
  const value = extractJsonObject(trimmed);
  return Array.isArray(value?.learnings) && value.learnings.length === 0;
}

/**
 * Step 3: the skill assessment — skills used, missing and to update, each
 * with a description and a lifecycle (`implemented` for a skill in use,
 * `proposed` for one to write or change). The skills the agent reported
 * are kept; the model's descriptions and findings are added.
 *
 * @param input The run and the model.
 * @returns The skills to store.
 */
export async function skillsStep(input: StepInput): Promise<SkillRecord[]> {
  const reported = assessSkills(input.summaries);
  const reply = await modelStep(input, "skills", (text) => parseReply(SKILLS_REPLY, text));
  if (!reply) return reported;
  const byKey = new Map(reported.map((skill) => [`${skill.kind}:${skill.name}`, skill]));
  const add = (kind: SkillRecord["kind"], skill: z.infer<typeof SKILL>) => {
    const name = skill.name.trim();
    if (!name) return;
    byKey.set(`${kind}:${name}`, {
      name,
      kind,
      description: skill.description.trim(),
      lifecycle: kind === "used" ? "implemented" : "proposed",
    });
  };
  for (const skill of reply.used) add("used", skill);
  for (const skill of reply.missing) add("missing", skill);
  for (const skill of reply.update) add("update", skill);
  return [...byKey.values()];
}

/**
 * Step 4: what to do next, for the user — from the model, or from the
 * summary's remaining items and the agent's next steps; then, always, how
 * to resume the session and where to start a new one (never empty).
 *
 * @param input The run and the model.
 * @param summary The run summary step 1 checkpointed.
 * @returns Up to ten short actions.
 */
export async function nextActionsStep(
  input: StepInput,
  summary: Record<string, unknown> | null,
): Promise<string[]> {
  const reply = await modelStep(input, "next_actions", (text) => {
    // The part is the list; an object under `next_actions` (the shape once asked for) is fine too.
    const value = extractJsonValue(text);
    const parsed = NEXT_ACTIONS_REPLY.safeParse(
      Array.isArray(value) ? { next_actions: value } : value,
    );
    return parsed.success ? parsed.data : undefined;
  });
  const found = reply ? reply.next_actions : fallbackActions(summary);
  return withAlwaysActions(
    found,
    alwaysActions({
      sessionId: input.summaries.findLast((iteration) => iteration.sessionId)?.sessionId,
      cwd: input.run.cwd,
      interruptedRun: input.outcome.status === "interrupted" ? input.run.id : undefined,
    }),
  );
}

/** The seed's next actions: complete what remains, follow up every iteration's next steps. */
function fallbackActions(summary: Record<string, unknown> | null): string[] {
  const structured = summary?.structured as StructuredSummary | undefined;
  const actions = (structured?.remaining ?? []).map((item) => `Complete: ${item}`);
  // A string in summaries checkpointed before every iteration's next steps were kept.
  const nextSteps = typeof summary?.nextSteps === "string"
    ? [summary.nextSteps]
    : Array.isArray(summary?.nextSteps)
    ? summary.nextSteps as unknown[]
    : [];
  for (const step of nextSteps) {
    if (typeof step === "string" && step.trim()) actions.push(`Follow up: ${step.trim()}`);
  }
  return actions;
}

/**
 * The run's record the model reads before its first question: the outcome,
 * each iteration (its report or last words, errors and tools), and the
 * summary when step 1 is already done.
 *
 * @param input The run.
 * @param summary The checkpointed run summary, if any.
 * @returns The text, at most about 16,000 characters.
 */
export function runRecord(
  input: Pick<StepInput, "run" | "summaries" | "outcome">,
  summary: Record<string, unknown> | null,
): string {
  const { run, summaries, outcome } = input;
  const lines = [
    `Run ${run.id} of agent "${run.agent}" (handler ${run.handler}) ended ${outcome.status}: ${outcome.reason}`,
    `Command line: ${run.argv.join(" ")}`,
    `Iterations: ${summaries.length}`,
  ];
  for (const summary of summaries.slice(-20)) lines.push(...iterationRecord(summary));
  if (summary?.structured) {
    lines.push(`Summary so far: ${JSON.stringify(summary.structured).slice(0, 3000)}`);
  }
  const text = lines.join("\n");
  return text.length > 16_000 ? `${text.slice(0, 16_000)}\n(cut)` : text;
}

function iterationRecord(summary: IterationSummary): string[] {
  const report = summary.completeTask;
  const tools = [...new Set(summary.toolsUsed)].join(", ");
  const lines = [
    `Iteration ${summary.iteration}: ${
      (report?.summary ?? summary.assistantResponses.at(-1) ?? "(nothing said)").slice(0, 800)
    }`,
  ];
  if (tools) lines.push(`  tools: ${tools}`);
  if (summary.errors.length) lines.push(`  errors: ${summary.errors.slice(-3).join("; ")}`);
  if (report) {
    const fields: Array<[string, unknown]> = [
      ["status", report.status],
      ["request", report.original_request_summary],
      ["remaining", report.remaining_work],
      ["learned", report.learned],
      ["skills used", report.skills_used],
      ["skills wished for", report.new_skills_needed],
      ["files", report.files_modified],
      ["next steps", report.next_steps],
    ];
    for (const [name, value] of fields) {
      if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
      lines.push(`  ${name}: ${Array.isArray(value) ? value.join("; ") : String(value)}`);
    }
  }
  return lines;
}
