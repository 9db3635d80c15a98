/**
 * Build once: everything a run is made of, prepared and checked before
 * anything is written — the definition after flags, the handler, the prompt
 * resolver, the system and first prompts, the iteration cap, the checks and
 * the permissions. Bad input fails here, with nothing written.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { type BackendSetting, resolveBackend } from "../../backends/presets.ts";
import type { CommandRefusal, SessionPermissionMode } from "../../backends/port.ts";
import { CompositeChecker } from "../../checks/composite.ts";
import { commitGate } from "../../loop/unverified.ts";
import { buildVerifier } from "../../checks/verifier.ts";
import { createCompletionHandler, iterationCap } from "../../completion/factory.ts";
import { runArgs } from "../../completion/run_inputs.ts";
import { TaskCompletionHandler } from "../../completion/task.ts";
import type { CompletionCriteria, CompletionHandler } from "../../completion/handler_contract.ts";
import { loadDefinition } from "../../definition/load.ts";
import type { AgentDefinition, LoadedDefinition } from "../../definition/definition_types.ts";
import { GitRepo } from "../../git/repo.ts";
import { checkBaseBranch } from "../../git/worktree.ts";
import { argsToVariables, PromptResolver } from "../../prompts/resolver.ts";
import { pathExists } from "../../support/resource.ts";
import { runGit } from "../../git/run_git.ts";
import { UsageError } from "../../support/errors.ts";
import { checkSandbox, describeNetwork } from "../../sandbox/sandbox_check.ts";
import type { SqliteStore, StoredRun } from "../../store/mod.ts";
import {
  applyFlags,
  parseRunFlags,
  type RunCommand,
  type RunFlags,
} from "../flags/command_line.ts";
import { completeTaskInstructions } from "../../record/complete_task_tool.ts";
import { learningsFinder } from "../../store/learnings_text.ts";
import { ISSUE_CLOSE_REFUSAL, noGithubWriteEnv } from "../../completion/issue.ts";
import { FINISHLINE_STATE_DIR } from "../../sandbox/session_world.ts";
import { describeChecks, prepareChecks, type RunChecks } from "./checks_setup.ts";
import { openStore, resolveStorePath, workingDirectory } from "../places.ts";
import { logFolder } from "./log_folder.ts";
import { checkSettingsRoutes } from "../../definition/settings_routes.ts";

/** A run, prepared: what the loop, the workspace and the finish need. */
export interface RunPlan {
  /** The command line it came from. */
  command: RunCommand;
  /** The run's flags. */
  flags: RunFlags;
  /** The working directory the user ran in. */
  cwd: string;
  /** Why agent sessions run unsandboxed (for the report), undefined when sandboxed. */
  unsandboxed?: string;
  /** The sessions' sandbox and network, in one line for the report. */
  isolation: string;
  /** The loaded definition (its file, folder, built-in or local). */
  loaded: LoadedDefinition;
  /** The definition after flags. */
  definition: AgentDefinition;
  /** The handlers' `args`. */
  args: Record<string, unknown>;
  /** The run's id (a resumed run keeps its own). */
  runId: string;
  /** The recorded run this one continues. */
  resume?: StoredRun;
  /** The repository of the working directory. */
  mainRepo?: GitRepo;
  /** The run history's file. */
  storeFile: string;
  /** The log and report folder (`logging.directory`), confined to the repository. */
  logDir: string;
  /** The history: the one that existed already (read for learnings), then the run's own. */
  store?: SqliteStore;
  /** The iteration cap. */
  maxIterations: number;
  /** The completion handler. */
  handler: CompletionHandler;
  /** Its criteria. */
  criteria: CompletionCriteria;
  /** Appended to the agent's system prompt. */
  systemPrompt: string;
  /** The first prompt (absent when resuming). */
  initialPrompt?: string;
  /** The detected checks and their gate. */
  checks: RunChecks;
  /** Every checker that gates completion. */
  verifier: CompositeChecker;
  /** What gates completion, for --dry-run and the report. */
  checksText: string;
  /** The sessions' permission mode. */
  permissionMode: SessionPermissionMode;
  /** Bash commands the agent may not run. */
  refuseCommands: CommandRefusal[];
  /** Variables over the runner's environment for the agent's processes (no GitHub login, say). */
  agentEnv: Record<string, string>;
  /** Whether the pull request's checks gate completion. */
  prChecks: boolean;
}

