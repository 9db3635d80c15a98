/**
 * Small stand-ins for examples and tests of handlers: a `gh` that logs its
 * arguments and prints a canned reply, a sample issue, and an issue handler
 * built on both, so that an example shows the one call it is about.
 *
 * @module
 */

import { parseDefinition } from "../common/definition/parse.ts";
import { IssueCompletionHandler } from "../common/completion/issue.ts";
import { type GhIssue, GitHubCli } from "../common/github.ts";
import { PromptResolver } from "../common/prompt_resolver.ts";

/** A stand-in `gh` in a temp folder; removed with `await using`. */
export interface StandInGh extends AsyncDisposable {
  /** The folder holding the script and its call log. */
  dir: string;
  /** The script's path. */
  path: string;
  /**
   * The calls so far, one line of arguments each.
   *
   * @returns The lines, oldest first.
   */
  calls(): Promise<string[]>;
  /**
   * A gh port that runs this stand-in.
   *
   * @param repo The `--repo` to pass. @default "octo/demo"
   * @returns The port.
   */
  port(repo?: string): GitHubCli;
}

/**
 * A `gh` that appends its arguments to a call log and prints `reply`.
 *
 * @param reply What every call prints. @default ""
 * @returns The stand-in.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { standInGh } from "@finishline/agents/testing";
 *
 * await using gh = await standInGh('{"state": "OPEN"}');
 * assert.equal(await gh.port().issueState(7), "OPEN");
 * assert.deepEqual(await gh.calls(), ["issue view 7 --repo octo/demo --json state"]);
 * ```
 */
export async function standInGh(reply = ""): Promise<StandInGh> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-gh-" });
  const path = `${dir}/gh`;
  const quoted = reply.replaceAll("'", `'"'"'`);
  await Deno.writeTextFile(path, `#!/bin/sh\necho "$@" >> "${dir}/calls"\necho '${quoted}'\n`, {
    mode: 0o755,
  });
  return {
    dir,
    path,
    calls: async () => {
      const text = await Deno.readTextFile(`${dir}/calls`).catch(() => "");
      return text.split("\n").filter((line) => line !== "");
    },
    port: (repo = "octo/demo") => new GitHubCli({ cwd: dir, repo, gh: path }),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}

/**
 * An open issue for examples: #7, "Login test is flaky".
 *
 * @param overrides Fields to change.
 * @returns The issue.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleIssue } from "@finishline/agents/testing";
 *
 * assert.equal(sampleIssue({ number: 9 }).title, "Login test is flaky");
 * ```
 */
export function sampleIssue(overrides: Partial<GhIssue> = {}): GhIssue {
  return {
    number: 7,
    title: "Login test is flaky",
    body: "It fails one run in ten.",
    state: "OPEN",
    labels: ["bug"],
    url: "https://github.com/octo/demo/issues/7",
    ...overrides,
  };
}

/** Options of {@linkcode sampleIssueHandler}. */
export interface SampleIssueHandlerOptions {
  /** The agent definition's JSON, without `name` and `behavior.completionType`. @default {} */
  definition?: Record<string, unknown>;
  /** The issue. @default sampleIssue() */
  issue?: GhIssue;
  /** The gh the handler calls. @default a gh that is never run */
  gh?: StandInGh;
  /** Shared with the gh port's fault sink. */
  faults?: string[];
  /** The run's iteration cap. @default 5 */
  maxIterations?: number;
}

/**
 * An issue handler of a `fixer` agent on the built-in prompts.
 *
 * @param options Definition fields, issue, gh stand-in and cap.
 * @returns The handler.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleIssueHandler } from "@finishline/agents/testing";
 *
 * const handler = await sampleIssueHandler();
 * assert.equal(handler.issue.number, 7);
 * ```
 */
export async function sampleIssueHandler(
  options: SampleIssueHandlerOptions = {},
): Promise<IssueCompletionHandler> {
  const { behavior, ...rest } = options.definition ?? {};
  const definition = parseDefinition(
    JSON.stringify({
      name: "fixer",
      behavior: { completionType: "issue", ...(behavior as Record<string, unknown> ?? {}) },
      ...rest,
    }),
    { displayPath: ".agent/fixer/agent.json" },
  );
  const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
  const github = options.gh?.port() ?? new GitHubCli({ cwd: Deno.cwd(), repo: "octo/demo" });
  const context = { definition, args: {}, resolver, maxIterations: options.maxIterations ?? 5 };
  return new IssueCompletionHandler(context, {
    issue: options.issue ?? sampleIssue(),
    github,
    faults: options.faults,
  });
}
