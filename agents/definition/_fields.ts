/**
 * The building blocks of the agent.json schema: strict objects and field types
 * that word their own errors, and the rule for agent names.
 *
 * @module
 */

import { z } from "zod";
import { oneOf } from "./_wording.ts";

/** An agent name: the schema's `name` field and the agent lookup both check it. */
export const AGENT_NAME_PATTERN: RegExp = /^[a-z][a-z0-9-]*$/;

/**
 * A strict object: typos in a definition must not pass silently, so an unknown
 * key is an error that lists the keys the object does know.
 */
export function strictObject<T extends z.core.$ZodLooseShape>(
  shape: T,
): z.ZodObject<z.core.util.Writeable<T>, z.core.$strict> {
  const known = oneOf(Object.keys(shape));
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys" ? `unknown key, expected ${known}` : undefined,
  });
}

/** An integer greater than 0. */
export function positiveInt(): z.ZodInt {
  return z.int({ error: "expected a positive integer" }).positive({
    error: "expected a positive integer",
  });
}

/** A number greater than 0. */
export function positiveNumber(): z.ZodNumber {
  return z.number({ error: "expected a positive number" }).positive({
    error: "expected a positive number",
  });
}

/** A number of 0 or more. */
export function nonNegativeNumber(): z.ZodNumber {
  return z.number({ error: "expected a number of 0 or more" }).min(0, {
    error: "expected a number of 0 or more",
  });
}

/** A whole number of 0 or more. */
export function nonNegativeInt(): z.ZodInt {
  return z.int({ error: "expected a whole number of 0 or more" }).min(0, {
    error: "expected a whole number of 0 or more",
  });
}

/** A string of at least one character. */
export function nonEmptyString(): z.ZodString {
  return z.string().min(1, { error: "expected a non-empty string" });
}

/**
 * A path inside the repository or the agent folder, as written: relative and
 * without `..` (symlinks are followed and checked where the path is used).
 */
export function insidePath(): z.ZodString {
  return nonEmptyString().refine(
    (path) => !/^([/\\~]|[A-Za-z]:)/.test(path) && !path.split(/[/\\]/).includes(".."),
    { error: 'expected a relative path that stays inside (no absolute path, no "..")' },
  );
}
