/**
 * The run history: runs, their segments (start and resumes), iterations,
 * finish records, learnings (deduplicated, full-text indexed, and with an
 * embedder searched by meaning too) and skills, in one embedded SQLite
 * database per repository.
 *
 * The loop talks to the {@linkcode RunStore} interface, so a server database
 * can replace SQLite for teams later.
 *
 * @module
 */

export * from "./records.ts";
export { MIGRATIONS } from "./migrations.ts";
export { ftsQuery, fuseRankings, normalizeLearning } from "./learnings.ts";
export { DEFAULT_STORE_PATH, SqliteStore, type StoreOptions } from "./sqlite_store.ts";
export type { VectorMatch, VectorOptions } from "./vectors.ts";
