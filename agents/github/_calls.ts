/**
 * How the gh port runs `gh`: strictly before the run (every problem a
 * {@linkcode UsageError}; only a call GitHub did not answer — a 5xx, a
 * network error, a timeout — is tried again), and with retries during it
 * (every failed attempt reported, never thrown); plus the checks before the
 * run that gh works and which repository it talks to. Private to
 * `agents/github`.
 *
 * @module
 */

import { z } from "zod";
import { UsageError } from "../support/errors.ts";
import { redactorOfProcess } from "../support/redact.ts";
import { MISSING_CODE, runTool, TIMEOUT_CODE } from "../support/process.ts";

/** A gh call that failed (after its retries, or one attempt of them). */
export interface GhFault {
  /** The gh arguments. */
  args: string[];
  /** Exit code (124 for a timeout, 127 when gh is missing). */
  code: number;
  /** First line of stderr, or "timed out". */
  message: string;
  /** 1-based attempt number. */
  attempt: number;
  /** Whether another attempt follows. */
  willRetry: boolean;
}

/** Options of {@linkcode GitHubCli}. */
export interface GitHubOptions {
  /** Working directory for gh (its default repository). */
  cwd: string;
  /** `owner/name`; the working directory's repository when absent. */
  repo?: string;
  /** The gh executable. @default "gh" */
  gh?: string;
  /** Extra environment for gh (e.g. PATH in tests). */
  env?: Record<string, string>;
  /** Timeout of one gh call in milliseconds. @default 30000 */
  timeoutMs?: number;
  /** Attempts for calls during the run. @default 4 */
  attempts?: number;
  /** First backoff in milliseconds; it doubles each retry. @default 1000 */
  backoffMs?: number;
  /** Receives every failed attempt of a call, before the run (unanswered ones) and during it. */
  onFault?: (fault: GhFault) => void;
  /** Waits between retries; tests make it instant. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

/** What one gh process gave back. */
export interface CallResult {
  /** Exit code ({@linkcode TIMEOUT_CODE}, {@linkcode MISSING_CODE} included). */
  code: number;
  /** Its stdout. */
  stdout: string;
  /** Its stderr. */
  stderr: string;
}

/** The gh calls of one port, with its options and a count of processes started. */
export class GhCalls {
  /** The port's options, defaults filled in. */
  readonly options: Required<Omit<GitHubOptions, "repo" | "onFault" | "env">> & GitHubOptions;
  #count = 0;

  /**
   * Fill in the defaults; nothing runs yet.
   *
   * @param options The port's options.
   */
  constructor(options: GitHubOptions) {
    // `??`, not a spread over defaults: an option given as undefined keeps its
    // default (a spread would leave `attempts` undefined and never call gh).
    this.options = {
      ...options,
      gh: options.gh ?? "gh",
      timeoutMs: options.timeoutMs ?? 30_000,
      attempts: options.attempts ?? 4,
      backoffMs: options.backoffMs ?? 1_000,
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    };
  }

  /**
   * How many gh processes were started.
   *
   * @returns The count, retries included.
   */
  get count(): number {
    return this.#count;
  }

  /**
   * `--repo owner/name` when a repository was given, else nothing.
   *
   * @returns Arguments to append to repository commands.
   */
  repoArgs(): string[] {
    return this.options.repo ? ["--repo", this.options.repo] : [];
  }

  /**
   * Run gh once.
   *
   * @param args The arguments.
   * @returns What gh gave back.
   */
  async once(args: string[]): Promise<CallResult> {
    this.#count++;
    const { gh, cwd, timeoutMs, env } = this.options;
    // gh's arguments are an output: titles, bodies and comments go to GitHub.
    const redactor = redactorOfProcess();
    return await runTool(gh, args.map((arg) => redactor.redact(arg)), { cwd, env, timeoutMs });
  }

