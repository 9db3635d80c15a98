/**
 * The finishline iterator CLI: flags -> agent definition -> completion
 * handler -> iteration loop on Claude Code -> result and exit code.
 *
 * ```sh
 * deno run -A agents/iterator/main.ts --issue 42
 * deno run -A agents/iterator/main.ts --iterate-max 3 --task "Tidy the README"
 * ```
 *
 * @module
 */

import { isAbsolute, join, relative, resolve } from "node:path";
import type { AgentDefinition } from "../common/agent_definition.ts";
import { buildVerifier } from "../common/checks/verifier.ts";
import { type GitFault, GitRepo } from "../common/git.ts";
import { GitHubCli } from "../common/github.ts";
import {
  createWorktree,
  removeWorktreeIfClean,
  type Worktree,
  WORKTREES_DIR,
} from "../common/worktree.ts";
import { ClaudeBackend } from "../common/backends/claude.ts";
import type { AgentBackend, SessionPermissionMode } from "../common/backends/types.ts";
import { createCompletionHandler, iterationCap } from "../common/completion/factory.ts";
import { listAgents, loadDefinition } from "../common/definition.ts";
import { UsageError } from "../common/errors.ts";
import { RunLog } from "../common/log.ts";
import { argsToVariables, PromptResolver } from "../common/prompt_resolver.ts";
import { applyFlags, HELP_TEXT, parseBaseFlags, parseRunFlags, runArgs } from "./cli.ts";
import { scaffoldAgent } from "./init.ts";
import { finalLine, iterationLine } from "./progress.ts";
import { EXIT_CODES, runIterations, type RunResult } from "./runner.ts";

/** finishline's version (kept equal to deno.json's). */
export const VERSION = "0.1.0";

/** Where the CLI writes and what it runs on; tests replace parts of it. */
export interface MainIO {
  /** Standard output. @default Deno.stdout */
  stdout?: (text: string) => void;
  /** Standard error. @default Deno.stderr */
  stderr?: (text: string) => void;
  /** The agent backend. @default ClaudeBackend */
  backend?: AgentBackend;
  /** Aborts the run; when absent, SIGINT and SIGTERM do. */
  signal?: AbortSignal;
}

const encoder = new TextEncoder();

/**
 * Run the CLI.
 *
 * @param argv Command-line arguments.
 * @param io Output streams, backend and abort signal.
 * @returns The process exit code.
 */
export async function main(argv: string[], io: MainIO = {}): Promise<number> {
  const stdout = io.stdout ??
    ((text: string) => Deno.stdout.writeSync(encoder.encode(text)));
  const stderr = io.stderr ??
    ((text: string) => Deno.stderr.writeSync(encoder.encode(text)));
  try {
    return await run(argv, { ...io, stdout, stderr });
  } catch (error) {
    if (error instanceof UsageError) {
      stderr(`finishline: ${error.message}\n`);
      return error.exitCode;
    }
    stderr(
      `finishline: unexpected error: ${
        error instanceof Error ? error.stack ?? error.message : error
      }\n`,
    );
    return EXIT_CODES.failed;
  }
}

