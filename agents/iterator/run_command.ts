/**
 * The run command: flags -> agent definition -> completion handler ->
 * iteration loop on Claude Code -> finish workflow -> exit code.
 *
 * @module
 */

import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { ClaudeBackend } from "../common/backends/claude.ts";
import type { AgentBackend, SessionPermissionMode } from "../common/backends/types.ts";
import { CompositeChecker } from "../common/checks/composite.ts";
import { GitChecker } from "../common/checks/git.ts";
import { buildVerifier } from "../common/checks/verifier.ts";
import { createCompletionHandler, iterationCap } from "../common/completion/factory.ts";
import { loadDefinition } from "../common/definition.ts";
import { completeTaskInstructions } from "../common/complete_task.ts";
import { UsageError } from "../common/errors.ts";
import { type GitFault, GitRepo } from "../common/git.ts";
import { GitHubCli } from "../common/github.ts";
import { learningsFinder } from "../common/learnings.ts";
import { RunLog } from "../common/log.ts";
import { argsToVariables, PromptResolver } from "../common/prompt_resolver.ts";
import { DEFAULT_STORE_PATH, SqliteStore, type StoredRun } from "../common/store.ts";
import {
  createWorktree,
  removeWorktreeIfClean,
  type Worktree,
  WORKTREES_DIR,
} from "../common/worktree.ts";
import { applyFlags, parseBaseFlags, parseRunFlags, runArgs } from "./cli.ts";
import { runFinish } from "./finish.ts";
import { createReporter, finalLine, progressMode } from "./progress.ts";
import {
  describeChecks,
  GitHubPullRequestGate,
  ISSUE_CLOSE_REFUSAL,
  preflight,
  prepareChecks,
  runEvidence,
} from "./gate.ts";
import { renderReport } from "./report.ts";
import { EXIT_CODES, runIterations, type RunResult } from "./runner.ts";

/** Where a command writes and what it runs on. */
export interface CommandIO {
  /** Standard output. */
  stdout: (text: string) => void;
  /** Standard error. */
  stderr: (text: string) => void;
  /** The agent backend. @default ClaudeBackend */
  backend?: AgentBackend;
  /** Aborts the run; when absent, SIGINT and SIGTERM do. */
  signal?: AbortSignal;
  /** Whether stderr is a terminal (for the live status line). @default false */
  stderrIsTerminal?: boolean;
}

/**
 * The run history's file: `--store PATH`, else `.agent/.finishline/state.db`
 * under the root.
 *
 * @param flag The `--store` flag.
 * @param root The repository root or working directory.
 * @returns An absolute path.
 */
