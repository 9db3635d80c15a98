/**
 * The built-in agent with one check of its own, for end-to-end tests whose
 * repository has none: with no check a claim ends unverified (exit 7) and
 * finishline closes nothing, so a test about what happens after a verified
 * claim (an issue closed, a pull request) needs one.
 *
 * @module
 */

import { parse } from "jsonc-parser";
import { commitAgent } from "../_helpers.ts";

/**
 * Commit `.agent/iterator/agent.json`: the built-in agent (so every setting
 * stays the default) with `verify.checks` holding one command.
 *
 * @param repo The repository.
 * @param command The check, run in the clean copy's folder.
 */
export async function checkedDefaultAgent(repo: string, command: string): Promise<void> {
  const builtin = new URL("../../.agent/iterator/agent.json", import.meta.url);
  const definition = parse(await Deno.readTextFile(builtin)) as Record<string, unknown>;
  delete definition.$schema;
  definition.verify = { checks: [{ type: "command", name: "the work", command }] };
  await commitAgent(repo, definition as { name: string });
}

/**
 * Commit `.agent/iterator/agent.json`: the built-in agent with its sessions
 * unsandboxed, for runs whose agent calls the scripted `gh`: its GitHub is a
 * folder of the host's, which the sandbox hides (the real gh reaches GitHub
 * over the network).
 *
 * @param repo The repository.
 */
export async function unsandboxedDefaultAgent(repo: string): Promise<void> {
  const builtin = new URL("../../.agent/iterator/agent.json", import.meta.url);
  const definition = parse(await Deno.readTextFile(builtin)) as Record<string, unknown>;
  delete definition.$schema;
  definition.verify = { ...(definition.verify as object ?? {}), sandbox: "off" };
  await commitAgent(repo, definition as { name: string });
}
