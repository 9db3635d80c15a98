/**
 * The schema of one entry of `verify.checks` in agent.json: a checker that
 * must pass before a run completes, chosen by its `type`.
 *
 * @module
 */

import { z } from "zod";
import {
  insidePath,
  nonEmptyString,
  nonNegativeInt,
  positiveNumber,
  strictObject,
} from "./_fields.ts";

const checkName = nonEmptyString().optional().describe("Name in feedback and logs.");

/** The schema of one checker, told apart by its `type`. */
export const checkSchema = z.discriminatedUnion("type", [
  strictObject({
    type: z.literal("command"),
    command: nonEmptyString().describe("Shell command (sh -c), e.g. `deno task test`."),
    timeoutSeconds: positiveNumber().default(600).describe("Timeout in seconds."),
    name: checkName,
  }).describe("Runs a command; passes on exit 0."),
  strictObject({
    type: z.literal("git"),
    minCommits: nonNegativeInt().default(1).describe("New commits required since the run started."),
    cleanTree: z.boolean().default(false).describe("Require no uncommitted changes."),
    name: checkName,
  }).describe("Commit evidence."),
  strictObject({
    type: z.literal("files"),
    paths: z.array(insidePath()).min(1, { error: "expected at least one path" }).describe(
      "Paths that must exist, relative to the working directory and inside it after symlinks are followed.",
    ),
    name: checkName,
  }).describe("Paths that must exist."),
  strictObject({ type: z.literal("plan"), name: checkName }).describe(
    "The agent's own TodoWrite plan must be completed.",
  ),
  strictObject({
    type: z.literal("judge"),
    criteria: nonEmptyString().describe("What must be true."),
    model: nonEmptyString().optional().describe("Model for the judge session."),
    timeoutSeconds: positiveNumber().default(180).describe("Timeout of the judge session."),
    name: checkName,
  }).describe("An LLM judge in a separate tool-less session."),
  strictObject({
    type: z.literal("custom"),
    path: nonEmptyString().describe("Module path relative to the agent folder."),
    options: z.record(z.string(), z.unknown()).default(() => ({})).describe(
      "Passed to the module's factory, or to its class's constructor.",
    ),
    name: checkName,
  }).describe("A checker module in the agent folder."),
], {
  error: (issue) =>
    issue.code === "invalid_union"
      ? `expected "type" to be one of "command", "git", "files", "plan", "judge", "custom"`
      : undefined,
});