  /**
   * Run a call before the run, trying again with the backoff of calls during
   * the run while GitHub is not answering (a 5xx, a network error, a
   * timeout). Any other answer, a not-found included, is returned at once.
   *
   * @param args The arguments.
   * @returns What gh gave back.
   * @throws {UsageError} When every attempt went unanswered.
   */
  async steady(args: string[]): Promise<CallResult> {
    const { attempts, backoffMs, sleep, timeoutMs } = this.options;
    for (let attempt = 1;; attempt++) {
      const result = await this.once(args);
      const reason = unanswered(result, timeoutMs);
      if (reason === undefined) return result;
      const willRetry = attempt < attempts;
      this.options.onFault?.({ args, code: result.code, message: reason, attempt, willRetry });
      if (!willRetry) {
        throw new UsageError(
          `GitHub is not answering (${reason} after ${attempt} attempt${
            attempt === 1 ? "" : "s"
          }): try again later`,
        );
      }
      await sleep(backoffMs * 2 ** (attempt - 1));
    }
  }

  /**
   * Run a call before the run and parse its JSON.
   *
   * @param args The arguments.
   * @param schema The JSON's shape.
   * @param describe What failed, for the error.
   * @returns The parsed JSON.
   * @throws {UsageError} When gh is missing, fails, answers unexpected JSON,
   * or GitHub does not answer (see {@linkcode GhCalls.steady}).
   */
  async strictJson<T>(args: string[], schema: z.ZodType<T>, describe: () => string): Promise<T> {
    const result = await this.steady(args);
    if (result.code === MISSING_CODE) {
      throw new UsageError(
        `Cannot find the GitHub CLI "gh": install it (https://cli.github.com) and run "gh auth login"`,
      );
    }
    if (result.code !== 0) {
      throw new UsageError(`${describe()}: ${firstLine(result.stderr, result.code)}`);
    }
    const parsed = parseJson(result.stdout, schema);
    if (!parsed.ok) {
      throw new UsageError(`${describe()}: gh returned unexpected JSON: ${parsed.error}`);
    }
    return parsed.value;
  }

  /**
   * Run a call during the run, retrying with backoff. `accept` judges a
   * result that exited 0 or with one of `answerCodes` (a string is the
   * problem, and the call is retried).
   *
   * @param args The arguments.
   * @param accept Judges an answer; a string is its problem.
   * @param answerCodes Exit codes that still carry an answer. @default []
   * @returns The accepted result, or undefined when every attempt failed.
   */
  async retry(
    args: string[],
    accept: (result: CallResult) => string | undefined,
    answerCodes: readonly number[] = [],
  ): Promise<CallResult | undefined> {
    const { attempts, backoffMs, sleep, onFault } = this.options;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const result = await this.once(args);
      const problem = result.code === 0 || answerCodes.includes(result.code)
        ? accept(result)
        : result.code === TIMEOUT_CODE
        ? `timed out after ${this.options.timeoutMs} ms`
        : firstLine(result.stderr, result.code);
      if (problem === undefined) return result;
      const willRetry = attempt < attempts && result.code !== MISSING_CODE;
      onFault?.({ args, code: result.code, message: problem, attempt, willRetry });
      if (!willRetry) return undefined;
      await sleep(backoffMs * 2 ** (attempt - 1));
    }
    return undefined;
  }

  /**
   * Run a call during the run and parse its JSON (unexpected JSON is retried).
   *
   * @param args The arguments.
   * @param schema The JSON's shape.
   * @returns The parsed JSON, or undefined when every attempt failed.
   */
  async retryJson<T>(args: string[], schema: z.ZodType<T>): Promise<T | undefined> {
    let value: T | undefined;
    const result = await this.retry(args, (result) => {
      const parsed = parseJson(result.stdout, schema);
      if (!parsed.ok) return `unexpected JSON: ${parsed.error}`;
      value = parsed.value;
      return undefined;
    });
    return result ? value : undefined;
  }

  /**
   * Run a call during the run whose output does not matter.
   *
   * @param args The arguments.
   * @returns Whether an attempt succeeded.
   */
  async retryOk(args: string[]): Promise<boolean> {
    return (await this.retry(args, () => undefined)) !== undefined;
  }