export function resolveStorePath(flag: string | undefined, root: string): string {
  return flag ? resolve(flag) : join(root, DEFAULT_STORE_PATH);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Open the run history: `--store PATH`, else `.agent/.finishline/state.db`
 * in the repository (or working directory).
 *
 * @param flag The `--store` flag.
 * @param root The repository root or working directory.
 * @returns The store.
 */
export function openStore(flag: string | undefined, root: string): SqliteStore {
  const path = resolveStorePath(flag, root);
  try {
    return SqliteStore.open(path);
  } catch (error) {
    throw new UsageError(
      `Cannot open the run history "${path}": ${
        error instanceof Error ? error.message.split("\n")[0] : error
      }`,
    );
  }
}

/**
 * Run an agent: flags -> definition -> handler -> loop -> finish workflow.
 *
 * @param argv The run's command-line arguments.
 * @param io Output, backend and abort signal.
 * @param options `resume`: a recorded run to continue; `store` and `json`
 * flags given with `--resume`.
 * @returns The exit code.
 */
export async function runCommand(
  argv: string[],
  io: CommandIO,
  options: { resume?: StoredRun; json?: boolean; storePath?: string } = {},
): Promise<number> {
  const base = parseBaseFlags(argv);
  const cwd = await workingDirectory(base.cwd);
  const backend = io.backend ?? new ClaudeBackend();
  // The SDK loads while the definition, handler and store are prepared.
  if (backend instanceof ClaudeBackend && !argv.includes("--dry-run")) backend.preload();
  const loaded = await loadDefinition(base.agent, { cwd });
  const flags = parseRunFlags(argv, loaded.definition);
  const definition = applyFlags(loaded.definition, flags);
  if (options.json) flags.json = true;
  const args = { ...runArgs(flags), cwd };
  const resume = options.resume;
  const runId = resume?.id ?? crypto.randomUUID();
  const mainRepo = await GitRepo.open(cwd, { timeoutMs: definition.git.timeoutSeconds * 1000 });
  // The store is opened only once the input is known to be good: bad input writes nothing.
  const storeFile = resolveStorePath(options.storePath ?? base.store, mainRepo?.root ?? cwd);
  let store: SqliteStore | undefined;
  // An existing history is read for {uv-learnings}; a new one is created only after validation.
  if (await exists(storeFile)) store = openStore(storeFile, cwd);
  const learnings = flags.noLearnings ? undefined : learningsFinder(() => store, {
    runId,
    count: definition.finish.maxLearnings,
    maxChars: definition.finish.maxLearningsChars,
  });
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
    learnings,
  });
  const criteria = handler.buildCompletionCriteria();
  const systemPrompt = await resolver.resolve("system", {
    ...argsToVariables(args),
    "uv-agent_name": definition.name,
    "uv-completion_criteria": criteria.detailed,
    "uv-max_iterations": maxIterations,
    "uv-complete_task_instructions": completeTaskInstructions(definition),
  });
  const configured = await buildVerifier(definition.verify, { agentDir: loaded.agentDir, cwd });
  // With no checks configured, the repository's own checks decide (verify.detect).
  const checks = await prepareChecks(definition, mainRepo?.root ?? cwd);
  // An issue is not resolved by changing nothing: without configured checks, it needs a commit.
  const commitGate = handler.type === "issue" && definition.verify.checks.length === 0 && mainRepo
    ? [new GitChecker({ minCommits: 1, name: "commits" })]
    : [];
  const gates = [...(checks.gate ? [checks.gate] : []), ...commitGate];
  const verifier = gates.length > 0
    ? new CompositeChecker([...configured.checkers, ...gates], {
      allMustPass: configured.allMustPass,
    })
    : configured;
  const checksText = describeChecks(definition, checks);
  const permissionMode: SessionPermissionMode = flags.dangerouslySkipPermissions
    ? "bypassPermissions"
    : definition.behavior.permissionMode;

  // Built now so that a template problem is a usage error before anything is written.
  const initialPrompt = resume ? undefined : await handler.buildInitialPrompt(args);
  if (flags.dryRun) {
    store?.close();
    const prompt = initialPrompt!;
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
          checks: {
            detected: checks.detection?.checks ?? [],
            hints: checks.detection?.hints ?? [],
            skipped: checks.detection?.skipped ?? [],
            baseline: checks.gate !== undefined && definition.verify.baseline,
            summary: checksText,
          },
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
          "--- checks (what gates completion) ---",
          checksText,
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

  const refuseCommands = handler.type === "issue" && definition.github.closeIssue === "runner"
    ? [ISSUE_CLOSE_REFUSAL]
    : [];
  const prChecks = flags.createPr === true && (definition.verify.prChecks ?? true);
  await preflight({
    definition,
    displayPath: loaded.displayPath,
    checks,
    permissionMode,
    changesCode: handler.type === "issue" || handler.type === "project" ||
      checks.gate !== undefined,
    createPr: flags.createPr && mainRepo
      ? { repo: mainRepo, github: new GitHubCli({ cwd, repo: flags.repo, attempts: 2 }) }
      : undefined,
  });

  store ??= openStore(storeFile, cwd);
  const logDir = isAbsolute(definition.logging.directory)
    ? definition.logging.directory
    : join(cwd, definition.logging.directory);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const ignorePaths = mainRepo
    ? finishlinePaths(mainRepo.root, [
      logDir,
      join(mainRepo.root, WORKTREES_DIR),
      ...(store ? [dirname(store.path)] : []),
    ])
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
  const cleanupFacts = {
    issue: flags.issue,
    repo: flags.repo,
    labels: definition.github.labels,
    worktreePath: worktree?.path,
    worktreeBranch: worktree?.branch,
    mainRepo: mainRepo?.root,
  };
  let runBaseline: string | null = resume?.baseline ?? null;
  if (resume) {
    // An iteration cut short by an interrupt is re-run, like one cut short by a crash.
    const last = store.iterations(runId).at(-1);
    if (last?.verdict === "interrupted") store.discardIteration(runId, last.number);
    store.setRunStatus(runId, "running", null);
    store.clearFinish(runId);
    store.updateCleanup(runId, cleanupFacts);
    log.event("run_resumed", { runId, after: store.iterations(runId).length });
    io.stderr(
      `[finishline] resuming run ${runId} after iteration ${store.iterations(runId).length}\n`,
    );
  } else {
    runBaseline = git ? await git.head() : null;
    store.createRun({
      id: runId,
      agent: definition.name,
      handler: handler.type,
      argv,
      cwd,
      startedAt: new Date().toISOString(),
      baseline: runBaseline,
      branch: worktree?.branch ?? null,
      maxIterations,
      cleanup: cleanupFacts,
    });
  }
  store.setRunPid(runId, Deno.pid);
  if (worktree) {
    log.event("worktree", { ...worktree });
    io.stderr(`[finishline] working in worktree ${worktree.path} on branch ${worktree.branch}\n`);
  }
  const mode = progressMode(flags, {
    terminal: io.stderrIsTerminal ?? false,
    ci: /^(1|true|yes)$/i.test(Deno.env.get("CI") ?? ""),
  });
  // dax draws the live status line; only a terminal run pays for importing it.
  const $ = mode === "live" ? (await import("dax")).default : undefined;
  const reporter = createReporter(mode, {
    write: (line) => io.stderr(`${line}\n`),
    live: $ && (() => $.progress({ prefix: "finishline", message: "starting" })),
  });
  const signals = io.signal ? undefined : listenForSignals(io.stderr);
  let result: RunResult;
  try {
    result = await runIterations({
      definition,
      handler,
      backend,
      systemPrompt,
      args,
      cwd: workDir,
      maxIterations,
      agentDir: loaded.agentDir,
      verifier,
      repoChecks: checks.gate,
      refuseCommands,
      pullRequest: prChecks && worktree && git
        ? new GitHubPullRequestGate({
          worktree,
          git,
          github: new GitHubCli({ cwd: workDir, repo: flags.repo, attempts: 2 }),
          timeoutMs: definition.verify.prChecksTimeoutSeconds * 1000,
          log,
          stderr: io.stderr,
        })
        : undefined,
      git,
      ignorePaths: worktree ? [] : ignorePaths,
      rescueOnEnd: worktree !== undefined,
      runId,
      permissionMode,
      log,
      store,
      initialPrompt,
      resume: resume
        ? {
          summaries: store.iterations(runId).map((row) => row.summary),
          baseline: resume.baseline,
        }
        : undefined,
      signal: io.signal ?? signals!.signal,
      onEvent: (event) => reporter.onEvent(event),
    });
  } finally {
    signals?.dispose();
    reporter.stop();
  }
  // The outcome is recorded at once, so a run whose finish workflow dies is never resumed.
  store.setRunStatus(runId, result.status, result.completionReason);
  store.setRunPid(runId, null);
  let worktreeReport: Record<string, unknown> | undefined;
  const finish = await runFinish({
    store,
    runId,
    outcome: { status: result.status, reason: result.completionReason },
    extractLearnings: definition.finish.extractLearnings,
    backend,
    model: definition.behavior.model,
    cwd: workDir,
    onEvent: (kind, data) => log.event(kind, data),
    cleanup: async () => {
      if (worktree && mainRepo) {
        worktreeReport = { branch: worktree.branch, path: worktree.path, base: worktree.base };
        if (result.pullRequest) {
          worktreeReport.pullRequest = result.pullRequest;
        } else if (result.status === "completed" && flags.createPr) {
          worktreeReport.pullRequest = await openPullRequest(worktree, result, {
            cwd: workDir,
            repo: flags.repo,
            log,
            stderr: io.stderr,
          });
          if (typeof worktreeReport.pullRequest === "string") {
            result.pullRequest = worktreeReport.pullRequest;
          }
        }
      }
      try {
        await handler.onRunEnd?.({
          status: result.status,
          reason: result.completionReason,
          ...(result.status === "completed"
            ? { evidence: await runEvidence(result, git, result.baseline?.commit ?? runBaseline) }
            : {}),
        });
      } catch (error) {
        log.event("handler_hook_failed", {
          hook: "onRunEnd",
          error: error instanceof Error ? error.message : String(error),
        });
      }
      if (worktree && mainRepo && worktreeReport) {
        worktreeReport.removed = await removeWorktreeIfClean(mainRepo, worktree);
        log.event("worktree_done", worktreeReport);
        io.stderr(
          `[finishline] branch ${worktree.branch} holds the work; worktree ${
            worktreeReport.removed
              ? "removed"
              : `kept at ${worktree.path} (it has uncommitted changes)`
          }\n`,
        );
      }
    },
  });
  await backend.release?.();
  if (finish.failed) {
    io.stderr(
      `[finishline] the finish workflow stopped at "${finish.failed.step}": ${finish.failed.error}; run "finish ${runId}" to complete it\n`,
    );
  }
  const reportFile = join(logDir, `${stamp}-${runId.slice(0, 8)}.md`);
  try {
    await Deno.writeTextFile(
      reportFile,
      renderReport({
        result,
        agent: definition.name,
        handler: `${handler.type} (${criteria.short})`,
        learnings: store.learningsOf(runId).map((learning) => learning.text),
        branch: worktree?.branch,
        checks: checksText,
        pullRequest: typeof worktreeReport?.pullRequest === "string"
          ? worktreeReport.pullRequest
          : undefined,
      }),
    );
  } catch (error) {
    log.event("report_failed", { error: error instanceof Error ? error.message : String(error) });
  }
  store.close();
  log.close();
  io.stderr(`${finalLine(result)}\n`);
  if (mode !== "quiet") io.stderr(`[finishline] report: ${reportFile}\n`);
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
        store: store.path,
        report: reportFile,
        ...(worktreeReport ? { worktree: worktreeReport } : {}),
      })
    }\n`);
  }
  return EXIT_CODES[result.status];
}

/**
 * Paths relative to the repository root that finishline itself writes.
 *
 * @param root The repository root.
 * @param dirs Absolute folders.
 * @returns Those inside the repository, relative and with a trailing slash.
 */
export function finishlinePaths(root: string, dirs: string[]): string[] {
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
export async function excludeFromGit(git: GitRepo, paths: string[]): Promise<void> {
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

/**
 * The working directory: `--cwd`, resolved and checked, else the process's.
 *
 * @param flag The `--cwd` flag.
 * @returns An absolute path.
 */
export async function workingDirectory(flag: string | undefined): Promise<string> {
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
