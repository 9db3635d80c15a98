/**
 * What the independent sessions of a run (the verifier, the reviewer) cost,
 * counted apart from the worker's.
 *
 * @module
 */

/** What independent sessions cost, for the report: apart from the worker's. */
export interface IndependentCost {
  /** Sessions started. */
  sessions: number;
  /** Model requests (assistant messages). */
  requests: number;
  /** What they cost, in USD, as the agent reported it. */
  costUsd: number;
  /** Input and output tokens of their requests. */
  tokens: { input: number; output: number };
  /** Wall time of the sessions, in milliseconds. */
  durationMs: number;
}

/**
 * An empty account.
 *
 * @returns Zero sessions, requests, cost, tokens and time.
 */
export function noCost(): IndependentCost {
  return { sessions: 0, requests: 0, costUsd: 0, tokens: { input: 0, output: 0 }, durationMs: 0 };
}
