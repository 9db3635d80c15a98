/**
 * Small stand-ins for examples and tests of handlers: a `gh` that logs its
 * arguments and prints canned replies, a sample issue and project board, and
 * the issue and project handlers built on them, so that an example shows the
 * one call it is about.
 *
 * @module
 */

import { parseDefinition } from "../definition/parse.ts";
import type { HandlerContext } from "../completion/base_handler.ts";
import { IssueCompletionHandler } from "../completion/issue.ts";
import { ProjectCompletionHandler } from "../completion/project.ts";
import {
  type GhIssue,
  type GhProject,
  type GhProjectItem,
  GitHubCli,
  type GitHubOptions,
} from "../github/port.ts";
import { PromptResolver } from "../prompts/resolver.ts";

/** One answer of a stand-in `gh`. */
export interface StandInReply {
  /** What it prints on stdout (a newline follows). @default "" */
  stdout?: string;
  /** What it prints on stderr (a newline follows). @default "" */
  stderr?: string;
  /** Its exit code. @default 0 */
  code?: number;
}

/** Options of {@linkcode StandInGh.port}, on top of the stand-in's folder and script. */
export type StandInPortOptions = Omit<GitHubOptions, "cwd" | "gh">;

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
   * @param options Port options; `repo` defaults to "octo/demo" (pass
   * `repo: undefined` for none).
   * @returns The port.
   */
  port(options?: StandInPortOptions): GitHubCli;
}

