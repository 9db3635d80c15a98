/**
 * Claude Code applies the `env` of its project settings
 * (`.claude/settings.json`, `.claude/settings.local.json`) over its own
 * environment. A settings file that came with the repository (git tracks
 * it) may therefore not point Claude Code at another API host, a proxy or a
 * certificate store: the runner's key would go there. Files the user made
 * (untracked) are the user's own.
 *
 * @module
 */

import { join } from "node:path";
import { UsageError } from "../support/errors.ts";
import type { GitRepo } from "../git/repo.ts";
import { type KeyRouteOptions, settingsEnvProblem } from "./key_routes.ts";

/** The project settings files of each setting source. */
const FILES: Record<string, string> = {
  project: ".claude/settings.json",
  local: ".claude/settings.local.json",
};

/**
 * Refuse a repository's Claude Code settings that would route the runner's key.
 *
 * @param repo The repository the agent works in; nothing is checked outside one.
 * @param options The setting sources Claude Code reads, and the user's environment.
 * @throws {UsageError} One line naming the file, the variable and what to do.
 */
export async function checkSettingsRoutes(
  repo: GitRepo | undefined,
  options: KeyRouteOptions & { settingSources: readonly string[] },
): Promise<void> {
  if (!repo) return;
  for (const source of options.settingSources) {
    const file = FILES[source];
    if (!file) continue;
    const text = await Deno.readTextFile(join(repo.root, file)).catch(() => undefined);
    if (text === undefined) continue;
    const tracked = await repo.exec(["ls-files", "--error-unmatch", "--", file]);
    if (tracked.code !== 0) continue;
    let env: unknown;
    try {
      env = (JSON.parse(text) as { env?: unknown }).env;
    } catch {
      continue;
    }
    if (!env || typeof env !== "object") continue;
    for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
      if (typeof value !== "string") continue;
      const problem = settingsEnvProblem(name, value, options);
      if (problem) {
        throw new UsageError(
          `Refusing "${file}" (it came with the repository): its "env.${name}": ${problem}; or leave "${source}" out of "behavior.settingSources"`,
        );
      }
    }
  }
}
