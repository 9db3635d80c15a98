/**
 * The run's word on the sandbox, before anything is written: `required`
 * without one is a usage error, `auto` without one says so in one line.
 *
 * @module
 */

import type { SandboxMode } from "../definition/definition_types.ts";
import { UsageError } from "../support/errors.ts";
import { bubblewrapAvailability } from "./bubblewrap.ts";

/**
 * Whether the run's agent sessions are sandboxed: the reason when they are
 * not, undefined when they are.
 *
 * @param mode `verify.sandbox`.
 * @param stderr Where the one line for `auto` without a sandbox goes.
 * @returns Why sessions run unsandboxed, or undefined.
 * @throws {UsageError} With `required` and no sandbox (exit 2).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkSandbox } from "./sandbox_check.ts";
 *
 * assert.equal(checkSandbox("off"), 'verify.sandbox is "off"');
 * ```
 */
export function checkSandbox(
  mode: SandboxMode,
  stderr?: (text: string) => void,
): string | undefined {
  if (mode === "off") return 'verify.sandbox is "off"';
  const found = bubblewrapAvailability();
  if (found.available) return undefined;
  if (mode === "required") {
    throw new UsageError(
      `Cannot run: "verify.sandbox" is "required" and ${found.reason}: install bubblewrap, allow unprivileged user namespaces, or set "verify.sandbox" to "auto"`,
    );
  }
  stderr?.(
    `[finishline] no sandbox (${found.reason}): agent sessions run unsandboxed, with your home and /tmp in reach\n`,
  );
  return found.reason;
}
