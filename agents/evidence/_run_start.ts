/**
 * The repository as the run found it, and what a claim did to it since: the
 * uncommitted files already there (not the agent's), the dependency folders
 * listed and hashed, the files the agent left uncommitted, and how each
 * dependency folder reaches the clean copy of a claim (linked as found, or
 * installed from the manifest the agent changed on purpose).
 *
 * @module
 */

import type { GitRepo } from "../git/repo.ts";
import {
  changedOnPurpose,
  DEPENDENCY_FOLDERS,
  dependencyEntries,
  folderOf,
} from "./copy/dependency_folders.ts";
import { DependencySnapshot } from "./copy/dependency_tree.ts";
import { listPaths } from "./_feedback.ts";
import type { FolderPlan, GateState, RunStart } from "./_gate_state.ts";

/**
 * Record the repository as the run finds it, once: its uncommitted files
 * and the dependency folders, listed and hashed (see
 * `RepoChecksChecker.recordStart`).
 */
export async function recordStart(
  state: GateState,
  repo: GitRepo,
  options: { exclude?: string[] } = {},
): Promise<void> {
  state.start ??= (async () => {
    const [dirt, head] = await Promise.all([repo.snapshot(options.exclude), repo.head()]);
    const entries = head ? await dependencyEntries(repo, head) : [];
    return {
      dirt: dirt ?? new Map(),
      dependencies: await DependencySnapshot.take(repo.root, entries),
    };
  })();
  await state.start;
}

/** How each dependency folder reaches the clean copy of `head`, and what the agent changed in it. */
export async function planFolders(
  repo: GitRepo,
  start: RunStart,
  base: string | undefined,
  head: string,
): Promise<FolderPlan[]> {
  const onPurpose = base ? await changedOnPurpose(repo, base, head) : new Map();
  const changes = await start.dependencies.changes(repo.root);
  const plans: FolderPlan[] = [];
  for (const folder of DEPENDENCY_FOLDERS) {
    const entries = start.dependencies.entries.filter((entry) => folderOf(entry) === folder);
    const linked = entries.length > 0;
    const changedFiles: string[] = onPurpose.get(folder.dir) ?? [];
    const install = folder.installable && changedFiles.length > 0 &&
      (linked || folder.dir === "node_modules");
    if (!linked && !install) continue;
    const within = (line: string) =>
      entries.some((entry) => line.startsWith(`${entry}/`) || line.startsWith(`${entry} (`));
    const listed = await repo.exec(["ls-tree", head, "--", ...folder.manifests]);
    plans.push({
      dir: folder.dir,
      install,
      changedFiles,
      changes: changes.filter(within),
      key: listed.stdout,
    });
  }
  return plans;
}

/** Files the agent changed and did not commit: uncommitted now, and not as they were at the start. */
export async function uncommittedChanges(
  repo: GitRepo,
  dirt: Map<string, string>,
): Promise<string[]> {
  const now = await repo.snapshot();
  if (!now) return [];
  return [...now].filter(([file, signature]) => dirt.get(file) !== signature).map(([file]) => file);
}

/** What the feedback says when the agent changed a file of a dependency folder. */
export function dependencyFeedback(changes: string[], plans: FolderPlan[]): string {
  const shown = changes.slice(0, 10).join(", ");
  const more = changes.length > 10 ? ` and ${changes.length - 10} more` : "";
  const notes = plans.flatMap((plan) => pythonNote(plan) ?? []);
  return `You changed ${shown}${more}; dependency folders are not yours to change. finishline compares every file of the ones it found at the start with how they were then, and its clean copy has them as they were then, so the checks did not run. Undo the changes (reinstall the dependencies as they were), or, to change the dependencies on purpose, commit the change to the manifest and lock file (package.json and package-lock.json, for example): finishline then installs from them${
    notes.length > 0 ? `\n\n${notes.join("\n")}` : ""
  }`;
}

/** The note for a Python or vendor folder whose requirements changed: it cannot be installed here. */
export function pythonNote(plan: FolderPlan): string | undefined {
  if (plan.install || plan.changedFiles.length === 0) return undefined;
  return `You changed ${
    listPaths(plan.changedFiles)
  }, but finishline cannot install ${plan.dir} offline: the checks run with the ${plan.dir} found at the start`;
}
