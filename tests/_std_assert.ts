/**
 * The one assertion of `@std/assert` that the completion handler design's
 * test uses, from node's strict assert: the design's test runs with only its
 * import path changed, and no JSR package is added for it.
 *
 * @module
 */

export { deepStrictEqual as assertEquals } from "node:assert/strict";
