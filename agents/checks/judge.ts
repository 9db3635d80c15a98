/**
 * The `judge` checker: an LLM judge. It asks the backend, in a separate
 * session without tools, whether the criteria are met by the evidence, and
 * expects a structured verdict `{"complete": boolean, "missing": [...]}`.
 *
 * @module
 */

import { countTools } from "../support/format.ts";
import { ask } from "./ask.ts";
import { extractJsonObject } from "../support/json_extract.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./checker_contract.ts";

/** Marks the judge's prompt, so a scripted server can tell it apart. */
export const JUDGE_MARKER = "FINISHLINE JUDGE";

/** Options of {@linkcode JudgeChecker}. */
export interface JudgeCheckerOptions {
  /** What must be true for the task to be complete. */
  criteria: string;
  /** Model for the judge session; the agent's when absent. */
  model?: string;
  /** Timeout of the judge session in seconds. @default 180 */
  timeoutSeconds?: number;
  /** Name in feedback. @default "judge" */
  name?: string;
}

/**
 * Parse a judge verdict. Anything that is not a JSON object with a boolean
 * `complete` is undefined (and counts as incomplete).
 *
 * @param text The judge's reply.
 * @returns The verdict, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseVerdict } from "./judge.ts";
 *
 * assert.deepEqual(parseVerdict('Verdict: {"complete": false, "missing": ["tests"]}'), {
 *   complete: false,
 *   missing: ["tests"],
 * });
 * assert.equal(parseVerdict("looks good to me"), undefined);
 * ```
 */
export function parseVerdict(text: string): { complete: boolean; missing: string[] } | undefined {
  const object = extractJsonObject(text);
  if (!object || typeof object.complete !== "boolean") return undefined;
  const missing = Array.isArray(object.missing) ? object.missing.map(String) : [];
  return { complete: object.complete, missing };
}

/**
 * Asks a tool-less model session whether the criteria are met.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { JudgeChecker } from "./judge.ts";
 *
 * const judge = new JudgeChecker({ criteria: "The README documents every flag" });
 * assert.equal(judge.name, "judge");
 * ```
 */
export class JudgeChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;
  #options: JudgeCheckerOptions;

  /**
   * Create the checker.
   *
   * @param options Criteria, model, timeout and name.
   */
  constructor(options: JudgeCheckerOptions) {
    this.#options = options;
    this.name = options.name ?? "judge";
  }

  /**
   * Run the judge session.
   *
   * @param context Evidence and the backend.
   * @returns The verdict; unparseable or failed verdicts are incomplete.
   * @example A stand-in backend that answers every session with a verdict
   * ```ts
   * import assert from "node:assert/strict";
   * import { type AgentBackend, emptySummary, parseDefinition } from "@finishline/agents";
   * import { checkerContext } from "./context.ts";
   * import { JudgeChecker } from "./judge.ts";
   *
   * const backend: AgentBackend = {
   *   name: "scripted",
   *   async *session() {
   *     yield {
   *       type: "assistant",
   *       message: {
   *         content: [{
   *           type: "text",
   *           text: '{"complete": false, "missing": ["a changelog entry"]}',
   *         }],
   *       },
   *     };
   *   },
   * };
   * const definition = parseDefinition(
   *   '{ "name": "docs", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
   *   { displayPath: "agent.json" },
   * );
   * const judge = new JudgeChecker({ criteria: "Every change has a changelog entry" });
   * const result = await judge.check(checkerContext({
   *   current: { summary: emptySummary(1), messages: [] },
   *   previous: [],
   *   definition,
   *   cwd: Deno.cwd(),
   *   agentDir: new URL("file:///nonexistent/"),
   *   backend,
   * }));
   * assert.equal(result.complete, false);
   * assert.match(result.feedback ?? "", /- a changelog entry/);
   * ```
   */
  async check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    if (!context.backend) return incomplete("No model backend is available for the judge");
    const timeout = AbortSignal.timeout((this.#options.timeoutSeconds ?? 180) * 1000);
    const signal = context.signal ? AbortSignal.any([context.signal, timeout]) : timeout;
    let reply: string;
    try {
      reply = await ask(context.backend, await this.#prompt(context), {
        system:
          "You are a strict reviewer. You judge from the evidence given; you have no tools. Reply with one JSON object and nothing else.",
        cwd: context.cwd,
        model: this.#options.model ?? context.definition.behavior.model,
        signal,
      });
    } catch (error) {
      return incomplete(
        `The judge could not give a verdict: ${
          error instanceof Error ? error.message.split("\n")[0] : error
        }`,
      );
    }
    const verdict = parseVerdict(reply);
    if (!verdict) {
      return incomplete(
        `The judge's verdict could not be read (expected {"complete": true|false, "missing": [...]}): ${
          reply.slice(0, 200) || "(empty reply)"
        }`,
      );
    }
    if (verdict.complete) return ok("The judge found every criterion met");
    const missing = verdict.missing.length > 0
      ? verdict.missing.map((item) => `- ${item}`).join("\n")
      : "- (no details given)";
    return incomplete(`The judge found the criteria not met. Missing:\n${missing}`);
  }

  async #prompt(context: TaskCompletionContext): Promise<string> {
    const { summary, completeTask } = context;
    const lines = [
      `${JUDGE_MARKER}: decide whether the task is complete.`,
      "",
      "## Criteria",
      this.#options.criteria,
      "",
      "## Evidence",
      `- Iteration ${summary.iteration}; tools used: ${countTools(summary.toolsUsed) || "none"}`,
    ];
    if (context.git) {
      const commits = await context.git.repo.commitsSince(context.git.baseline);
      const status = await context.git.repo.status();
      lines.push(`- New commits since the run started: ${commits ?? "unknown"}`);
      if (status) {
        lines.push(
          `- Uncommitted files: ${[...status.staged, ...status.unstaged].join(", ") || "none"}`,
        );
      }
    }
    if (completeTask) {
      lines.push(
        `- The agent reported (complete_task, ${completeTask.status}): ${completeTask.summary}`,
      );
      if (completeTask.remaining_work) {
        lines.push(`- Remaining work it named: ${completeTask.remaining_work}`);
      }
      if (completeTask.files_modified?.length) {
        lines.push(`- Files it modified: ${completeTask.files_modified.join(", ")}`);
      }
    }
    const last = summary.assistantResponses.slice(-3).join("\n").slice(-3000);
    if (last) lines.push("", "## The agent's last messages", last);
    lines.push(
      "",
      "## Your answer",
      'Reply with exactly one JSON object: {"complete": true} when every criterion is met by the evidence, or {"complete": false, "missing": ["what is missing", ...]}.',
    );
    return lines.join("\n");
  }
}
