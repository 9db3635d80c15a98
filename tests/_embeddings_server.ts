/**
 * A local OpenAI-compatible embeddings endpoint for tests, in a worker (see
 * `_embeddings_server_worker.ts`), with the requests it received.
 *
 * @module
 */

/** A request the endpoint received. */
export interface EmbeddingsRequest {
  /** The Authorization header, or null. */
  authorization: string | null;
  /** The JSON body: `model`, `input`, and `input_type` or `dimensions` when sent. */
  body: { model: string; input: string[]; input_type?: string; dimensions?: number };
}

/** The endpoint, stopped on dispose. */
export class EmbeddingsServer implements AsyncDisposable {
  /** `http://127.0.0.1:PORT/v1/embeddings`. */
  readonly url: string;
  #worker: Worker;
  #received: EmbeddingsRequest[] = [];
  #waiters: Array<(data: unknown) => void> = [];

  private constructor(worker: Worker, port: number) {
    this.#worker = worker;
    this.url = `http://127.0.0.1:${port}/v1/embeddings`;
    worker.onmessage = (event) => {
      if (event.data?.request) this.#received.push(event.data.request);
      else this.#waiters.shift()?.(event.data);
    };
  }

  /**
   * Start the endpoint.
   *
   * @param options `status` and `errorBody` make every answer that error.
   * @returns The running endpoint.
   */
  static async start(
    options: { status?: number; errorBody?: string } = {},
  ): Promise<EmbeddingsServer> {
    const worker = new Worker(new URL("./_embeddings_server_worker.ts", import.meta.url), {
      type: "module",
    });
    const port = await new Promise<number>((resolve) => {
      worker.onmessage = (event) => resolve(event.data.port);
      worker.postMessage(options);
    });
    return new EmbeddingsServer(worker, port);
  }

  /** Every request received so far. */
  async requests(): Promise<EmbeddingsRequest[]> {
    await this.#ask("flush");
    return [...this.#received];
  }

  #ask(message: string): Promise<unknown> {
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#worker.postMessage(message);
    });
  }

  /** Stop the endpoint and its worker. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#ask("stop");
    this.#worker.terminate();
  }
}
