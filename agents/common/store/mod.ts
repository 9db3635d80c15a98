/**
 * The run history: runs, their segments (start and resumes), iterations,
 * finish records, learnings (deduplicated, full-text indexed) and skills,
 * in one embedded SQLite database per repository.
 *
 * The loop talks to the {@linkcode RunStore} interface, so a server database
 * can replace SQLite for teams later.
 *
 * @module
 */

export * from "./types.ts";
export { MIGRATIONS } from "./migrations.ts";
export { ftsQuery, normalizeLearning } from "./learnings.ts";
export { DEFAULT_STORE_PATH, SqliteStore } from "./sqlite_store.ts";