async function run(
  argv: string[],
  io: MainIO & {
    stdout: (text: string) => void;
    stderr: (text: string) => void;
  },
): Promise<number> {
  const base = parseBaseFlags(argv);
  if (base.help) {
    io.stdout(`${HELP_TEXT}\n`);
    return 0;
  }
  if (base.version) {
    io.stdout(`finishline ${VERSION}\n`);
    return 0;
  }
  const cwd = await workingDirectory(base.cwd);
  if (base.list) {
    const agents = await listAgents({ cwd });
    for (const agent of agents) {
      const origin = agent.builtin ? "built-in" : "local";
      const detail = agent.error
        ? `error: ${agent.error}`
        : `${agent.completionType} · ${agent.description}`;
      io.stdout(`${agent.name.padEnd(20)} ${origin.padEnd(9)} ${detail}\n`);
    }
    return 0;
  }
  if (base.init !== undefined) {
    const created = await scaffoldAgent(base.init, { cwd });
    for (const path of created) io.stdout(`created ${path}\n`);
    return 0;
  }

  const loaded = await loadDefinition(base.agent, { cwd });
  const flags = parseRunFlags(argv, loaded.definition);
  const definition = applyFlags(loaded.definition, flags);
  const args = { ...runArgs(flags), cwd };
  const maxIterations = iterationCap(definition);
  const resolver = await PromptResolver.create({
    agentDir: loaded.agentDir,
    registry: definition.prompts.registry,
    fallbackDir: definition.prompts.fallbackDir,
    systemPromptPath: definition.behavior.systemPromptPath,
    cwd,
  });
  const handler = await createCompletionHandler(definition, args, {
    agentDir: loaded.agentDir,
    cwd,
    resolver,
    maxIterations,
  });
  const criteria = handler.buildCompletionCriteria();
  const systemPrompt = await resolver.resolve("system", {
    ...argsToVariables(args),
    "uv-agent_name": definition.name,
    "uv-completion_criteria": criteria.detailed,
    "uv-max_iterations": maxIterations,
    "uv-complete_task_instructions": completeTaskInstructions(definition),
  });
  const verifier = await buildVerifier(definition.verify, { agentDir: loaded.agentDir, cwd });
  const permissionMode: SessionPermissionMode = flags.dangerouslySkipPermissions
    ? "bypassPermissions"
    : definition.behavior.permissionMode;

  if (flags.dryRun) {
    const prompt = await handler.buildInitialPrompt(args);
    if (flags.json) {
      io.stdout(`${
        JSON.stringify({
          dryRun: true,
          agent: definition.name,
          definition: loaded.displayPath,
          handler: handler.type,
          criteria: criteria.short,
          maxIterations,
          permissionMode,
          systemPrompt,
          prompt,
        })
      }\n`);
    } else {
      io.stdout(
        [
          `Agent:       ${definition.name} (${
            loaded.builtin ? "built-in" : "local"
          }: ${loaded.displayPath})`,
          `Handler:     ${handler.type} (${criteria.short})`,
          `Iterations:  at most ${maxIterations}`,
          `Permissions: ${permissionMode}; allowed tools: ${
            definition.behavior.allowedTools.join(", ")
          }`,
          "",
          "--- system prompt (appended to Claude Code's) ---",
          systemPrompt,
          "",
          "--- prompt for iteration 1 ---",
          prompt,
          "",
        ].join("\n"),
      );
    }
    return 0;
  }

  const runId = crypto.randomUUID();
  const logDir = isAbsolute(definition.logging.directory)
    ? definition.logging.directory
    : join(cwd, definition.logging.directory);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const mainRepo = await GitRepo.open(cwd, { timeoutMs: definition.git.timeoutSeconds * 1000 });
  const ignorePaths = mainRepo
    ? finishlinePaths(mainRepo.root, [logDir, join(mainRepo.root, WORKTREES_DIR)])
    : [];
  if (mainRepo) await excludeFromGit(mainRepo, ignorePaths);
  let worktree: Worktree | undefined;
  if (flags.worktree) {
    if (!mainRepo) {
      throw new UsageError(`Flag "--worktree" needs a git repository, and "${cwd}" is not in one`);
    }
    const id = flags.issue
      ? `issue-${flags.issue}`
      : flags.project
      ? `project-${flags.project}`
      : runId.slice(0, 8);
    worktree = await createWorktree(mainRepo, {
      agent: definition.name,
      id,
      baseBranch: flags.baseBranch,
    });
  }
  const workDir = worktree?.path ?? cwd;
  const log = RunLog.open(join(logDir, `${stamp}-${runId.slice(0, 8)}.jsonl`));
  const faultLogger = (fault: GitFault) =>
    log.event("git_fault", { args: fault.args, code: fault.code, message: fault.message });
  const git = await GitRepo.open(workDir, {
    timeoutMs: definition.git.timeoutSeconds * 1000,
    onFault: faultLogger,
  });
  if (!git) {
    log.event("no_git", { cwd, note: "not a git repository: no commit evidence for this run" });
    io.stderr(
      `[finishline] note: "${cwd}" is not a git repository: no commit evidence, rescue or circuit breaker for this run\n`,
    );
  }
  if (worktree) {
    log.event("worktree", { ...worktree });
    io.stderr(`[finishline] working in worktree ${worktree.path} on branch ${worktree.branch}\n`);
  }
  const signals = io.signal ? undefined : listenForSignals(io.stderr);
  let result: RunResult;
  try {
    result = await runIterations({
      definition,
      handler,
      backend: io.backend ?? new ClaudeBackend(),
      systemPrompt,
      args,
      cwd: workDir,
      maxIterations,
      agentDir: loaded.agentDir,
      verifier,
      git,
      ignorePaths: worktree ? [] : ignorePaths,
      rescueOnEnd: worktree !== undefined,
      runId,
      permissionMode,
      log,
      signal: io.signal ?? signals!.signal,
      onEvent: (event) => {
        if (event.type === "iteration_started") {
          io.stderr(`[finishline] iteration ${event.iteration}/${event.maxIterations} started\n`);
        } else if (event.type === "iteration_finished") {
          io.stderr(`${iterationLine(event)}\n`);
        } else if (event.type === "probe") {
          io.stderr(
            `[finishline] status probe: ${event.status.status}${
              event.status.message ? ` (${event.status.message})` : ""
            }\n`,
          );
        } else if (event.type === "rescue") {
          io.stderr(
            `[finishline] commit rescue by the ${event.by}: ${
              event.clean ? "work committed" : "changes still uncommitted"
            }\n`,
          );
        }
      },
    });
  } finally {
    signals?.dispose();
  }
  let worktreeReport: Record<string, unknown> | undefined;
  if (worktree && mainRepo) {
    worktreeReport = { branch: worktree.branch, path: worktree.path, base: worktree.base };
    if (result.status === "completed" && flags.createPr) {
      worktreeReport.pullRequest = await openPullRequest(worktree, result, {
        cwd: workDir,
        repo: flags.repo,
        log,
        stderr: io.stderr,
      });
    }
    worktreeReport.removed = await removeWorktreeIfClean(mainRepo, worktree);
    log.event("worktree_done", worktreeReport);
    io.stderr(
      `[finishline] branch ${worktree.branch} holds the work; worktree ${
        worktreeReport.removed ? "removed" : `kept at ${worktree.path} (it has uncommitted changes)`
      }\n`,
    );
  }
  log.close();
  io.stderr(`${finalLine(result)}\n`);
  if (flags.json) {
    io.stdout(`${
      JSON.stringify({
        status: result.status,
        completionReason: result.completionReason,
        iterations: result.iterations,
        costUsd: result.costUsd,
        durationMs: result.durationMs,
        runId: result.runId,
        sessionIds: result.sessionIds,
        logFile: result.logFile,
        ...(worktreeReport ? { worktree: worktreeReport } : {}),
      })
    }\n`);
  }
  return EXIT_CODES[result.status];
}