  /**
   * The injected sleep, cut short (resolved) when `signal` aborts.
   *
   * @param ms How long.
   * @param signal Ends the pause early.
   */
  async pause(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal === undefined) return await this.options.sleep(ms);
    if (signal.aborted) return;
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([this.options.sleep(ms), aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}

/**
 * Check before the run that gh is installed and authenticated.
 *
 * @param calls The port's gh calls.
 * @returns gh's version line.
 * @throws {UsageError} When gh is missing or not logged in, or GitHub does not answer.
 */
export async function preflight(calls: GhCalls): Promise<string> {
  const version = await calls.once(["--version"]);
  if (version.code === MISSING_CODE) {
    throw new UsageError(
      `Cannot find the GitHub CLI "gh": install it (https://cli.github.com, or "apt install gh" / "brew install gh") and run "gh auth login"`,
    );
  }
  if (version.code !== 0) {
    throw new UsageError(`Cannot run "gh --version": ${firstLine(version.stderr, version.code)}`);
  }
  const auth = await calls.steady(["auth", "status"]);
  if (auth.code !== 0) {
    throw new UsageError(
      `The GitHub CLI is not logged in: run "gh auth login" (or set GH_TOKEN); gh said: ${
        firstLine(auth.stderr, auth.code)
      }`,
    );
  }
  return version.stdout.split("\n")[0].trim();
}

const repoSchema = z.object({
  nameWithOwner: z.string(),
  owner: z.object({ login: z.string() }).loose(),
}).loose();

/**
 * The repository (`--repo`, else the working directory's).
 *
 * @param calls The port's gh calls.
 * @returns Its `owner/name` and owner login.
 * @throws {UsageError} When gh cannot tell.
 */
export async function repository(
  calls: GhCalls,
): Promise<{ nameWithOwner: string; owner: string }> {
  const args = [
    "repo",
    "view",
    ...(calls.options.repo ? [calls.options.repo] : []),
    "--json",
    "nameWithOwner,owner",
  ];
  const data = await calls.strictJson(
    args,
    repoSchema,
    () =>
      calls.options.repo
        ? `Cannot find repository "${calls.options.repo}" (flag "--repo")`
        : `Cannot tell which GitHub repository "${calls.options.cwd}" belongs to: run inside a clone of a GitHub repository or pass --repo owner/name`,
  );
  return { nameWithOwner: data.nameWithOwner, owner: data.owner.login };
}

/** Parse and validate gh's JSON, or say what is wrong with it. */
function parseJson<T>(
  text: string,
  schema: z.ZodType<T>,
): { ok: true; value: T } | { ok: false; error: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, error: `${issue.path.join(".") || "(root)"}: ${issue.message}` };
  }
  return { ok: true, value: result.data };
}

/** What gh prints when it reached no answer from GitHub (its messages and Go's net errors). */
const NETWORK_ERROR =
  /error connecting to|dial tcp|connection refused|connection reset|no such host|i\/o timeout|TLS handshake timeout|unexpected EOF|context deadline exceeded|Client\.Timeout|network is unreachable|Timeout trying to log in/i;

/**
 * Why a gh call got no answer from GitHub, if it did not: a server error
 * (5xx), a network error or a timeout. A not-found or any other 4xx is an
 * answer.
 *
 * @param result What gh gave back.
 * @param timeoutMs The call's timeout, for the message.
 * @returns A short reason (e.g. "HTTP 502: Bad Gateway"), or undefined for an answer.
 */
export function unanswered(result: CallResult, timeoutMs: number): string | undefined {
  if (result.code === 0 || result.code === MISSING_CODE) return undefined;
  if (result.code === TIMEOUT_CODE) return `no answer within ${timeoutMs / 1000} s`;
  const server = result.stderr.match(/HTTP (5\d\d)(?::[ \t]*([^(\n]*[^(\s]))?/);
  if (server) return server[2] ? `HTTP ${server[1]}: ${server[2]}` : `HTTP ${server[1]}`;
  const network = result.stderr.split("\n").find((line) => NETWORK_ERROR.test(line));
  return network?.trim();
}

/**
 * The first non-empty line of gh's stderr, else its exit code.
 *
 * @param stderr What gh printed on stderr.
 * @param code Its exit code.
 * @returns One line for a message.
 */
export function firstLine(stderr: string, code: number): string {
  const line = stderr.split("\n").map((text) => text.trim()).find((text) => text !== "");
  return line ?? `exit code ${code}`;
}