/** Options of {@linkcode prepareRun}. */
export interface PrepareOptions {
  /** A recorded run to continue. */
  resume?: StoredRun;
  /** `--json` given with `--resume`. */
  json?: boolean;
  /** `--store` given with `--resume`. */
  storePath?: string;
  /** Notes for the user while the run is prepared, such as GitHub not answering yet. */
  stderr?: (text: string) => void;
  /**
   * Called once the first session's process settings are known (the
   * definition, the folder, the store), before the handler, the prompts and
   * the checks are prepared: the CLI starts that process then. Not for a
   * resumed run, nor before the repository's run history folder exists.
   */
  onFirstSession?: (first: FirstSession) => void;
}

/**
 * What the first session's agent process depends on: known early in the
 * preparation, so that Claude Code boots while the rest is prepared.
 */
export type FirstSession = Pick<
  RunPlan,
  | "runId"
  | "definition"
  | "cwd"
  | "permissionMode"
  | "refuseCommands"
  | "agentEnv"
  | "maxIterations"
>;

/**
 * Prepare a run from its command line.
 *
 * @param command The run's command line, parsed up to the agent definition.
 * @param options A run to resume, and the flags given with `--resume`.
 * @returns The plan.
 * @throws {UsageError} For bad flags, a bad definition or a template problem.
 */
export async function prepareRun(
  command: RunCommand,
  options: PrepareOptions = {},
): Promise<RunPlan> {
  const cwd = await workingDirectory(command.flags.cwd);
  const loaded = await loadDefinition(command.flags.agent, { cwd });
  const flags = parseRunFlags(command, loaded.definition);
  if (options.json) flags.json = true;
  const definition = taskDefault(applyFlags(loaded.definition, flags), loaded, flags);
  const unsandboxed = checkSandbox(definition.verify.sandbox, options.stderr);
  const args = { ...runArgs(flags), cwd };
  const runId = options.resume?.id ?? crypto.randomUUID();
  const mainRepo = await GitRepo.open(cwd, { timeoutMs: definition.git.timeoutSeconds * 1000 });
  await checkWhereItRuns(cwd, mainRepo, flags.worktree === true);
  if (flags.baseBranch && mainRepo) await checkBaseBranch(mainRepo, flags.baseBranch);
  const backends = [definition.behavior.backend, definition.verify.reproduceBackend ?? "claude"];
  const isolation = unsandboxed
    ? `none (${unsandboxed}): agent sessions ran with your home and /tmp in reach`
    : `bubblewrap; network: ${
      describeNetwork(
        definition.verify.network,
        // The verifier's and reviewer's backend is the run's unless set.
        [
          definition.behavior.backend,
          definition.verify.reproduceBackend ?? definition.behavior.backend,
        ].map((backend) => {
          const resolved = resolveBackend(backend);
          return resolved === "claude"
            ? { name: "claude", env: Deno.env.toObject(), cwd }
            : { name: resolved.name, env: { ...Deno.env.toObject(), ...resolved.acp.env }, cwd };
        }),
        options.stderr,
      )
    }`;
  if (backends.some((backend) => backend === "claude" || backend === "claude-acp")) {
    await checkSettingsRoutes(mainRepo, { settingSources: definition.behavior.settingSources });
  }
  const storeFile = resolveStorePath(
    options.storePath ?? command.flags.store,
    mainRepo?.root ?? cwd,
  );
  const maxIterations = iterationCap(definition);
  const permissionMode: SessionPermissionMode = flags.dangerouslySkipPermissions
    ? "bypassPermissions"
    : definition.behavior.permissionMode;
  // The runner closes the issue: the agent gets no GitHub login (a custom handler of type
  // "issue" is known only once built; its first process is then started again, below).
  const agentSettings = (handlerType: string) => {
    const runnerCloses = handlerType === "issue" && definition.github.closeIssue === "runner";
    return {
      refuseCommands: runnerCloses ? [ISSUE_CLOSE_REFUSAL] : [],
      agentEnv: runnerCloses ? noGithubWriteEnv(join(dirname(storeFile), "no-gh-login")) : {},
    };
  };
  // Not before the run history's folder exists (a repository finishline ran in before): a
  // sandboxed session makes it, to hide it, and a run refused later must leave nothing.
  const stateDir = join(mainRepo?.root ?? cwd, FINISHLINE_STATE_DIR);
  const settled = await Deno.stat(stateDir).then((info) => info.isDirectory, () => false);
  if (!options.resume && !flags.dryRun && settled) {
    options.onFirstSession?.({
      runId,
      definition,
      cwd,
      permissionMode,
      maxIterations,
      ...agentSettings(definition.behavior.completionType),
    });
  }
  const logDir = await logFolder(loaded, {
    repoRoot: mainRepo?.root,
    cwd,
    directory: definition.logging.directory,
  });
  // An existing history is read for {uv-learnings}; a new one is created only after validation.
  const history: { store?: SqliteStore } = {
    store: await pathExists(storeFile)
      ? openStore(storeFile, cwd, {
        embeddings: definition.learnings.embeddings,
        stderr: options.stderr,
      })
      : undefined,
  };
  const resolver = await PromptResolver.create({
    agentDir: loaded.agentDir,
    registry: definition.prompts.registry,
    fallbackDir: definition.prompts.fallbackDir,
    systemPromptPath: definition.behavior.systemPromptPath,
    builtinAgent: loaded.builtin,
    cwd,
  });
  // The handler's preflight tells about retries; during the run the progress line does.
  let preparing = true;
  const handler = await createCompletionHandler(definition, args, {
    agentDir: loaded.agentDir,
    cwd,
    resolver,
    maxIterations,
    learnings: flags.noLearnings ? undefined : learningsFinder(() => history.store, {
      runId,
      count: definition.finish.maxLearnings,
      maxChars: definition.finish.maxLearningsChars,
    }),
    inputs: flags,
    github: {
      onFault: (fault) => {
        if (preparing && fault.willRetry) {
          options.stderr?.(
            `[finishline] GitHub did not answer gh ${
              fault.args.slice(0, 2).join(" ")
            } (${fault.message}, attempt ${fault.attempt}): trying again\n`,
          );
        }
      },
    },
  });
  preparing = false;
  if (handler instanceof TaskCompletionHandler) heldOutForTask(definition, handler);
  const criteria = handler.buildCompletionCriteria();
  const systemPrompt = await resolver.resolve("system", {
    ...argsToVariables(args),
    "uv-agent_name": definition.name,
    "uv-completion_criteria": criteria.detailed,
    "uv-max_iterations": maxIterations,
    "uv-complete_task_instructions": completeTaskInstructions(definition),
  });
  const { checks, verifier } = await gates(definition, { loaded, cwd, mainRepo, handler });
  // The plan is the holder of the history, so the store the workspace opens is read for learnings too.
  return Object.assign(history, {
    command,
    flags,
    cwd,
    loaded,
    definition,
    args,
    runId,
    resume: options.resume,
    mainRepo,
    storeFile,
    logDir,
    maxIterations,
    handler,
    criteria,
    systemPrompt,
    unsandboxed,
    isolation,
    // Built now so that a template problem is a usage error before anything is written.
    initialPrompt: options.resume ? undefined : await handler.buildInitialPrompt(args),
    checks,
    verifier,
    checksText: describeChecks(definition, checks),
    permissionMode,
    // No GitHub credentials for the agent when the runner closes the issue.
    ...agentSettings(handler.type),
    prChecks: flags.createPr === true && (definition.verify.prChecks ?? true),
  });
}

