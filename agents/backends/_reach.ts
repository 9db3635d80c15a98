/**
 * Whether a host answers, below HTTP: the name resolves, a TCP connection
 * opens, and for TLS the handshake (with its certificate check) completes.
 * No request is sent, so it costs no tokens; each stage has a short timeout.
 *
 * @module
 */

import { lookup } from "node:dns/promises";
import net from "node:net";
import tls from "node:tls";

/** A host and port, and whether it speaks TLS. */
export interface HostPort {
  /** The host name or IP address. */
  host: string;
  /** The port. */
  port: number;
  /** Whether a TLS handshake follows the connection. */
  tls: boolean;
}

/** Why a host did not answer. */
export interface ReachFailure {
  /** The stage that failed. */
  stage: "dns" | "connect" | "tls";
  /** The error code (`ENOTFOUND`, `ECONNREFUSED`, `CERT_HAS_EXPIRED`, `TIMEOUT`, ...). */
  code: string;
  /** The cause in a few words: `connection refused (ECONNREFUSED)`. */
  cause: string;
}

/** Options of {@linkcode reach}. */
export interface ReachOptions {
  /** How long each stage (DNS, TCP, TLS) may take, in milliseconds. @default 4000 */
  stageTimeoutMs?: number;
  /** How long all stages may take together, in milliseconds. @default 8000 */
  totalTimeoutMs?: number;
  /** Extra certificate authorities (PEM), as `NODE_EXTRA_CA_CERTS` gives them to the agent. */
  extraCa?: string;
  /** Accept any certificate (`NODE_TLS_REJECT_UNAUTHORIZED=0`, as the agent would). */
  insecure?: boolean;
}

const TIMEOUT = "TIMEOUT";

/** Network errors as people read them. */
const CONNECT_CAUSES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  EACCES: "connection not permitted",
  EPERM: "connection not permitted",
};

/**
 * Resolve, connect and (for TLS) shake hands with a host, then hang up.
 *
 * @param target The host, port and whether it speaks TLS.
 * @param options Timeouts and certificate settings.
 * @returns Undefined when it answered, else the stage that failed and why.
 */
export async function reach(
  target: HostPort,
  options: ReachOptions = {},
): Promise<ReachFailure | undefined> {
  const deadline = Date.now() + (options.totalTimeoutMs ?? 8000);
  // Each stage gets its own timeout, within what is left of the whole.
  const limit = () => Math.max(1, Math.min(options.stageTimeoutMs ?? 4000, deadline - Date.now()));
  const host = target.host.replace(/^\[|\]$/g, "");
  let addresses = [host];
  if (net.isIP(host) === 0) {
    const timeoutMs = limit();
    try {
      addresses = (await withTimeout(lookup(host, { all: true }), timeoutMs))
        .map((entry) => entry.address);
    } catch (error) {
      const code = errorCode(error);
      return {
        stage: "dns",
        code,
        cause: code === TIMEOUT
          ? `DNS lookup timed out after ${seconds(timeoutMs)}`
          : `DNS lookup failed (${code})`,
      };
    }
  }
  // A name may resolve to several addresses (::1 and 127.0.0.1): the first that answers counts.
  let address: string | undefined;
  let refusal: { error: unknown; timeoutMs: number } | undefined;
  for (const candidate of addresses) {
    const timeoutMs = limit();
    try {
      await open(() => net.connect({ host: candidate, port: target.port }), "connect", timeoutMs);
      address = candidate;
      break;
    } catch (error) {
      refusal ??= { error, timeoutMs };
      if (Date.now() >= deadline) break;
    }
  }
  if (address === undefined) {
    const code = errorCode(refusal?.error);
    return {
      stage: "connect",
      code,
      cause: code === TIMEOUT
        ? `no TCP connection within ${seconds(refusal!.timeoutMs)}`
        : `${CONNECT_CAUSES[code] ?? messageOf(refusal?.error)} (${code})`,
    };
  }
  if (!target.tls) return undefined;
  const timeoutMs = limit();
  try {
    await open(
      () =>
        tls.connect({
          host: address,
          port: target.port,
          // The certificate is checked against the name, not the address it resolved to.
          servername: net.isIP(host) === 0 ? host : undefined,
          checkServerIdentity: (_name, cert) => tls.checkServerIdentity(host, cert),
          ca: options.extraCa ? [...tls.rootCertificates, options.extraCa] : undefined,
          rejectUnauthorized: !options.insecure,
        }),
      "secureConnect",
      timeoutMs,
    );
  } catch (error) {
    const code = errorCode(error);
    return {
      stage: "tls",
      code,
      cause: code === TIMEOUT
        ? `no TLS handshake within ${seconds(timeoutMs)}`
        : `TLS handshake failed: ${messageOf(error)} (${code})`,
    };
  }
  return undefined;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** Open a socket and wait for `ready`, an error or the timeout; the socket is closed in every case. */
function open(
  connect: () => net.Socket,
  ready: "connect" | "secureConnect",
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect();
    const timer = setTimeout(() => done(timeoutError()), timeoutMs);
    function done(error?: unknown) {
      clearTimeout(timer);
      socket.removeAllListeners();
      // A late error of a socket being torn down has nobody to tell.
      socket.on("error", () => {});
      socket.destroy();
      if (error) reject(error);
      else resolve();
    }
    socket.once(ready, () => done());
    socket.once("error", (error) => done(error));
  });
}

function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError()), timeoutMs);
  });
  // A lookup that answers after its timeout is ignored.
  work.catch(() => {});
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function timeoutError(): Error {
  return Object.assign(new Error("timed out"), { code: TIMEOUT });
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code !== "" ? code : "EUNKNOWN";
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0].replace(/^(getaddrinfo|connect) [A-Z_]+ ?/, "").trim() || "error";
}
