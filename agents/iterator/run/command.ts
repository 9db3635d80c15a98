/**
 * The run command, one path from the command line to the exit code:
 * prepare the run (`plan.ts`), check that it can finish (`preflight.ts`)
 * and that its model can be used, open its workspace (`workspace.ts`), run
 * the loop (`agents/loop/runner.ts`) with progress on stderr, and end it
 * (`end.ts`).
 *
 * @module
 */

import { join } from "node:path";
import type { Paint } from "../terminal/colour.ts";
import { type BackendSetting, resolveBackend } from "../../backends/presets.ts";
import process from "node:process";
import { ClaudeBackend } from "../../backends/claude.ts";
import { checkModelAccess, connectionCause, modelAccess } from "../../backends/model_access.ts";
import type { AgentBackend } from "../../backends/port.ts";
import { GitHubCli } from "../../github/port.ts";
import type { RunLock } from "../../support/file_lock.ts";
import type { RunStore, StoredRun } from "../../store/mod.ts";
import type { RunCommand } from "../flags/command_line.ts";
import { FINISH_STEPS } from "../../finish/workflow.ts";
import { finishToolAnswer } from "../../finish/tool.ts";
import { FinishAhead } from "../../finish/ahead.ts";
import { endRun } from "./end.ts";
import { preflight } from "./preflight.ts";
import { GitHubPullRequestGate } from "./pull_request_gate.ts";
import { createReporter, progressMode, type ProgressReporter } from "../terminal/progress.ts";
import { stderrColumns, stderrLine } from "../terminal/live_line.ts";
import { EXIT_CODES, runIterations, type RunResult } from "../../loop/runner.ts";
import { sessionSettings, workerProcess } from "../../loop/agent_sessions.ts";
import { dryRunOutput, type FirstSession, prepareRun, type RunPlan } from "./plan.ts";
import { resumeCommand } from "./report_facts.ts";
import { guardRun, lockRunAndIssue } from "./locks.ts";
import { RUN_TAG, tagProcess } from "../../support/process_tags.ts";
import { openWorkspace, type Workspace } from "./workspace.ts";

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
  /** Standard error with escapes kept, for the live line alone. @default stderr */
  stderrLive?: (text: string) => void;
  /** Colours text for stdout (a terminal's, unless NO_COLOR). @default no colour */
  paint?: Paint;
  /** Colours text for stderr. @default no colour */
  paintError?: Paint;
}

/**
 * Run an agent: prepare, preflight, workspace, loop, finish.
 *
 * @param command The run's command line, parsed up to the agent definition.
 * @param io Output, backend and abort signal.
 * @param options `resume`: a recorded run to continue, `runLock` its lock
 * (already held); `store` and `json` flags given with `--resume`.
 * @returns The exit code.
 */
export async function runCommand(
  command: RunCommand,
  io: CommandIO,
  options: { resume?: StoredRun; json?: boolean; storePath?: string; runLock?: RunLock } = {},
): Promise<number> {
  const claude = io.backend ? undefined : new ClaudeBackend();
  // The SDK loads while the definition, handler and store are prepared.
  if (claude && !command.dryRun) claude.preload();
  // The first agent process boots while the handler, prompts and checks are prepared.
  const early = io.backend ?? claude!;
  let untag: (() => void) | undefined;
  let plan: RunPlan | undefined;
  try {
    plan = await prepareRun(command, {
      ...options,
      stderr: io.stderr,
      onFirstSession: (first) => {
        if (!early.warm || first.definition.behavior.backend !== "claude") return;
        // Tagged as this run's from its start, so that it dies with the run.
        untag = tagProcess(RUN_TAG, first.runId);
        warmFirstSession(first, early);
      },
    });
  } catch (error) {
    // A run refused while it was prepared leaves no process behind.
    if (untag) await early.release?.();
    untag?.();
    throw error;
  }
  try {
    return await runPlan(plan, claude, io, { ...options, warmed: untag !== undefined });
  } finally {
    untag?.();
  }
}

/** The run once prepared: its backends, then the checks, the loop and the end. */
async function runPlan(
  plan: RunPlan,
  claude: ClaudeBackend | undefined,
  io: CommandIO,
  options: { runLock?: RunLock; warmed: boolean },
): Promise<number> {
  const backend = io.backend ?? await chooseBackend(plan.definition.behavior.backend, claude!);
  const reproduceBackend = plan.definition.verify.reproduceBackend;
  // The verifier and the reviewer: another backend when agent.json names one.
  const independentBackend = reproduceBackend && !io.backend
    ? await chooseBackend(reproduceBackend, claude ?? new ClaudeBackend())
    : undefined;
  if (plan.flags.dryRun) {
    plan.store?.close();
    io.stdout(dryRunOutput(plan));
    return 0;
  }
  try {
    return await checkAndRun(plan, backend, independentBackend, io, options);
  } finally {
    // A run that ended before its loop leaves no warm process behind (endRun released the others).
    await backend.release?.();
  }
}

