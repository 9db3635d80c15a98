/**
 * One value parser per kind of flag value: each turns the raw text of a flag
 * into a typed value, or throws a one-line {@linkcode UsageError} naming the
 * flag. Private to the iterator's command line.
 *
 * @module
 */

import type { ParameterSpec } from "../../definition/definition_types.ts";
import { UsageError } from "../../support/errors.ts";
import { BACKEND_NAMES } from "../../backends/presets.ts";

/** The kinds of flag values, each read by one parser. */
export type FlagKind =
  | "boolean"
  | "text"
  | "nonEmpty"
  | "positiveInteger"
  | "positiveNumber"
  | "seconds"
  | "repo"
  | "permissionMode"
  | "backend"
  | "issueList";

/** A permission mode a flag may set (bypass has its own flag). */
export type FlagPermissionMode = "default" | "acceptEdits" | "plan";

/** What the command line gives for a flag: its text, `true` for a bare flag, or nothing. */
export type RawValue = string | boolean | undefined;

/** A flag as the parsers need it: its name and what its value is. */
export interface ValueSpec {
  /** The long name, without dashes. */
  name: string;
  /** The kind of its value. */
  kind: FlagKind;
  /** What the value is, for messages ("an issue number"). */
  what?: string;
}

/** The permission modes a flag may set. */
const PERMISSION_MODES: readonly FlagPermissionMode[] = ["default", "acceptEdits", "plan"];

/**
 * The values a kind of flag value takes, when they are a fixed set (the
 * shell completions offer them).
 *
 * @param kind The kind.
 * @returns The values, or undefined for a kind of open values.
 */
export function kindValues(kind: FlagKind): readonly string[] | undefined {
  if (kind === "backend") return BACKEND_NAMES;
  if (kind === "permissionMode") return PERMISSION_MODES;
  return undefined;
}

