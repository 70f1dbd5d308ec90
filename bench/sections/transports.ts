/**
 * The transports section: the same dapp bundle, on copies of the same store, fed the same create_attestation
 * inputs two ways: through the rollup HTTP server (the straight rig: the devnode's model and servers) and
 * through libcmt (@cartesi/rollup's mock driver on this host: the inputs as EvmAdvance files, outputs
 * written to files). Inputs per second and the dapp's peak RSS on each. The libcmt rate leaves the process's
 * start out: a first session of one input opens the store, a second of `inputs` more is timed, and the
 * first's time is taken off the second's.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { zeroHash, type Address } from "viem";
import { jsonToHex } from "../../common/hex.ts";
import { encodeEvmAdvance } from "../../devnode/v2/inputs.ts";
import { mockEntry, writeMockRequest, type MockRequest } from "../../toolkit/libcmt-mock.ts";
import { attestationParams, BENCH_ADMIN, fedOwner } from "../inputs.ts";
import { procStatusKiB, spawnChild, tail } from "../procs.ts";
import { figure, type Figure } from "../report.ts";
import { startDirectRig } from "../rig.ts";
import type { SeedResult } from "../seed.ts";
import type { BenchContext, SectionRows } from "./context.ts";

export const LIBCMT_RATE = (stored: number): string => `straight on libcmt (mock) @ ${stored.toLocaleString("en-US")}`;
export const LIBCMT_PEAK = (stored: number): string => `dapp peak RSS on libcmt (mock) @ ${stored.toLocaleString("en-US")}`;

/** A chain id and application for the EvmAdvance files; the bench's inputs do not depend on them. */
const CHAIN_ID = 31337;
const APPLICATION: Address = "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e";

function advance(index: number, now: number): MockRequest {
  const payload = jsonToHex({ type: "create_attestation", params: attestationParams(index, fedOwner(index)) });
  const metadata = { chain_id: CHAIN_ID, app_contract: APPLICATION, msg_sender: BENCH_ADMIN, block_number: index + 1, block_timestamp: now, prev_randao: zeroHash, input_index: index };
  return { kind: "advance", evmAdvance: encodeEvmAdvance({ metadata, payload }) };
}

/** Runs the bundle on libcmt over requests `first`..`first + count - 1`; its wall time and peak RSS. */
async function libcmtSession(ctx: BenchContext, dir: string, dbPath: string, first: number, count: number, now: number): Promise<{ seconds: number; peakKiB: number }> {
  // Names relative to the session's folder: CMT_INPUTS is one environment variable, at most 128 KiB.
  const entries: string[] = [];
  for (let i = first; i < first + count; i++) {
    const request = advance(i, now);
    const name = `a${i}.bin`;
    writeMockRequest(join(dir, name), request);
    entries.push(mockEntry(name, request));
  }
  const started = performance.now();
  const dapp = spawnChild({
    name: "dapp-libcmt",
    file: process.execPath,
    args: [...ctx.bundle.nodeFlags, ctx.bundle.main],
    env: { DAPP_TRANSPORT: "libcmt", CMT_INPUTS: entries.join(","), DAPP_DB_PATH: dbPath, DAPP_ADMINS: BENCH_ADMIN, ROLLUP_HTTP_SERVER_URL: "" },
    cwd: dir,
    logFile: join(dir, "dapp.log"),
  });
  let peakKiB = 0;
  let running = true;
  void dapp.exited.then(() => {
    running = false;
  });
  // VmHWM only grows: the last reading before the exit is the peak to within the polling interval's allocations.
  while (running) {
    try {
      peakKiB = Math.max(peakKiB, procStatusKiB(dapp.pid, "VmHWM"));
    } catch {
      // Gone between the check and the read.
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  if (dapp.process.exitCode !== 0) throw new Error(`the dapp on libcmt exited with ${dapp.process.exitCode}:\n${tail(dapp.logFile)}`);
  return { seconds, peakKiB };
}

export async function transportRows(ctx: BenchContext, store: SeedResult, inputs: number): Promise<SectionRows> {
  const { log, work } = ctx;
  const now = Math.floor(Date.now() / 1000);

  const httpDir = join(work, "transport-http");
  mkdirSync(httpDir, { recursive: true });
  copyFileSync(store.path, join(httpDir, "dapp.sqlite"));
  const rig = await startDirectRig({ root: ctx.root, workDir: httpDir, dbPath: join(httpDir, "dapp.sqlite"), dappMain: ctx.bundle.main, nodeFlags: ctx.bundle.nodeFlags });
  let http: { rate: number; peakKiB: number };
  try {
    const done = await rig.feed(inputs + 1, 0, 0);
    if (done.accepted !== inputs + 1) throw new Error(`transports: ${done.accepted} of ${inputs + 1} inputs accepted over HTTP`);
    http = { rate: (inputs + 1) / done.seconds, peakKiB: rig.dappPeakKiB() };
  } finally {
    await rig.stop();
  }

  // No "." in the folder: the mock cuts file names at the first one.
  const libcmtDir = join(work, "transport-libcmt");
  mkdirSync(libcmtDir, { recursive: true });
  const dbPath = join(libcmtDir, "dapp.sqlite");
  copyFileSync(store.path, dbPath);
  const opening = await libcmtSession(ctx, libcmtDir, dbPath, 0, 1, now);
  const timed = await libcmtSession(ctx, libcmtDir, dbPath, 1, inputs, now);
  const libcmt = { rate: inputs / Math.max(1e-3, timed.seconds - opening.seconds), peakKiB: Math.max(opening.peakKiB, timed.peakKiB) };
  log(`transports: HTTP ${http.rate.toFixed(0)}/s, ${(http.peakKiB / 1024).toFixed(1)} MiB; libcmt ${libcmt.rate.toFixed(0)}/s, ${(libcmt.peakKiB / 1024).toFixed(1)} MiB`);

  const stored = store.count;
  const figures: Figure[] = [
    figure("advance", LIBCMT_RATE(stored), "inputs/s", libcmt.rate, { name: "the same dapp on the rollup HTTP server", value: http.rate }, {
      target: { text: "not below HTTP", met: (_v: number, ratio: number) => ratio >= 1 },
    }),
    figure("memory", LIBCMT_PEAK(stored), "MiB", libcmt.peakKiB / 1024, { name: "the same dapp on the rollup HTTP server", value: http.peakKiB / 1024 }, {
      target: { text: "<= 96 MiB", met: (v: number) => v <= 96 },
    }),
  ];
  const note =
    `transports: ${inputs.toLocaleString("en-US")} create_attestation inputs on copies of the ${stored.toLocaleString("en-US")} store; HTTP is the straight rig ` +
    "(the devnode's model and rollup HTTP server, its record included); libcmt is @cartesi/rollup's mock driver (EvmAdvance files in, every output and report " +
    `written to a file); its time is a session of ${inputs} inputs less a session of 1 (the process's start and the store's opening).`;
  return { figures, notes: [note] };
}
