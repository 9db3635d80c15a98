/**
 * What a run was asked to do, typed: the handler selectors, the task and the
 * agent's parameters. The command line parses them once; handlers see them
 * as the seed contract's `args` record, built here.
 *
 * @module
 */

/** The typed inputs of a run, as the command line parsed them. */
export interface RunInputs {
  /** The agent's name (`--agent`). */
  agent?: string;
  /** The task text (`--task`), for `{uv-task}`. */
  task?: string;
  /** The issue number (`--issue`): selects the issue handler. */
  issue?: number;
  /** The project number (`--project`): selects the project handler. */
  project?: number;
  /** The completion keyword (`--keyword`): selects the manual handler. */
  keyword?: string;
  /** The iteration cap (`--iterate-max`). */
  iterateMax?: number;
  /** The repository, `owner/name` (`--repo`). */
  repo?: string;
  /** The project's owner (`--owner`). */
  owner?: string;
  /** Only project items with this label count (`--label`). */
  label?: string;
  /** The model (`--model`). */
  model?: string;
  /** The turn cap per iteration (`--max-turns`). */
  maxTurns?: number;
  /** The cost cap of the run (`--max-budget-usd`). */
  maxBudgetUsd?: number;
  /** The permission mode (`--permission-mode`). */
  permissionMode?: "default" | "acceptEdits" | "plan";
  /** The agent's parameters, by name. */
  params: Record<string, string | number | boolean>;
}

/**
 * The run's arguments as handlers and templates see them (the seed
 * contract's `args`): the set inputs in camelCase and the parameters by name.
 *
 * @param inputs The run's inputs.
 * @returns The arguments, unset inputs left out.
 * @example
 * ```ts
 * import { runArgs } from "./run_inputs.ts";
 * const args = runArgs({ agent: "x", iterateMax: 2, params: { topic: "t" } });
 * console.assert(args.iterateMax === 2 && args.topic === "t" && !("task" in args));
 * ```
 */
export function runArgs(inputs: RunInputs): Record<string, unknown> {
  const args: Record<string, unknown> = {
    agent: inputs.agent,
    issue: inputs.issue,
    project: inputs.project,
    iterateMax: inputs.iterateMax,
    keyword: inputs.keyword,
    task: inputs.task,
    repo: inputs.repo,
    owner: inputs.owner,
    label: inputs.label,
    model: inputs.model,
    maxTurns: inputs.maxTurns,
    maxBudgetUsd: inputs.maxBudgetUsd,
    permissionMode: inputs.permissionMode,
    ...inputs.params,
  };
  for (const key of Object.keys(args)) {
    if (args[key] === undefined) delete args[key];
  }
  return args;
}

/**
 * The GitHub selectors among arguments given by a library caller: the issue
 * and project numbers (whole numbers of 1 or more), repository, owner and
 * label (strings). Values of another type are left out.
 *
 * @param args Arguments as handlers see them.
 * @returns The inputs found.
 * @example
 * ```ts
 * import { selectorsOf } from "./run_inputs.ts";
 * console.assert(selectorsOf({ issue: 4, repo: "octo/demo" }).issue === 4);
 * console.assert(selectorsOf({ issue: "4" }).issue === undefined);
 * ```
 */
export function selectorsOf(args: Record<string, unknown>): RunInputs {
  const count = (value: unknown) =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : undefined;
  const text = (value: unknown) => typeof value === "string" ? value : undefined;
  return {
    issue: count(args.issue),
    project: count(args.project),
    repo: text(args.repo),
    owner: text(args.owner),
    label: text(args.label),
    params: {},
  };
}