/**
 * Start the first session's agent process before the run is set up, with the
 * settings the loop will ask for (the loop finds it and claims it). Only for
 * a new run in the `fresh` session mode with `prewarm` on.
 */
function warmFirstSession(
  plan: FirstSession & { resume?: StoredRun; systemPrompt?: string },
  backend: AgentBackend,
): void {
  const behavior = plan.definition.behavior;
  if (
    !backend.warm || plan.resume || behavior.session !== "fresh" || !behavior.prewarm ||
    plan.maxIterations < 1
  ) return;
  backend.warm(workerProcess(
    sessionSettings({
      behavior,
      // Sent when the session claims the process: early, the prompts are not resolved yet.
      systemPrompt: plan.systemPrompt ?? "",
      cwd: plan.cwd,
      permissionMode: plan.permissionMode,
      env: plan.agentEnv,
      refuseCommands: plan.refuseCommands,
      spentUsd: 0,
      sandbox: plan.definition.verify.sandbox,
      network: plan.definition.verify.network,
    }),
    plan.definition.finish.tool,
  ));
}

/**
 * The user's own Claude Code settings file, when it exists and the run's
 * Claude sessions do not read it (`behavior.settingSources` without `user`).
 */
async function userSettingsUnread(plan: RunPlan): Promise<string | undefined> {
  const behavior = plan.definition.behavior;
  if (behavior.backend !== "claude" || behavior.settingSources.includes("user")) return undefined;
  const home = Deno.env.get("HOME");
  const dir = Deno.env.get("CLAUDE_CONFIG_DIR") ?? (home ? join(home, ".claude") : undefined);
  if (!dir) return undefined;
  const file = join(dir, "settings.json");
  const found = await Deno.stat(file).then((info) => info.isFile, () => false);
  if (!found) return undefined;
  return home && file.startsWith(`${home}/`) ? `~/${file.slice(home.length + 1)}` : file;
}

/** The checks before anything is recorded, the locks, the workspace, the loop and the run's end. */
async function checkAndRun(
  plan: RunPlan,
  backend: AgentBackend,
  independentBackend: AgentBackend | undefined,
  io: CommandIO,
  options: { runLock?: RunLock; warmed: boolean },
): Promise<number> {
  await preflight({
    definition: plan.definition,
    displayPath: plan.loaded.displayPath,
    checks: plan.checks,
    permissionMode: plan.permissionMode,
    changesCode: ["issue", "project"].includes(plan.handler.type) || plan.checks.gate !== undefined,
    createPr: plan.flags.createPr && plan.mainRepo
      ? {
        repo: plan.mainRepo,
        github: new GitHubCli({ cwd: plan.cwd, repo: plan.flags.repo, attempts: 2 }),
      }
      : undefined,
  });
  // Before anything is recorded: a model the agent cannot reach fails in seconds, not minutes.
  if (!io.backend) await checkModels(plan);
  const locks = await lockRunAndIssue({
    storeFile: plan.storeFile,
    runId: plan.runId,
    issue: plan.flags.issue,
    held: options.runLock,
    checkout: !plan.flags.worktree,
  });
  // Whatever this run starts dies with it, however it ends.
  const guard = await guardRun(plan.storeFile, plan.runId, plan.mainRepo).catch(async (error) => {
    await locks.release({ tidy: true });
    throw error;
  });
  if (guard.orphans > 0) {
    io.stderr(
      `[finishline] stopped ${guard.orphans} process${
        guard.orphans === 1 ? "" : "es"
      } left running by an earlier run that was killed\n`,
    );
  }
  if (guard.worktrees.length > 0) {
    io.stderr(
      `[finishline] removed ${guard.worktrees.length} check worktree${
        guard.worktrees.length === 1 ? "" : "s"
      } left by an earlier run that was killed\n`,
    );
  }
  plan.checks.gate?.ownedBy(plan.runId);
  const unread = await userSettingsUnread(plan);
  if (unread && !plan.flags.quiet) {
    io.stderr(
      `[finishline] your Claude Code settings (${unread}) are not read: the agent runs with the project's settings only (add "user" to behavior.settingSources to read them)\n`,
    );
  }
  // Unless it started while the run was prepared, the first agent process starts now
  // (tagged as this run's, so it dies with it), while the workspace and the loop get ready.
  if (!options.warmed) warmFirstSession(plan, backend);
  let started = false;
  try {
    const workspace = await openWorkspace(plan, io.stderr);
    started = true;
    const mode = progressMode(plan.flags, {
      terminal: io.stderrIsTerminal ?? false,
      ci: /^(1|true|yes)$/i.test(Deno.env.get("CI") ?? ""),
    });
    const columns = io.stderrIsTerminal ? stderrColumns : () => undefined;
    const reporter = createReporter(mode, {
      write: (line) => io.stderr(`${line}\n`),
      live: mode === "live" ? () => stderrLine(io.stderrLive ?? io.stderr) : undefined,
      columns,
    });
    // Lines written while the live line shows go above it.
    const signals = io.signal
      ? undefined
      : listenForSignals((text) => reporter.stderr(text), resumeCommand(plan.runId));
    // The finish model's process, started when the finish is near (its one request then pays no start).
    const finishAhead = new FinishAhead(backend, {
      ...workspace.cleanup.finish,
      cwd: workspace.workDir,
      onEvent: (kind, data) => workspace.log.event(kind, data),
    });
    try {
      const result = await runLoop(plan, workspace, {
        backend,
        independentBackend,
        io,
        reporter,
        signal: io.signal ?? signals!.signal,
        finishAhead,
      });
      // A second interrupt during the finish exits at once, saying what is left to finish.
      signals?.finishing(() => finishLeft(workspace.store, plan.runId, result));
      return await endRun(plan, workspace, result, {
        backend,
        io,
        columns: columns(),
        finishAhead,
      });
    } finally {
      // Whatever path the run took, the process opened ahead does not outlive it.
      await finishAhead.close();
      signals?.dispose();
    }
  } catch (error) {
    // Once the run started, a failure is its outcome, never "nothing was run" (exit 2).
    if (started && error instanceof Error) {
      Object.defineProperty(error, "runStarted", { value: true });
    }
    throw error;
  } finally {
    await guard.end();
    // A run that never started leaves no folder of its own behind.
    await locks.release({ tidy: !started });
  }
}

