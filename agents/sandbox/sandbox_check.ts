/**
 * The run's word on the sandbox, before anything is written: `required`
 * without one is a usage error, `auto` without one says so in one line.
 *
 * @module
 */

import type { NetworkSetting, SandboxMode } from "../definition/definition_types.ts";
import { UsageError } from "../support/errors.ts";
import { bubblewrapAvailability } from "./bubblewrap.ts";
import { type HostRule, modelHosts, networkAccess, socatPath } from "./network.ts";

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

/**
 * What the run's sandboxed sessions reach of the network, in one line for
 * the report; a network left open although the setting asks for an
 * allowlist is said at the start too.
 *
 * @param network `verify.network`.
 * @param backends The backends of the run's sessions (`claude`, `codex`, an ACP command's `acp`), with their environment and folder.
 * @param stderr Where the line for a network left open goes.
 * @returns The line: `model API only (api.anthropic.com:443)`, `open`, ...
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeNetwork } from "./sandbox_check.ts";
 *
 * const line = describeNetwork("model", [{ name: "claude", env: {}, cwd: "/" }]);
 * assert.match(line, /^model API only \(api\.anthropic\.com:443/);
 * assert.equal(describeNetwork("open", [{ name: "claude", env: {}, cwd: "/" }]), "open (verify.network)");
 * ```
 */
export function describeNetwork(
  network: NetworkSetting,
  backends: Array<{ name: string; env: Record<string, string | undefined>; cwd: string }>,
  stderr?: (text: string) => void,
): string {
  if (network === "open") return "open (verify.network)";
  const open = (why: string) => {
    stderr?.(`[finishline] network: open for agent sessions: ${why}\n`);
    return `open: ${why}`;
  };
  if (!socatPath()) return open("socat is not installed (the allowlist's bridges need it)");
  const allowed: HostRule[] = [];
  for (const backend of backends) {
    const access = networkAccess(network, modelHosts(backend.name, backend.env, backend.cwd));
    if (access.open) {
      return open(
        `the model's host of ${backend.name} is not known: list it in verify.network.allow`,
      );
    }
    allowed.push(...access.allow);
  }
  const hosts = [
    ...new Set(allowed.map((rule) => `${rule.host}${rule.port ? `:${rule.port}` : ""}`)),
  ];
  const what = typeof network === "object" ? "model API and listed hosts" : "model API only";
  return `${what} (${hosts.join(", ")})`;
}
