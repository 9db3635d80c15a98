/**
 * Runs in a worker: an OpenAI-compatible embeddings endpoint on 127.0.0.1,
 * standing in for a hosted embedding model. Its vectors come from a small
 * synonym table (words of like meaning map to one concept, hashed into 64
 * dimensions), so tests can tell vector search from keyword search. It
 * lives in a worker because finishline's HTTP embedder blocks the calling
 * thread while it waits for the answer.
 *
 * Messages in: `{ status?, errorBody? }` to start (answered with `{ port }`),
 * `"flush"` (answered with `"flushed"` after every request log), `"stop"`.
 * Messages out: `{ request: { authorization, body } }` for each request.
 *
 * @module
 */

/// <reference lib="deno.worker" />

const CONCEPTS: Record<string, string> = {
  flaky: "unstable",
  intermittent: "unstable",
  unreliable: "unstable",
  login: "auth",
  sign: "auth",
  signin: "auth",
  test: "test",
  tests: "test",
  spec: "test",
  specs: "test",
  timezone: "zone",
  timezones: "zone",
  zone: "zone",
  zones: "zone",
  utc: "zone",
  format: "style",
  fmt: "style",
  formatting: "style",
};

function embed(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const concept = CONCEPTS[word] ?? word;
    let hash = 0x811c9dc5;
    for (const char of concept) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
    vector[(hash >>> 0) % 64] += 1;
  }
  return vector;
}

let server: Deno.HttpServer | undefined;

self.onmessage = (event: MessageEvent) => {
  if (event.data === "flush") return self.postMessage("flushed");
  if (event.data === "stop") return void server?.shutdown().then(() => self.postMessage("stopped"));
  const { status = 200, errorBody = "" } = event.data as { status?: number; errorBody?: string };
  server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => self.postMessage({ port }),
  }, async (request) => {
    const body = await request.json();
    self.postMessage({ request: { authorization: request.headers.get("authorization"), body } });
    if (status !== 200) return new Response(errorBody, { status });
    const data = (body.input as string[]).map((text, index) => ({
      object: "embedding",
      index,
      embedding: embed(text),
    })).reverse();
    return Response.json({ object: "list", data, model: body.model });
  });
};