/**
 * `--task` with the built-in agent and no flag that chooses a handler
 * (`--issue`, `--project`, `--keyword`, `--iterate-max`) runs the `task`
 * handler: done when the agent reports success and the evidence passes,
 * within the definition's cap. `--iterate-max N` keeps its meaning: exactly
 * N iterations.
 */
function taskDefault(
  definition: AgentDefinition,
  loaded: LoadedDefinition,
  flags: RunFlags,
): AgentDefinition {
  const chosen = [flags.issue, flags.project, flags.keyword, flags.iterateMax]
    .some((flag) => flag !== undefined);
  if (
    chosen || flags.task === undefined || !loaded.builtin ||
    definition.behavior.completionType !== "iterate"
  ) return definition;
  return { ...definition, behavior: { ...definition.behavior, completionType: "task" } };
}

/**
 * A task that asks for a change of behaviour (a bug fix or a feature) gets
 * the verifier's held-out test, as an issue does, unless `verify.reproduce`
 * says otherwise.
 */
function heldOutForTask(definition: AgentDefinition, handler: TaskCompletionHandler): void {
  if (definition.verify.reproduce !== undefined || handler.kind === "other") return;
  definition.verify = { ...definition.verify, reproduce: "held-out" };
}

/**
 * Refuse, before anything is written, a folder a run cannot work in: a bare
 * repository or the inside of a `.git` folder (it has no working tree: the
 * agent would write into git's own files), and, with `--worktree`, a folder
 * outside git or a repository with no commit to branch from.
 */
