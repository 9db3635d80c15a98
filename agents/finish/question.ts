/**
 * The one finish question: every model step that is still to do and may ask
 * gets its part of a single question to the finish model, and its part of
 * the single JSON answer. One request per finish instead of one per step.
 *
 * @module
 */

import { extractJsonObject } from "../support/json_extract.ts";
import type { FinishModel, ModelAnswer } from "./model.ts";
import { PART_QUESTIONS, STEP_MARKERS } from "./steps.ts";

/** A model step: a part of the finish question. */
export type FinishPart = keyof typeof STEP_MARKERS;

/** Marks the finish question, so a scripted model can tell it from other side requests. */
export const FINISH_MARKER = "FINISHLINE FINISH";

/**
 * The finish question for these parts, each line with its step's marker.
 *
 * @param parts The parts to ask, in step order.
 * @returns The question.
 */
export function finishQuestion(parts: readonly FinishPart[]): string {
  return [
    `${FINISH_MARKER}: answer with one JSON object with exactly these keys, no prose:`,
    ...parts.map((part) => `- "${part}" (${STEP_MARKERS[part]}): ${PART_QUESTIONS[part]}`),
  ].join("\n");
}

/**
 * The answers of the one finish question, asked when the first step wants
 * its part: each step reads its own part, or why it falls back.
 */
export class FinishAnswers {
  #model: FinishModel;
  #parts: readonly FinishPart[];
  #reply: Promise<ModelAnswer> | undefined;

  /**
   * @param model The finish model.
   * @param parts The parts to ask for (a step that must not ask is left out).
   */
  constructor(model: FinishModel, parts: readonly FinishPart[]) {
    this.#model = model;
    this.#parts = parts;
  }

  /**
   * One step's part of the answer, as JSON text.
   *
   * @param part The step.
   * @returns The part's JSON text, or why the step falls back.
   */
  async part(part: FinishPart): Promise<ModelAnswer> {
    if (!this.#parts.includes(part)) return { skipped: `the "${part}" part was not asked` };
    // The one question of this finish: once answered, its process can exit while the steps go on.
    this.#reply ??= this.#model.ask([...this.#parts], finishQuestion(this.#parts))
      .finally(() => void this.#model.close());
    const reply = await this.#reply;
    if ("skipped" in reply) return reply;
    const answer = extractJsonObject(reply.text);
    if (!answer) return { skipped: "the reply was not the JSON asked for" };
    const value = answer[part];
    if (value === undefined || value === null) {
      return { skipped: `the reply had no "${part}" part` };
    }
    // A model that wrote the part as a JSON string gets it read as such.
    return { text: typeof value === "string" ? value : JSON.stringify(value) };
  }
}
