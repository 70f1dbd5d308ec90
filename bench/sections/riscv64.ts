/**
 * What the dapp costs in the machine (issue 12): in the Cartesi machine every instruction of the dapp runs
 * on riscv64, so the figures to drive down are the dapp's under riscv64. Straight advance inputs per second
 * and inspect p50 of the same bundle, once natively and once as riscv64 under qemu-user (the root file
 * system of toolkit/riscv64.ts), each riscv64 figure a ratio to the native one of the same run, on
 * copies of the same store.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { dappArgv, describeRootfs, ensureRootfs, installBundle, mountAll, prepareHost } from "../../toolkit/riscv64.ts";
import type { DappBundle } from "../bundle.ts";
import { runLoad } from "../load.ts";
import { figure, type Figure } from "../report.ts";
import { startDirectRig, type DirectRig } from "../rig.ts";
import type { SeedResult } from "../seed.ts";

export interface Riscv64Options {
  root: string;
  /** Under /tmp: the riscv64 dapp reads its copy of the store through the root file system's /tmp mount. */
  work: string;
  store: SeedResult;
  bundle: DappBundle;
  cache: string;
  inputs: number;
  inspects: number;
  log: (line: string) => void;
}

interface Measured {
  advanceRate: number;
  inspectP50: number;
}

async function measure(options: Riscv64Options, name: string, argv: readonly string[] | undefined, firstIndex: number): Promise<Measured> {
  const dir = join(options.work, `riscv64-${name}`);
  mkdirSync(dir, { recursive: true });
  const dbPath = join(dir, "dapp.sqlite");
  copyFileSync(options.store.path, dbPath);
  const rig: DirectRig = await startDirectRig({
    root: options.root,
    workDir: dir,
    dbPath,
    dappMain: options.bundle.main,
    nodeFlags: options.bundle.nodeFlags,
    ...(argv === undefined ? {} : { dappArgv: argv, dappStartMs: 300_000 }),
  });
  try {
    const done = await rig.feed(options.inputs, firstIndex, firstIndex);
    if (done.accepted !== options.inputs) throw new Error(`${name}: ${done.accepted} of ${options.inputs} inputs accepted`);
    const ids = options.store.sampleAttestationIds;
    const inspect = await runLoad({
      baseUrl: rig.nodeUrl,
      concurrency: 1,
      count: options.inspects,
      warmup: Math.min(50, options.inspects),
      next: (i) => ({ method: "GET", path: `/inspect/${encodeURIComponent(JSON.stringify({ type: "attestation", params: { attestation_id: ids[i % ids.length] } }))}` }),
      check: (status, body) => {
        if (status !== 200 || !body.includes('"status":"Accepted"')) throw new Error(`${name} inspect: HTTP ${status} ${body.toString("utf8").slice(0, 200)}`);
      },
    });
    const measured = { advanceRate: options.inputs / done.seconds, inspectP50: inspect.p50 };
    options.log(`${name}: ${measured.advanceRate.toFixed(1)} inputs/s, inspect attestation p50 ${measured.inspectP50.toFixed(2)} ms`);
    return measured;
  } finally {
    await rig.stop();
  }
}

/** The riscv64 rows and a note on what ran. */
export async function riscv64Rows(options: Riscv64Options): Promise<{ figures: Figure[]; note: string }> {
  await prepareHost();
  const rootfs = await ensureRootfs(options.cache);
  installBundle(rootfs, options.bundle.dir);
  const unmount = mountAll(rootfs);
  try {
    const native = await measure(options, "native", undefined, 0);
    const riscv = await measure(options, "riscv64", dappArgv(rootfs), 0);
    const stored = options.store.count.toLocaleString("en-US");
    return {
      figures: [
        figure("riscv64", `straight advance under riscv64 @ ${stored}`, "inputs/s", riscv.advanceRate, { name: "native dapp, same run", value: native.advanceRate }),
        figure("riscv64", `inspect attestation c1 p50 under riscv64 @ ${stored}`, "ms", riscv.inspectP50, { name: "native dapp, same run", value: native.inspectP50 }),
      ],
      note:
        `riscv64: the same bundle under qemu-user (${describeRootfs(rootfs)}, Debian trixie, better-sqlite3 compiled there) in the straight rig on a copy of the ` +
        `${stored}-attestation store: ${options.inputs} inputs, ${options.inspects} inspects. qemu-user translates riscv64 code to x86-64 while the Cartesi machine emulates it, so absolute figures differ there; the ratio shows what riscv64 costs the dapp.`,
    };
  } finally {
    unmount();
  }
}