/**
 * A `gh` that appends its arguments to a call log and answers with `reply`; a
 * list answers each call with the next reply, repeating the last one.
 *
 * @param reply What a call prints (stdout), or full replies. @default ""
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
export async function standInGh(
  reply: string | StandInReply | StandInReply[] = "",
): Promise<StandInGh> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-gh-" });
  const path = `${dir}/gh`;
  const replies = typeof reply === "string" ? [{ stdout: reply }] : [reply].flat();
  await Deno.writeTextFile(path, standInScript(`${dir}/calls`, replies), { mode: 0o755 });
  return {
    dir,
    path,
    calls: async () => {
      const text = await Deno.readTextFile(`${dir}/calls`).catch(() => "");
      return text.split("\n").filter((line) => line !== "");
    },
    port: (options = {}) => new GitHubCli({ repo: "octo/demo", ...options, cwd: dir, gh: path }),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}

/** The shell script of a stand-in: log the call, then answer by the call's number. */
function standInScript(log: string, replies: StandInReply[]): string {
  const quote = (text: string) => `'${text.replaceAll("'", `'"'"'`)}'`;
  const answer = ({ stdout = "", stderr = "", code = 0 }: StandInReply) =>
    `printf '%s\\n' ${quote(stdout)}; ${
      stderr ? `printf '%s\\n' ${quote(stderr)} >&2; ` : ""
    }exit ${code}`;
  const cases = replies.map((one, index) =>
    `  ${index === replies.length - 1 ? "*" : index + 1}) ${answer(one)} ;;`
  );
  return [
    "#!/bin/sh",
    `echo "$@" >> ${quote(log)}`,
    `case $(wc -l < ${quote(log)}) in`,
    ...cases,
    "esac",
    "",
  ].join("\n");
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

/** Options both sample handlers take. */
export interface SampleHandlerOptions {
  /** The agent definition's JSON, without `name` and `behavior.completionType`. @default {} */
  definition?: Record<string, unknown>;
  /** The gh the handler calls. @default a gh that is never run */
  gh?: StandInGh;
  /** Shared with the gh port's fault sink. */
  faults?: string[];
  /** The run's iteration cap. @default 5 */
  maxIterations?: number;
}

/** Options of {@linkcode sampleIssueHandler}. */
export interface SampleIssueHandlerOptions extends SampleHandlerOptions {
  /** The issue. @default sampleIssue() */
  issue?: GhIssue;
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
 * assert.equal(handler.issue?.number, 7);
 * ```
 */
export async function sampleIssueHandler(
  options: SampleIssueHandlerOptions = {},
): Promise<IssueCompletionHandler> {
  return new IssueCompletionHandler(await handlerContext("fixer", "issue", options), {
    issue: options.issue ?? sampleIssue(),
    github: githubOf(options.gh),
    faults: options.faults,
  });
}

/**
 * A project board for examples: #2 "Launch" of `octo`.
 *
 * @param overrides Fields to change.
 * @returns The project.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleProject } from "@finishline/agents/testing";
 *
 * assert.equal(sampleProject().title, "Launch");
 * ```
 */
export function sampleProject(overrides: Partial<GhProject> = {}): GhProject {
  return {
    number: 2,
    title: "Launch",
    url: "https://github.com/orgs/octo/projects/2",
    id: "PVT_2",
    owner: "octo",
    ...overrides,
  };
}

/**
 * The items of {@linkcode sampleProject}: #3 "Add login" (Done) and #4 "Add
 * logout" (Todo).
 *
 * @param status The status of every item, when they should share one.
 * @returns The items.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleProjectItems } from "@finishline/agents/testing";
 *
 * assert.deepEqual(sampleProjectItems("Done").map((item) => item.status), ["Done", "Done"]);
 * ```
 */
export function sampleProjectItems(status?: string): GhProjectItem[] {
  return [
    {
      id: "PVTI_1",
      title: "Add login",
      status: status ?? "Done",
      labels: [],
      type: "Issue",
      number: 3,
    },
    {
      id: "PVTI_2",
      title: "Add logout",
      status: status ?? "Todo",
      labels: [],
      type: "Issue",
      number: 4,
    },
  ];
}

/**
 * The reply of `gh project item-list` for items.
 *
 * @param items The board's items.
 * @returns gh's JSON.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleProjectItems, standInGh, projectItemsReply } from "@finishline/agents/testing";
 *
 * await using gh = await standInGh(projectItemsReply(sampleProjectItems()));
 * const items = await gh.port().projectItems(2, "octo");
 * assert.deepEqual(items?.map((item) => item.status), ["Done", "Todo"]);
 * ```
 */
export function projectItemsReply(items: GhProjectItem[]): string {
  return JSON.stringify({
    items: items.map(({ id, title, status, labels, type, number, url, repository }) => ({
      id,
      title,
      status,
      labels,
      content: { type, number, url, repository },
    })),
  });
}

/** Options of {@linkcode sampleProjectHandler}. */
export interface SampleProjectHandlerOptions extends SampleHandlerOptions {
  /** The items read before the run. @default sampleProjectItems() */
  items?: GhProjectItem[];
  /** Only items with this label count. */
  label?: string;
}

/**
 * A project handler of a `board` agent on the built-in prompts, for
 * {@linkcode sampleProject}.
 *
 * @param options Definition fields, items, label, gh stand-in and cap.
 * @returns The handler.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleProjectHandler } from "@finishline/agents/testing";
 *
 * const handler = await sampleProjectHandler();
 * assert.equal(handler.buildCompletionCriteria().short, "finish project #2");
 * ```
 */
export async function sampleProjectHandler(
  options: SampleProjectHandlerOptions = {},
): Promise<ProjectCompletionHandler> {
  return new ProjectCompletionHandler(await handlerContext("board", "project", options), {
    project: sampleProject(),
    items: options.items ?? sampleProjectItems(),
    github: githubOf(options.gh),
    label: options.label,
    faults: options.faults,
  });
}

/** The context of a handler of agent `name` on the built-in prompts. */
async function handlerContext(
  name: string,
  completionType: string,
  options: SampleHandlerOptions,
): Promise<HandlerContext> {
  const { behavior, ...rest } = options.definition ?? {};
  const definition = parseDefinition(
    JSON.stringify({
      name,
      behavior: { completionType, ...(behavior as Record<string, unknown> ?? {}) },
      ...rest,
    }),
    { displayPath: `.agent/${name}/agent.json` },
  );
  const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
  return { definition, args: {}, resolver, maxIterations: options.maxIterations ?? 5 };
}

/** The stand-in's port, or one whose gh is never run. */
function githubOf(gh: StandInGh | undefined): GitHubCli {
  return gh?.port() ?? new GitHubCli({ cwd: Deno.cwd(), repo: "octo/demo" });
}
