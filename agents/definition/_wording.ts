/**
 * How the messages about a definition quote values, shared by the schema, the
 * parser and the loader so that every message reads alike.
 *
 * @module
 */

/** Quotes a value the way every message about a definition does. */
export function quote(value: unknown): string {
  return JSON.stringify(value);
}

/** Words a list of allowed values: the value alone, or `one of "a", "b"`. */
export function oneOf(values: readonly unknown[]): string {
  return values.length === 1 ? quote(values[0]) : `one of ${values.map(quote).join(", ")}`;
}