/**
 * What the system prompt says about complete_task.
 *
 * @param definition The agent definition.
 * @returns Instructions, or an empty string when complete_task is not required.
 */
function completeTaskInstructions(definition: AgentDefinition): string {
  if (!definition.behavior.requireCompleteTask) return "";
  return [
    "## Finishing a session: the complete_task tool",
    "",
    "Before you stop, always call the `complete_task` tool (from the finishline MCP server):",
    "restate the original request, say what you did, and choose a status: `success` when",
    "every part of the request is done and committed, `blocked` when an obstacle you cannot",
    "remove stops you (say what in remaining_work), or `partial` when only some parts are",
    "done. With success, finishline verifies the work at once; if the checks fail, the tool",
    "result says why: fix it and call complete_task again.",
  ].join("\n");
}

/**
 * Paths relative to the repository root that finishline itself writes.
 *
 * @param root The repository root.
 * @param dirs Absolute folders.
 * @returns Those inside the repository, relative and with a trailing slash.
 */
function finishlinePaths(root: string, dirs: string[]): string[] {
  return dirs
    .map((dir) => relative(root, dir))
    .filter((path) => path !== "" && !path.startsWith(".."))
    .map((path) => `${path.replaceAll("\\", "/")}/`);
}

/**
 * Keep finishline's own files out of `git status` (and so out of the agent's
 * commits) through the repository's local exclude file.
 *
 * @param git The repository.
 * @param paths Paths relative to the root.
 */
