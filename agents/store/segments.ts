/**
 * The segments of a run: its start and each resume, in one process each,
 * with how each ended, its time, cost and log. A run's full time is the sum
 * of its segments', not the span from its start to its end.
 *
 * @module
 */

import type { SQLInputValue } from "node:sqlite";
import { type StoreDatabase, transaction } from "./_database.ts";
import type { NewSegment, RunSegment, SegmentEnd } from "./records.ts";

/** The reason recorded for a segment whose process stopped without recording its end. */
export const KILLED_REASON = "the process stopped without recording its end (killed, or crashed)";

/** The `run_segments` table of an open store. */
export class SegmentRecords {
  #store: StoreDatabase;

  /**
   * Work on the table of an open store.
   *
   * @param store The connection and redactor.
   */
  constructor(store: StoreDatabase) {
    this.#store = store;
  }

  /**
   * Record the start of a segment. A resume first closes what came before
   * it: a segment left open by a process that died becomes `killed`, and a run
   * recorded before segments were gets its earlier part as segment 1.
   *
   * @param runId The run.
   * @param segment When it started, its log and report, whether it resumes.
   * @returns Its number.
   */
  startSegment(runId: string, segment: NewSegment): number {
    const { db } = this.#store;
    let number = 0;
    transaction(db, () => {
      const last = this.segments(runId).at(-1);
      if (segment.resumed && !last) this.#backfill(runId);
      if (segment.resumed && last?.status === "running") {
        this.#closeKilled(last, segment.lastHeardAt);
      }
      number = (last?.number ?? (segment.resumed ? 1 : 0)) + 1;
      const after = db.prepare(`SELECT count(*) AS n FROM iterations WHERE run_id = ?`).get(runId);
      db.prepare(
        `INSERT INTO run_segments (run_id, number, started_at, after_iteration, log_file, report_file)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(
        runId,
        number,
        segment.startedAt,
        Number(after?.n ?? 0),
        segment.logFile ?? null,
        segment.reportFile ?? null,
      );
    });
    return number;
  }

  /**
   * Record how a segment ended, now.
   *
   * @param runId The run.
   * @param end The segment's number, status, reason, time and cost.
   */
  endSegment(runId: string, end: SegmentEnd): void {
    const { db, redactor } = this.#store;
    transaction(db, () => {
      db.prepare(
        `UPDATE run_segments SET ended_at = ?, status = ?, reason = ?, duration_ms = ?, cost_usd = ?
         WHERE run_id = ? AND number = ?`,
      ).run(
        new Date().toISOString(),
        end.status,
        end.reason === null ? null : redactor.redact(end.reason),
        Math.round(end.durationMs),
        end.costUsd,
        runId,
        end.number,
      );
    });
  }

  /**
   * A run's segments, in order.
   *
   * @param runId The run.
   * @returns The segments (none for a run recorded before segments were, until it is resumed).
   */
  segments(runId: string): RunSegment[] {
    return this.#store.db.prepare(`SELECT * FROM run_segments WHERE run_id = ? ORDER BY number`)
      .all(runId).map(toSegment);
  }

  /** A run recorded before segments were: its start up to now is segment 1. */
  #backfill(runId: string): void {
    const { db } = this.#store;
    const run = db.prepare(`SELECT * FROM runs WHERE id = ?`).get(runId);
    if (!run) return;
    const startedAt = String(run.started_at);
    const died = run.status === "running" || run.ended_at === null;
    const endedAt = died ? this.#lastRecorded(runId, 0) ?? startedAt : String(run.ended_at);
    db.prepare(
      `INSERT INTO run_segments (run_id, number, started_at, ended_at, status, reason, after_iteration,
         duration_ms, cost_usd)
       VALUES (?, 1, ?, ?, ?, ?, 0, ?, ?)`,
    ).run(
      runId,
      startedAt,
      endedAt,
      died ? "killed" : String(run.status),
      died ? KILLED_REASON : run.reason,
      span(startedAt, endedAt),
      Number(run.cost_usd),
    );
  }

  /** A segment whose process died: it ended when last heard of, and cost what it recorded. */
  #closeKilled(segment: RunSegment, lastHeardAt: string | undefined): void {
    const { db } = this.#store;
    const recorded = this.#lastRecorded(segment.runId, segment.afterIteration);
    const endedAt = [lastHeardAt, recorded, segment.startedAt]
      .filter((time): time is string => time !== undefined)
      .sort().at(-1)!;
    const cost = db.prepare(
      `SELECT coalesce(sum(cost_usd), 0) AS cost FROM iterations WHERE run_id = ? AND number > ?`,
    ).get(segment.runId, segment.afterIteration);
    db.prepare(
      `UPDATE run_segments SET ended_at = ?, status = 'killed', reason = ?, duration_ms = ?, cost_usd = ?
       WHERE run_id = ? AND number = ?`,
    ).run(
      endedAt,
      KILLED_REASON,
      span(segment.startedAt, endedAt),
      Number(cost?.cost ?? 0),
      segment.runId,
      segment.number,
    );
  }

  /** When the last iteration after `after` was recorded. */
  #lastRecorded(runId: string, after: number): string | undefined {
    const row = this.#store.db.prepare(
      `SELECT max(recorded_at) AS at FROM iterations WHERE run_id = ? AND number > ?`,
    ).get(runId, after);
    return row?.at ? String(row.at) : undefined;
  }
}

function span(from: string, to: string): number {
  return Math.max(0, Date.parse(to) - Date.parse(from));
}

function toSegment(row: Record<string, SQLInputValue>): RunSegment {
  const text = (value: SQLInputValue) => value === null ? null : String(value);
  return {
    runId: String(row.run_id),
    number: Number(row.number),
    startedAt: String(row.started_at),
    endedAt: text(row.ended_at),
    status: String(row.status),
    reason: text(row.reason),
    afterIteration: Number(row.after_iteration),
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    logFile: text(row.log_file),
    reportFile: text(row.report_file),
  };
}
