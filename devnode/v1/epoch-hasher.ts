/**
 * v1 epoch hashes computed off the devnode's event loop. Building an epoch's trees hashes every output of
 * every input in it (~200 ms for 5,000 notices); done on the main thread, it held the rollup HTTP server
 * and the readers for that long once per epoch, which was the tail of every claim's latency under load
 * (npm run bench). A worker thread opens the same SQLite record and builds the trees from what is
 * committed; the main thread only waits for the hash. Proofs are still built where they are asked for.
 */
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Hex } from "viem";

type Reply = { id: number; epochHash: Hex } | { id: number; error: string };

export class EpochHasher {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (hash: Hex) => void; reject: (error: Error) => void }>();

  /**
   * @param workerModule the worker compiled (EPOCH_HASHER_MODULE), or undefined: its source through tsx, as
   *   `npm start` runs the devnode. A compiled devnode whose worker registered tsx paid 3 to 5 s of CPU for
   *   it at the first epoch, in every stack the suites start (issue 51).
   */
  constructor(
    private readonly databasePath: string,
    private readonly workerModule?: string,
  ) {}

  /** The epoch hash over inputs first..last, as buildEpochTree computes it from the record. */
  epochHash(first: number, last: number): Promise<Hex> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, first, last });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker;
    // Under tsx, whose loader a worker does not inherit, the worker registers it, then loads its module.
    const bootstrap =
      this.workerModule !== undefined
        ? `import(${JSON.stringify(pathToFileURL(this.workerModule).href)})`
        : `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})` +
          `.then(({ register }) => { register(); return import(${JSON.stringify(new URL("./epoch-hasher-worker.ts", import.meta.url).href)}); })`;
    const worker = new Worker(bootstrap, { eval: true, workerData: { databasePath: this.databasePath } });
    worker.on("message", (reply: Reply) => {
      const pending = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if ("error" in reply) pending?.reject(new Error(reply.error));
      else pending?.resolve(reply.epochHash);
    });
    const fail = (error: Error): void => {
      // A dead worker fails what it held; the next epoch starts a new one.
      if (this.worker === worker) this.worker = undefined;
      for (const pending of this.waiting.values()) pending.reject(error);
      this.waiting.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the epoch hasher stopped (exit ${code})`)));
    // (Not unref'd: a hash someone waits for keeps the process alive; close() ends it.)
    this.worker = worker;
    return worker;
  }
}
