/**
 * The straight rig: bench/direct-node.ts (the devnode's model and servers, fed over IPC) and the dapp
 * bundle as two processes on free ports, on a given dapp database. Used by the scale, straight-advance
 * and memory figures; the inspect, chain and api figures use the whole stack (test/support/stack.ts).
 */
import { join } from "node:path";
import { DEFAULTS } from "../devnode/config.ts";
import type { DirectNodeMessage, FeedMessage } from "./direct-node.ts";
import { procStatusKiB, spawnChild, type Child } from "./procs.ts";
import { processArgs } from "../test/support/stack.ts";

export interface DirectRig {
  nodeUrl: string;
  /** Where the dapp's output goes (a machine's serial console, for one). */
  dappLog: string;
  dappPid: number;
  /** Records and queues `count` inputs; resolves when the dapp has finished all of them. */
  feed(count: number, firstIndex: number, firstItem: number): Promise<Extract<DirectNodeMessage, { type: "done" }>>;
  /** Peak resident set of the dapp so far (VmHWM), KiB. */
  dappPeakKiB(): number;
  stop(): Promise<void>;
}

export interface DirectRigOptions {
  root: string;
  /** Where the node's record and the logs go. */
  workDir: string;
  dbPath: string;
  dappMain: string;
  /** Node flags before the dapp's main (experiments; the figures run the dapp exactly as the machine does). */
  nodeFlags?: readonly string[];
  /** Node flags for bench/direct-node.ts (experiments: --cpu-prof). */
  devnodeFlags?: readonly string[];
  /**
   * Another way to start the dapp, replacing node, nodeFlags and dappMain: an argv (the riscv64 dapp in its
   * chroot), or one made from the rollup HTTP server's port (a machine that cannot read our environment).
   */
  dappArgv?: readonly string[] | ((rollupPort: number) => readonly string[]);
  /** How long the dapp may take to connect (an emulated one takes seconds); default 60 s. */
  dappStartMs?: number;
}

async function waitForDapp(nodeUrl: string, dapp: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void dapp.exited.then(() => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`the dapp exited while starting (see ${dapp.logFile})`);
    try {
      const response = await fetch(`${nodeUrl}/healthz`);
      const body = (await response.json()) as { dappConnected?: boolean };
      if (body.dappConnected === true) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`the dapp did not connect within ${timeoutMs} ms (see ${dapp.logFile})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startDirectRig(options: DirectRigOptions): Promise<DirectRig> {
  const node = spawnChild({
    name: "direct-node",
    file: process.execPath,
    args: [...(options.devnodeFlags ?? []), ...processArgs("bench/direct-node.ts")],
    env: { BENCH_RECORD_PATH: join(options.workDir, "devnode.sqlite") },
    cwd: options.root,
    logFile: join(options.workDir, "logs", "direct-node.log"),
    ipc: true,
  });
  let dapp: Child | undefined;
  try {
    const ready = await node.message((m) => (isMessage(m) && m.type === "ready" ? m : undefined), 60_000);
    const nodeUrl = `http://127.0.0.1:${ready.nodePort}`;
    const argv = typeof options.dappArgv === "function" ? options.dappArgv(ready.rollupPort) : options.dappArgv;
    const [file, ...args] = argv ?? [process.execPath, ...(options.nodeFlags ?? []), options.dappMain];
    dapp = spawnChild({
      name: "dapp",
      file: file as string,
      args,
      env: {
        ROLLUP_HTTP_SERVER_URL: `http://127.0.0.1:${ready.rollupPort}`,
        DAPP_DB_PATH: options.dbPath,
        DAPP_ADMINS: DEFAULTS.adminAddress,
        DATA_DIR: options.workDir,
      },
      cwd: options.root,
      logFile: join(options.workDir, "logs", "dapp.log"),
    });
    await waitForDapp(nodeUrl, dapp, options.dappStartMs ?? 60_000);
    const running = dapp;
    return {
      nodeUrl,
      dappLog: running.logFile,
      dappPid: running.pid,
      async feed(count, firstIndex, firstItem) {
        const message: FeedMessage = { type: "feed", count, firstIndex, firstItem };
        const done = node.message((m) => (isMessage(m) && m.type === "done" ? m : undefined), 30 * 60_000);
        node.process.send(message);
        return done;
      },
      dappPeakKiB: () => procStatusKiB(running.pid, "VmHWM"),
      async stop() {
        await running.stop();
        await node.stop();
      },
    };
  } catch (error) {
    await dapp?.stop();
    await node.stop();
    throw error;
  }
}

function isMessage(value: unknown): value is DirectNodeMessage {
  return typeof value === "object" && value !== null && "type" in value;
}