async function checkWhereItRuns(cwd: string, repo: GitRepo | undefined, worktree: boolean) {
  if (!repo) {
    const probe = await runGit(
      ["rev-parse", "--is-bare-repository", "--is-inside-git-dir"],
      {
        cwd,
        timeoutMs: 10_000,
      },
    );
    if (probe.code === 0 && probe.stdout.includes("true")) {
      throw new UsageError(
        `"${cwd}" is ${
          probe.stdout.startsWith("true") ? "a bare git repository" : "inside a .git folder"
        }, which has no working tree: run finishline in a clone or a worktree of it`,
      );
    }
  }
  if (!worktree) return;
  if (!repo) {
    throw new UsageError(`Flag "--worktree" needs a git repository, and "${cwd}" is not in one`);
  }
  if (!(await repo.head())) {
    throw new UsageError(
      `Flag "--worktree" needs a commit to branch from, and the repository "${repo.root}" has none yet: commit first`,
    );
  }
}

/** The configured checkers, the detected checks and, for an issue, the need for a commit. */
async function gates(
  definition: AgentDefinition,
  where: { loaded: LoadedDefinition; cwd: string; mainRepo?: GitRepo; handler: CompletionHandler },
): Promise<{ checks: RunChecks; verifier: CompositeChecker }> {
  const configured = await buildVerifier(definition.verify, {
    agentDir: where.loaded.agentDir,
    cwd: where.cwd,
  });
  // With no checks configured, the repository's own checks decide (verify.detect).
  const checks = await prepareChecks(definition, where.mainRepo?.root ?? where.cwd);
  // An issue is not resolved by changing nothing: without configured checks, it needs a commit.
  const commits = ["issue", "task"].includes(where.handler.type) &&
      definition.verify.checks.length === 0 &&
      where.mainRepo
    ? [commitGate()]
    : [];
  const extra = [...(checks.gate ? [checks.gate] : []), ...commits];
  const verifier = extra.length > 0
    ? new CompositeChecker([...configured.checkers, ...extra], {
      allMustPass: configured.allMustPass,
    })
    : configured;
  return { checks, verifier };
}

/**
 * What `--dry-run` prints: the agent, handler, cap, permissions, checks,
 * system prompt and first prompt, as text or one JSON object.
 *
 * @param plan The prepared run.
 * @returns The output.
 */
export function dryRunOutput(plan: RunPlan): string {
  const { definition, loaded, handler, criteria, checks } = plan;
  if (plan.flags.json) {
    return `${
      JSON.stringify({
        dryRun: true,
        agent: definition.name,
        definition: loaded.displayPath,
        handler: handler.type,
        criteria: criteria.short,
        maxIterations: plan.maxIterations,
        permissionMode: plan.permissionMode,
        backend: backendText(definition.behavior.backend),
        checks: {
          detected: checks.detection?.checks ?? [],
          hints: checks.detection?.hints ?? [],
          skipped: checks.detection?.skipped ?? [],
          baseline: checks.gate !== undefined && definition.verify.baseline,
          summary: plan.checksText,
        },
        systemPrompt: plan.systemPrompt,
        prompt: plan.initialPrompt,
      })
    }\n`;
  }
  return [
    `Agent:       ${definition.name} (${
      loaded.builtin ? "built-in" : "local"
    }: ${loaded.displayPath})`,
    `Handler:     ${handler.type} (${criteria.short})`,
    `Iterations:  at most ${plan.maxIterations}`,
    `Backend:     ${backendText(definition.behavior.backend)}`,
    `Permissions: ${plan.permissionMode}; allowed tools: ${
      definition.behavior.allowedTools.join(", ")
    }`,
    "",
    "--- checks (what gates completion) ---",
    plan.checksText,
    "",
    "--- system prompt (appended to Claude Code's) ---",
    plan.systemPrompt,
    "",
    "--- prompt for iteration 1 ---",
    plan.initialPrompt,
    "",
  ].join("\n");
}

/** The backend as the dry run shows it: `claude`, or the name and the resolved ACP command. */
function backendText(setting: BackendSetting): string {
  const resolved = resolveBackend(setting);
  if (resolved === "claude") return "claude (Claude Agent SDK)";
  return `${resolved.name} (ACP: ${resolved.acp.command.join(" ")})`;
}
