/** The worker of devnode/v1/epoch-hasher.ts: epoch hashes from its own connection to the devnode's record. */
import { parentPort, workerData } from "node:worker_threads";
import { messageOf } from "../../common/errors.ts";
import { DevnodeStore } from "../store.ts";
import { buildEpochTree } from "./epochs.ts";

const store = new DevnodeStore((workerData as { databasePath: string }).databasePath);

parentPort?.on("message", ({ id, first, last }: { id: number; first: number; last: number }) => {
  try {
    parentPort?.postMessage({ id, epochHash: buildEpochTree(store, first, last).epochHash });
  } catch (error) {
    parentPort?.postMessage({ id, error: messageOf(error) });
  }
});
