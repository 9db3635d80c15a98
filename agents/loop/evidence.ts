/**
 * The evidence phase: what git says about the iteration — the commit it
 * started from, the new commits and the changed files — taken again whenever
 * the agent or a check may have changed the repository.
 *
 * @module
 */

import type { IterationSummary } from "../record/iteration.ts";
import type { RepoState } from "../git/repo.ts";
import type { RunState } from "./state.ts";

/** The repository as an iteration saw it. */
export class IterationRepo {
  readonly #state: RunState;
  readonly #summary: IterationSummary;
  /** The commit the iteration started from. */
  readonly baseline: string | null;
  /** The fingerprint of the tree when it started. */
  readonly fingerprintBefore: string | null;
  /** The latest observation, once taken. */
  after: RepoState | undefined;

  /**
   * Track the repository for an iteration.
   *
   * @param state The run.
   * @param summary The iteration's summary, whose `git` field it keeps current.
   * @param start The repository when the iteration started.
   */
  constructor(state: RunState, summary: IterationSummary, start: RepoState | undefined) {
    this.#state = state;
    this.#summary = summary;
    this.baseline = start?.head ?? null;
    this.fingerprintBefore = start?.fingerprint ?? null;
  }

  /**
   * Whether the run has a repository at all.
   *
   * @returns True inside one.
   */
  get present(): boolean {
    return this.#state.options.git !== undefined;
  }

  /**
   * Look at the repository again and update the summary's git evidence.
   *
   * @returns Resolves once observed (at once outside a repository).
   */
  async refresh(): Promise<void> {
    const repo = this.#state.options.git;
    if (!repo) return;
    this.after = await repo.observe(this.baseline, this.#state.options.ignorePaths ?? []);
    this.#summary.git = {
      baseline: this.baseline ?? undefined,
      head: this.after.head ?? undefined,
      newCommits: this.after.newCommits,
      staged: this.after.status?.staged ?? [],
      unstaged: this.after.status?.unstaged ?? [],
    };
  }

  /**
   * Whether the tree changed since the iteration started (null when unknown).
   *
   * @returns True, false or null.
   */
  filesChanged(): boolean | null {
    const after = this.after?.fingerprint ?? null;
    return this.fingerprintBefore === null || after === null
      ? null
      : this.fingerprintBefore !== after;
  }
}
