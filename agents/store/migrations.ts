/**
 * The schema of the run history: forward migrations, applied in order, each
 * in its own transaction, safe when several processes open one file at once.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { transaction } from "./_database.ts";
import { normalizeLearning, tagsJson } from "./learnings.ts";

/** Forward migrations; `PRAGMA user_version` is the index of the last one applied. */
export const MIGRATIONS: readonly string[] = [
  // 1: runs and iterations
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY,
     agent TEXT NOT NULL,
     handler TEXT NOT NULL,
     argv TEXT NOT NULL,
     cwd TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'running',
     reason TEXT,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     baseline TEXT,
     branch TEXT,
     max_iterations INTEGER NOT NULL,
     cost_usd REAL NOT NULL DEFAULT 0,
     tokens_input INTEGER NOT NULL DEFAULT 0,
     tokens_output INTEGER NOT NULL DEFAULT 0,
     turns INTEGER NOT NULL DEFAULT 0,
     iterations INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX runs_agent_started ON runs (agent, started_at);
   CREATE TABLE iterations (
     run_id TEXT NOT NULL REFERENCES runs (id),
     number INTEGER NOT NULL,
     session_id TEXT,
     prompt_digest TEXT NOT NULL,
     summary TEXT NOT NULL,
     cost_usd REAL NOT NULL,
     tokens_input INTEGER NOT NULL,
     tokens_output INTEGER NOT NULL,
     duration_ms INTEGER NOT NULL,
     commits INTEGER,
     files_changed INTEGER NOT NULL,
     verdict TEXT NOT NULL,
     recorded_at TEXT NOT NULL,
     PRIMARY KEY (run_id, number)
   );`,
  // 2: the finish workflow: finish records, learnings (FTS5), skills, cleanup facts
  `ALTER TABLE runs ADD COLUMN cleanup TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE finish (
     run_id TEXT PRIMARY KEY REFERENCES runs (id),
     steps TEXT NOT NULL DEFAULT '[]',
     summary TEXT,
     error TEXT,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE learnings (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     run_id TEXT NOT NULL REFERENCES runs (id),
     source TEXT NOT NULL,
     text TEXT NOT NULL,
     technique TEXT NOT NULL DEFAULT '',
     applicability TEXT NOT NULL DEFAULT '',
     tags TEXT NOT NULL DEFAULT '',
     created_at TEXT NOT NULL
   );
   CREATE VIRTUAL TABLE learnings_fts USING fts5 (
     text, technique, applicability, tags, content = 'learnings', content_rowid = 'id'
   );
   CREATE TRIGGER learnings_ai AFTER INSERT ON learnings BEGIN
     INSERT INTO learnings_fts (rowid, text, technique, applicability, tags)
     VALUES (new.id, new.text, new.technique, new.applicability, new.tags);
   END;
   CREATE TRIGGER learnings_ad AFTER DELETE ON learnings BEGIN
     INSERT INTO learnings_fts (learnings_fts, rowid, text, technique, applicability, tags)
     VALUES ('delete', old.id, old.text, old.technique, old.applicability, old.tags);
   END;
   CREATE TABLE skills (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     run_id TEXT NOT NULL REFERENCES runs (id),
     name TEXT NOT NULL,
     kind TEXT NOT NULL,
     status TEXT NOT NULL,
     created_at TEXT NOT NULL
   );`,
  // 3: the process that runs a run, for display (its lock says whether it is still going)
  `ALTER TABLE runs ADD COLUMN pid INTEGER;`,
  // 4: one row per distinct learning (same text after normalisation), seen by one or more
  // runs; the duplicates earlier versions stored are merged into their oldest row.
  `ALTER TABLE learnings ADD COLUMN norm TEXT NOT NULL DEFAULT '';
   CREATE TABLE learning_sightings (
     learning_id INTEGER NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
     run_id TEXT NOT NULL REFERENCES runs (id),
     source TEXT NOT NULL,
     seen_at TEXT NOT NULL,
     PRIMARY KEY (learning_id, run_id, source)
   );
   CREATE INDEX learning_sightings_run ON learning_sightings (run_id, source);
   UPDATE learnings SET norm = finishline_normalize_learning(text);
   INSERT OR IGNORE INTO learning_sightings (learning_id, run_id, source, seen_at)
     SELECT (SELECT min(keeper.id) FROM learnings keeper WHERE keeper.norm = l.norm),
       l.run_id, l.source, l.created_at
     FROM learnings l ORDER BY l.id;
   DELETE FROM learnings WHERE id NOT IN (SELECT min(id) FROM learnings GROUP BY norm);
   CREATE UNIQUE INDEX learnings_norm ON learnings (norm);
   CREATE TRIGGER learnings_au AFTER UPDATE ON learnings BEGIN
     INSERT INTO learnings_fts (learnings_fts, rowid, text, technique, applicability, tags)
     VALUES ('delete', old.id, old.text, old.technique, old.applicability, old.tags);
     INSERT INTO learnings_fts (rowid, text, technique, applicability, tags)
     VALUES (new.id, new.text, new.technique, new.applicability, new.tags);
   END;`,
  // 5: the segments of a run: its first start and each resume, with how each ended
  `CREATE TABLE run_segments (
     run_id TEXT NOT NULL REFERENCES runs (id),
     number INTEGER NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     status TEXT NOT NULL DEFAULT 'running',
     reason TEXT,
     after_iteration INTEGER NOT NULL DEFAULT 0,
     duration_ms INTEGER,
     cost_usd REAL,
     log_file TEXT,
     report_file TEXT,
     PRIMARY KEY (run_id, number)
   );`,
  // 6: learning vectors for hybrid search and deduplication by meaning: float32 blobs, one
  // per learning and embedder, compared with sqlite-vec when it loads (see vectors.ts)
  `CREATE TABLE learning_vectors (
     model TEXT NOT NULL,
     learning_id INTEGER NOT NULL REFERENCES learnings (id) ON DELETE CASCADE,
     vector BLOB NOT NULL,
     PRIMARY KEY (model, learning_id)
   );
   CREATE INDEX learning_vectors_learning ON learning_vectors (learning_id);`,
  // 7: the finish workflow's model steps: skills with a description and a lifecycle
  // (proposed, implemented, reviewed), kinds used, missing and update; the next actions
  // and what the model steps cost; learning tags as a JSON list, not space-joined.
  `ALTER TABLE skills ADD COLUMN description TEXT NOT NULL DEFAULT '';
   ALTER TABLE skills ADD COLUMN lifecycle TEXT NOT NULL DEFAULT 'proposed';
   UPDATE skills SET lifecycle = CASE status WHEN 'used' THEN 'implemented' ELSE 'proposed' END,
     kind = CASE kind WHEN 'needed' THEN 'missing' ELSE kind END;
   ALTER TABLE skills DROP COLUMN status;
   ALTER TABLE finish ADD COLUMN next_actions TEXT NOT NULL DEFAULT '[]';
   ALTER TABLE finish ADD COLUMN usage TEXT NOT NULL DEFAULT '{}';
   UPDATE learnings SET tags = finishline_tags_json(tags);`,
  // 8: a run's success metrics (false abort, rescues, probes), written at its end; '{}' before
  `ALTER TABLE runs ADD COLUMN metrics TEXT NOT NULL DEFAULT '{}';`,
];

/**
 * The schema version of a database: how many migrations it has applied.
 *
 * @param db The database.
 * @returns Its `PRAGMA user_version`.
 */
export function schemaVersion(db: DatabaseSync): number {
  return Number(
    (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
  );
}

/**
 * Apply the migrations a database lacks; refuse a database newer than this code.
 *
 * @param db The database.
 */
export function migrate(db: DatabaseSync): void {
  // Migration 4 merges learnings that are the same after normalisation, as the store does.
  db.function(
    "finishline_normalize_learning",
    { deterministic: true },
    (text) => normalizeLearning(String(text)),
  );
  // Migration 6 turns space-joined tags into JSON lists.
  db.function("finishline_tags_json", { deterministic: true }, (text) => tagsJson(String(text)));
  const version = schemaVersion(db);
  if (version > MIGRATIONS.length) {
    throw new Error(
      `The run history database has schema version ${version}, newer than this finishline knows (${MIGRATIONS.length}): upgrade finishline`,
    );
  }
  for (let index = version; index < MIGRATIONS.length; index++) {
    transaction(db, () => {
      // Another process may have migrated while this one waited for the lock.
      if (schemaVersion(db) > index) return;
      db.exec(MIGRATIONS[index]);
      db.exec(`PRAGMA user_version = ${index + 1}`);
    });
  }
}
