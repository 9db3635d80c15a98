/**
 * Internal: a synchronous HTTP POST. A worker makes the request while the
 * calling thread waits on a shared buffer (`Atomics.wait`), so callers with a
 * synchronous API (the run history, `{uv-learnings}`) can ask a server.
 *
 * @module
 */

/** The worker: fetches, then writes `[done, status, length]` and the body into the buffer. */
const WORKER_SOURCE = `
self.onmessage = async (event) => {
  const { shared, url, headers, body, timeoutMs } = event.data;
  let status = 0;
  let text = "";
  try {
    const response = await fetch(url, {
      method: "POST", headers, body, signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    text = await response.text();
  } catch (error) {
    status = -1;
    text = String(error && error.message ? error.message : error);
  }
  const bytes = new TextEncoder().encode(text);
  if (16 + bytes.length > shared.byteLength) {
    if (16 + bytes.length <= shared.maxByteLength) {
      shared.grow(16 + bytes.length);
    } else {
      status = -1;
      bytes.set(new TextEncoder().encode("the answer is too large"));
    }
  }
  const view = new Uint8Array(shared, 16, Math.min(bytes.length, shared.byteLength - 16));
  view.set(bytes.subarray(0, view.length));
  const state = new Int32Array(shared, 0, 4);
  state[1] = status;
  state[2] = view.length;
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
};
`;

/** What came back: the HTTP status (-1 when no answer came) and the body or the error. */
export interface SyncResponse {
  /** HTTP status, or -1 when the request failed before an answer. */
  status: number;
  /** The body, or why the request failed. */
  text: string;
}

const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/**
 * POST a body and wait for the answer, blocking the calling thread.
 *
 * @param url Where to.
 * @param init Headers, body and the time limit.
 * @returns The status and body; a timeout or network error has status -1.
 */
export function postSync(
  url: string,
  init: { headers: Record<string, string>; body: string; timeoutMs: number },
): SyncResponse {
  const shared = new SharedArrayBuffer(64 * 1024, { maxByteLength: MAX_ANSWER_BYTES });
  const source = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
  const worker = new Worker(source, { type: "module" });
  try {
    worker.postMessage({ shared, url, ...init });
    const state = new Int32Array(shared, 0, 4);
    // The worker's own timeout answers first; this one only guards against a stuck worker.
    if (Atomics.wait(state, 0, 0, init.timeoutMs + 10_000) === "timed-out") {
      return { status: -1, text: `no answer within ${Math.round(init.timeoutMs / 1000)} s` };
    }
    const length = state[2];
    const text = new TextDecoder().decode(new Uint8Array(shared, 16, length).slice());
    return { status: state[1], text };
  } finally {
    worker.terminate();
    URL.revokeObjectURL(source);
  }
}
