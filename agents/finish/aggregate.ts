/**
 * What the run recorded, aggregated: the run summary and the skills the
 * agent reported. The finish workflow's model steps start from these, and
 * fall back to them.
 *
 * @module
 */

import type { IterationSummary } from "../record/iteration.ts";
import type { SkillRecord, StoredRun } from "../store/mod.ts";

/**
 * The run summary as the run recorded it: the iterations and the complete_task reports.
 *
 * @param run The stored run.
 * @param summaries Its iterations' summaries.
 * @param outcome How it ended.
 * @returns The summary record.
 */
export function runSummary(
  run: StoredRun,
  summaries: IterationSummary[],
  outcome: { status: string; reason: string },
): Record<string, unknown> {
  const reports = summaries.flatMap((summary) =>
    summary.completeTask ? [summary.completeTask] : []
  );
  const last = reports.at(-1);
  const files = new Set<string>();
  for (const report of reports) for (const file of report.files_modified ?? []) files.add(file);
  return {
    runId: run.id,
    agent: run.agent,
    handler: run.handler,
    task: last?.original_request_summary ?? null,
    outcome: outcome.status,
    reason: outcome.reason,
    iterations: summaries.length,
    costUsd: summaries.reduce((total, summary) => total + summary.costUsd, 0),
    commits: summaries.reduce((total, summary) => total + (summary.git?.newCommits ?? 0), 0),
    keySteps: summaries.map((summary) =>
      `${summary.iteration}: ${
        (summary.completeTask?.summary ?? summary.assistantResponses.at(-1) ?? "(nothing reported)")
          .slice(0, 300)
      }`
    ),
    filesChanged: [...files],
    remainingWork: last?.status === "success" ? null : last?.remaining_work ?? null,
    // Every iteration's, not only the last one's: an early "watch CI" is still to do.
    nextSteps: [
      ...new Set(reports.map((report) => report.next_steps?.trim() ?? "").filter(Boolean)),
    ],
  };
}

/**
 * The skills the agent reported: used (`implemented`), and wished for
 * (`missing`, `proposed`), each once.
 *
 * @param summaries The run's iterations.
 * @returns The skill records, without descriptions.
 */
export function assessSkills(summaries: IterationSummary[]): SkillRecord[] {
  const used = new Set<string>();
  const needed = new Set<string>();
  for (const summary of summaries) {
    for (const skill of summary.completeTask?.skills_used ?? []) used.add(skill.trim());
    for (const skill of summary.completeTask?.new_skills_needed ?? []) needed.add(skill.trim());
  }
  return [
    ...[...used].filter(Boolean).map((name): SkillRecord => ({
      name,
      kind: "used",
      description: "",
      lifecycle: "implemented",
    })),
    ...[...needed].filter(Boolean).map((name): SkillRecord => ({
      name,
      kind: "missing",
      description: "",
      lifecycle: "proposed",
    })),
  ];
}