const quoted = (values: readonly string[]) => {
  const items = values.map((value) => `"${value}"`);
  return `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
};

/** What each kind of value is, when the flag does not say more. */
const KIND_TEXT: Record<FlagKind, string> = {
  boolean: "",
  text: "a value",
  nonEmpty: "a value",
  positiveInteger: "a whole number of 1 or more",
  positiveNumber: "a number above 0",
  seconds: "a number of seconds (0 or more)",
  repo: 'owner/name (e.g. "octo/demo")',
  permissionMode: quoted(PERMISSION_MODES),
  backend: quoted(BACKEND_NAMES),
  issueList: 'issue numbers separated by commas (e.g. "4,7,9")',
};

/**
 * The message for a flag given without its value.
 *
 * @param flag The flag with dashes.
 * @param what What the value is.
 * @returns A one-line usage error.
 */
export function needsValue(flag: string, what: string | undefined): UsageError {
  return new UsageError(`Flag "${flag}" needs a value${what ? `: ${what}` : ""}`);
}

/**
 * What a flag's value is, for "needs a value" messages.
 *
 * @param spec The flag.
 * @returns A short description.
 */
export function valueText(spec: ValueSpec): string {
  return spec.what ?? KIND_TEXT[spec.kind];
}

/**
 * Read one flag's raw value by its kind.
 *
 * @param spec The flag.
 * @param raw What the command line gave.
 * @returns The typed value (`undefined` when the flag was not given).
 * @throws {UsageError} For a value of the wrong shape.
 */
export function readValue(spec: ValueSpec, raw: RawValue): unknown {
  const flag = `--${spec.name}`;
  if (spec.kind === "boolean") return raw === true;
  if (raw === undefined) return undefined;
  if (typeof raw !== "string") throw needsValue(flag, valueText(spec));
  switch (spec.kind) {
    case "text":
      return raw;
    case "nonEmpty":
      return nonEmpty(raw, flag, valueText(spec));
    case "positiveInteger":
      return positiveInteger(raw, flag, spec.what);
    case "positiveNumber":
      return positiveNumber(raw, flag, valueText(spec));
    case "seconds":
      return seconds(raw, flag);
    case "repo":
      return repository(raw, flag);
    case "permissionMode":
      return permissionMode(raw, flag);
    case "backend":
      return backend(raw, flag);
    case "issueList":
      return issueList(raw, flag);
  }
}

function issueList(raw: string, flag: string): number[] {
  const items = raw.split(",").map((item) => item.trim().replace(/^#/, ""));
  const bad = items.find((item) => !/^\d+$/.test(item) || Number(item) < 1);
  if (bad !== undefined || items.length === 0) {
    throw new UsageError(
      `Flag "${flag}" expects ${KIND_TEXT.issueList}, got "${raw}"`,
    );
  }
  const numbers = items.map(Number);
  const repeated = numbers.find((number, index) => numbers.indexOf(number) !== index);
  if (repeated !== undefined) {
    throw new UsageError(`Flag "${flag}" names issue ${repeated} twice, in "${raw}"`);
  }
  return numbers;
}

function nonEmpty(raw: string, flag: string, what: string): string {
  if (raw.trim() === "") throw new UsageError(`Flag "${flag}" expects ${what}, got an empty value`);
  return raw;
}

function positiveInteger(raw: string, flag: string, what: string | undefined): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < 1 || !Number.isSafeInteger(value)) {
    const expected = what ? `${what} (${KIND_TEXT.positiveInteger})` : KIND_TEXT.positiveInteger;
    throw new UsageError(`Flag "${flag}" expects ${expected}, got "${raw}"`);
  }
  return value;
}

function positiveNumber(raw: string, flag: string, what: string): number {
  const value = raw.trim() === "" ? NaN : Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new UsageError(
      `Flag "${flag}" expects ${what} (${KIND_TEXT.positiveNumber}), got "${raw}"`,
    );
  }
  return value;
}

function seconds(raw: string, flag: string): number {
  const value = raw.trim() === "" ? NaN : Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new UsageError(`Flag "${flag}" expects ${KIND_TEXT.seconds}, got "${raw}"`);
  }
  return value;
}

function repository(raw: string, flag: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9-]*\/(?!\.\.?$)[A-Za-z0-9_.-]+$/.test(raw)) {
    throw new UsageError(`Flag "${flag}" expects ${KIND_TEXT.repo}, got "${raw}"`);
  }
  return raw;
}

function backend(raw: string, flag: string): string {
  if (BACKEND_NAMES.includes(raw)) return raw;
  throw new UsageError(`Flag "${flag}" expects one of ${KIND_TEXT.backend}, got "${raw}"`);
}

function permissionMode(raw: string, flag: string): FlagPermissionMode {
  if ((PERMISSION_MODES as readonly string[]).includes(raw)) return raw as FlagPermissionMode;
  if (raw === "bypassPermissions") {
    throw new UsageError(
      `Flag "${flag}" does not take "bypassPermissions": use --dangerously-skip-permissions`,
    );
  }
  throw new UsageError(
    `Flag "${flag}" expects one of ${
      PERMISSION_MODES.map((mode) => `"${mode}"`).join(", ")
    }, got "${raw}"`,
  );
}

/**
 * Read an agent parameter's value: a string, number or boolean, checked
 * against the parameter's validation rules.
 *
 * @param raw What the command line gave (present).
 * @param flag The flag with dashes.
 * @param spec The parameter.
 * @returns The typed value.
 * @throws {UsageError} For a value of the wrong type or outside the rules.
 */
export function parameterValue(
  raw: string | boolean,
  flag: string,
  spec: ParameterSpec,
): string | number | boolean {
  if (spec.type === "boolean") return raw === true;
  if (typeof raw !== "string") throw needsValue(flag, undefined);
  let value: string | number = raw;
  if (spec.type === "number") {
    value = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(value)) {
      throw new UsageError(`Flag "${flag}" expects a number, got "${raw}"`);
    }
  }
  checkRules(value, flag, spec.validation);
  return value;
}

function checkRules(
  value: string | number,
  flag: string,
  rules: ParameterSpec["validation"],
): void {
  if (!rules) return;
  if (typeof value === "number") {
    if (rules.min !== undefined && value < rules.min) {
      throw new UsageError(
        `Flag "${flag}" expects a number of at least ${rules.min}, got ${value}`,
      );
    }
    if (rules.max !== undefined && value > rules.max) {
      throw new UsageError(`Flag "${flag}" expects a number of at most ${rules.max}, got ${value}`);
    }
  }
  if (typeof value === "string" && rules.pattern && !new RegExp(rules.pattern).test(value)) {
    throw new UsageError(
      `Flag "${flag}" expects a value matching /${rules.pattern}/, got "${value}"`,
    );
  }
  if (rules.enum && !rules.enum.includes(value)) {
    throw new UsageError(
      `Flag "${flag}" expects one of ${
        rules.enum.map((item) => `"${item}"`).join(", ")
      }, got "${value}"`,
    );
  }
}
