import * as acp from "@agentclientprotocol/sdk";

/** How to start an ACP agent: what `Deno.Command` needs besides the pipes. */
export interface AcpAgentOptions {
  args?: string[];
  cwd: string;
  env: Record<string, string>;
  /** Start from `env` alone rather than add it to this process's environment. */
  clearEnv?: boolean;
  /** Keep the agent's stderr (see {@linkcode AcpAgent.stderr}) rather than drop it. */
  keepStderr?: boolean;
}

/**
 * An ACP agent running as a child process, with a client connection that records
 * session updates and permission requests and allows every permission (once, when
 * the agent offers that).
 */
export class AcpAgent implements AsyncDisposable {
  readonly connection: acp.ClientSideConnection;
  readonly updates: acp.SessionNotification[] = [];
  readonly permissions: acp.RequestPermissionRequest[] = [];
  /** The agent's stderr, read to its end; "" unless `keepStderr`. */
  readonly stderr: Promise<string>;

  #child: Deno.ChildProcess;
  #closed: Promise<void> | undefined;

  constructor(program: string, options: AcpAgentOptions) {
    this.#child = new Deno.Command(program, {
      args: options.args ?? [],
      cwd: options.cwd,
      env: options.env,
      clearEnv: options.clearEnv ?? false,
      stdin: "piped",
      stdout: "piped",
      stderr: options.keepStderr ? "piped" : "null",
    }).spawn();
    this.stderr = options.keepStderr
      ? new Response(this.#child.stderr).text()
      : Promise.resolve("");
    const client: acp.Client = {
      requestPermission: (params) => {
        this.permissions.push(params);
        const allow = params.options.find((option) => option.kind === "allow_once") ??
          params.options.find((option) => option.kind.startsWith("allow")) ??
          params.options[0];
        return Promise.resolve({ outcome: { outcome: "selected", optionId: allow.optionId } });
      },
      sessionUpdate: (params) => {
        this.updates.push(params);
        return Promise.resolve();
      },
    };
    this.connection = new acp.ClientSideConnection(
      () => client,
      acp.ndJsonStream(this.#child.stdin, this.#child.stdout),
    );
  }

  /** The kinds of the session updates received, in order. */
  kinds(): string[] {
    return this.updates.map((u) => u.update.sessionUpdate);
  }

  /** The agent's message text, its chunks joined. */
  text(): string {
    return this.updates.map((u) => u.update)
      .map((u) =>
        u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""
      )
      .join("");
  }

  /** Ends the agent (SIGTERM) and waits for it to exit; calling it again is harmless. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#child.stdin.close().catch(() => {});
      this.#child.kill("SIGTERM");
      await this.#child.status;
      await this.stderr;
    })();
    return this.#closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