/** The loop, with progress on stderr and SIGINT/SIGTERM stopping it cleanly. */
async function runLoop(
  plan: RunPlan,
  workspace: Workspace,
  options: {
    backend: AgentBackend;
    independentBackend?: AgentBackend;
    io: CommandIO;
    reporter: ProgressReporter;
    signal: AbortSignal;
    finishAhead: FinishAhead;
  },
): Promise<RunResult> {
  const { reporter } = options;
  const { store, worktree, git, log } = workspace;
  let nearLast = false;
  try {
    return await runIterations({
      definition: plan.definition,
      handler: plan.handler,
      backend: options.backend,
      independentBackend: options.independentBackend,
      systemPrompt: plan.systemPrompt,
      args: plan.args,
      cwd: workspace.workDir,
      maxIterations: plan.maxIterations,
      agentDir: plan.loaded.agentDir,
      verifier: plan.verifier,
      repoChecks: plan.checks.gate,
      refuseCommands: plan.refuseCommands,
      env: plan.agentEnv,
      connectionCause: options.io.backend ? undefined : probeConnection(plan),
      pullRequest: plan.prChecks && worktree && git
        ? new GitHubPullRequestGate({
          worktree,
          git,
          github: new GitHubCli({ cwd: workspace.workDir, repo: plan.flags.repo, attempts: 2 }),
          timeoutMs: plan.definition.verify.prChecksTimeoutSeconds * 1000,
          log,
          stderr: (text) => reporter.stderr(text),
        })
        : undefined,
      git,
      ignorePaths: workspace.ignorePaths,
      rescueOnEnd: worktree !== undefined,
      runId: plan.runId,
      permissionMode: plan.permissionMode,
      log,
      store,
      initialPrompt: plan.initialPrompt,
      // The loop does not import the finish workflow: it is handed in.
      finishTool: (call, context) =>
        finishToolAnswer(
          {
            store,
            runId: plan.runId,
            ...workspace.cleanup.finish,
            backend: options.backend,
            cwd: workspace.workDir,
            // An ACP backend holds one agent process, busy with this very call.
            skipModel: options.backend.name === "claude"
              ? undefined
              : `the ${options.backend.name} agent is busy with the finish call`,
            onEvent: (kind, data) => log.event(kind, data),
            opened: () => options.finishAhead.take(),
          },
          call,
          context,
        ),
      resume: plan.resume
        ? {
          summaries: store.iterations(plan.runId).map((row) => row.summary),
          baseline: plan.resume.baseline,
        }
        : undefined,
      signal: options.signal,
      onEvent: (event) => {
        if (event.type === "store_failed") workspace.storeFault ??= event.error;
        // The finish is near: its model's process starts while the agent works, from the
        // iteration before the last (an iteration in a kept process can take less than the
        // finish model's start), once the agent's process has answered, so that the two
        // starts do not compete.
        if (event.type === "iteration_started") {
          nearLast = event.iteration >= event.maxIterations - 1;
        } else if (nearLast && event.type === "message") {
          options.finishAhead.open("iteration cap near");
        } else if (event.type === "verification" && event.verification.passed) {
          options.finishAhead.open("claim passed");
        }
        reporter.onEvent(event);
      },
    });
  } finally {
    // The loop closes the gate at its end; this covers a loop that threw.
    await plan.checks.gate?.close();
    reporter.stop();
  }
}