async function excludeFromGit(git: GitRepo, paths: string[]): Promise<void> {
  if (paths.length === 0) return;
  const info = await git.exec(["rev-parse", "--git-path", "info/exclude"]);
  if (info.code !== 0) return;
  const file = resolve(git.cwd, info.stdout.trim());
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch {
    // no exclude file yet
  }
  const lines = new Set(text.split("\n").map((line) => line.trim()));
  const missing = paths.map((path) => `/${path}`).filter((line) => !lines.has(line));
  if (missing.length === 0) return;
  await Deno.mkdir(resolve(file, ".."), { recursive: true });
  const prefix = text === "" || text.endsWith("\n") ? "" : "\n";
  await Deno.writeTextFile(file, `${prefix}# finishline's own files\n${missing.join("\n")}\n`, {
    append: true,
  });
}

/**
 * Push the worktree's branch and open a pull request with the run summary.
 *
 * @param worktree The worktree.
 * @param result The completed run.
 * @param options Where gh runs, the repository, the log.
 * @returns The pull request URL, or undefined when it could not be opened.
 */
async function openPullRequest(
  worktree: Worktree,
  result: RunResult,
  options: { cwd: string; repo?: string; log: RunLog; stderr: (text: string) => void },
): Promise<string | undefined> {
  const repo = await GitRepo.open(options.cwd);
  const push = await repo?.exec(["push", "-u", "origin", worktree.branch]);
  if (!push || push.code !== 0) {
    const why = push?.stderr.split("\n").find((line) => line.trim()) ?? "not a repository";
    options.log.event("pull_request_failed", { step: "push", error: why });
    options.stderr(`[finishline] cannot push ${worktree.branch}: ${why}\n`);
    return undefined;
  }
  const last = result.summaries.at(-1);
  const body = [
    `Opened by finishline after run \`${result.runId}\`: ${result.completionReason}.`,
    "",
    last?.completeTask ? `**Summary:** ${last.completeTask.summary}` : "",
    "",
    `Iterations: ${result.iterations}; cost: $${result.costUsd.toFixed(4)}; duration: ${
      (result.durationMs / 1000).toFixed(1)
    } s.`,
  ].join("\n");
  const github = new GitHubCli({ cwd: options.cwd, repo: options.repo, attempts: 2 });
  const url = await github.createPullRequest({
    base: worktree.base,
    head: worktree.branch,
    title: last?.completeTask?.summary.split("\n")[0].slice(0, 72) ||
      `finishline: ${worktree.branch}`,
    body,
  });
  options.log.event(url ? "pull_request" : "pull_request_failed", { url, step: "create" });
  if (url) options.stderr(`[finishline] opened pull request ${url}\n`);
  return url;
}

async function workingDirectory(flag: string | undefined): Promise<string> {
  const cwd = flag === undefined ? Deno.cwd() : resolve(flag);
  try {
    if (!(await Deno.stat(cwd)).isDirectory) throw new Error("not a directory");
  } catch {
    throw new UsageError(
      `Flag "--cwd" expects an existing directory, got "${flag}"`,
    );
  }
  return cwd;
}

function listenForSignals(
  stderr: (text: string) => void,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  const onSignal = () => {
    if (controller.signal.aborted) {
      stderr("[finishline] second interrupt: exiting now\n");
      Deno.exit(EXIT_CODES.interrupted);
    }
    stderr(
      "[finishline] interrupted: stopping the agent (press Ctrl-C again to exit at once)\n",
    );
    controller.abort(new Error("interrupted"));
  };
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
    },
  };
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
