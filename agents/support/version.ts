/**
 * finishline's version, read from deno.json: the one place it is written.
 *
 * @module
 */

import config from "../../deno.json" with { type: "json" };

/**
 * finishline's version, deno.json's `version` field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { VERSION } from "@finishline/agents/iterator";
 *
 * assert.match(VERSION, /^\d+\.\d+\.\d+/);
 * ```
 */
export const VERSION: string = config.version;