/** What the second interrupt says during the finish: the outcome recorded, the steps left. */
function finishLeft(store: RunStore, runId: string, result: RunResult): string {
  let left: string[];
  let status: string | undefined;
  try {
    const done = new Set(store.getFinish(runId).steps);
    left = FINISH_STEPS.filter((step) => !done.has(step));
    status = store.getRun(runId)?.status;
  } catch {
    left = [...FINISH_STEPS];
  }
  const outcome = status && status !== "running"
    ? `the outcome (${status}) is recorded`
    : `the outcome (${result.status}) may not be recorded`;
  return left.length === 0
    ? `${outcome} and the finish workflow is done`
    : `${outcome}; finish steps left: ${left.join(", ")}; run "finish ${runId}" to complete them`;
}

/**
 * SIGINT/SIGTERM abort the run; a second one exits at once, saying how to
 * resume. From `finishing` on, the first one during the finish only warns,
 * and the exit says what is left to finish.
 */
function listenForSignals(
  stderr: (text: string) => void,
  resume: string,
): { signal: AbortSignal; finishing: (left: () => string) => void; dispose: () => void } {
  const controller = new AbortController();
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  let finishLeft: (() => string) | undefined;
  let warned = false;
  const onSignal = () => {
    if (finishLeft && !warned && !controller.signal.aborted) {
      warned = true;
      stderr(
        "[finishline] interrupted: the run has ended and is finishing (press Ctrl-C again to exit at once)\n",
      );
      return;
    }
    if (controller.signal.aborted || warned) {
      stderr(
        `[finishline] second interrupt: exiting now; ${
          finishLeft ? finishLeft() : `resume the run with: ${resume}`
        }\n`,
      );
      // node's exit runs the SDK's hook that stops the Claude Code processes.
      process.exit(EXIT_CODES.interrupted);
    }
    stderr(
      "[finishline] interrupted: stopping the agent (press Ctrl-C again to exit at once)\n",
    );
    controller.abort(new Error("interrupted"));
  };
  for (const signal of signals) Deno.addSignalListener(signal, onSignal);
  return {
    signal: controller.signal,
    finishing: (left) => finishLeft = left,
    dispose: () => {
      for (const signal of signals) Deno.removeSignalListener(signal, onSignal);
    },
  };
}

/** Set to skip the model check before the first session (credentials, API host). */
const SKIP_MODEL_CHECK = "FINISHLINE_SKIP_MODEL_CHECK";

/**
 * The model check of every backend the run uses (the agent's, the
 * verifier's): credentials, and the API host at the TCP/TLS level.
 */
async function checkModels(plan: RunPlan): Promise<void> {
  if (/^(1|true|yes)$/i.test(Deno.env.get(SKIP_MODEL_CHECK) ?? "")) return;
  const { behavior, verify } = plan.definition;
  const settings = new Map<string, BackendSetting>();
  for (const setting of [behavior.backend, verify.reproduceBackend]) {
    if (setting !== undefined) settings.set(JSON.stringify(setting), setting);
  }
  const options = {
    env: { ...Deno.env.toObject(), ...plan.agentEnv },
    cwd: plan.cwd,
    settingSources: behavior.settingSources,
  };
  await Promise.all([...settings.values()].map((setting) => checkModelAccess(setting, options)));
}

/** The probe that names the cause of the agent's connection errors during the run. */
function probeConnection(plan: RunPlan): () => Promise<string | undefined> {
  const env = { ...Deno.env.toObject(), ...plan.agentEnv };
  const { behavior } = plan.definition;
  return async () =>
    await connectionCause(
      await modelAccess(behavior.backend, {
        env,
        cwd: plan.cwd,
        settingSources: behavior.settingSources,
      }),
      { env, stageTimeoutMs: 3000 },
    );
}

/** The backend a definition names: the SDK one, or an ACP agent. */
async function chooseBackend(
  setting: BackendSetting,
  claude: ClaudeBackend,
): Promise<AgentBackend> {
  const resolved = resolveBackend(setting);
  if (resolved === "claude") return claude;
  // Loaded only for an ACP agent: the Claude Code runs never wait for its module.
  const { AcpBackend } = await import("../../backends/acp.ts");
  return new AcpBackend(resolved.acp, resolved.name);
}
