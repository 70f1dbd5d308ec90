/**
 * The memory section: the dapp's peak RSS (VmHWM) on the largest store, after the scale queries and the
 * straight advance, under a mixed load of queries and inputs at once, against a bare node process's; and
 * the database's bytes per attestation against the bytes one row's values take.
 */
import { join } from "node:path";
import { runLoad } from "../load.ts";
import { procStatusKiB, spawnChild } from "../procs.ts";
import { figure, type Figure } from "../report.ts";
import type { DirectRig } from "../rig.ts";
import type { SeedResult } from "../seed.ts";
import { acceptedInspect, inspectPath, type BenchContext } from "./context.ts";

/**
 * Queries and inputs at once on the largest store's rig (after the straight advance's inputs); returns
 * the dapp's peak RSS so far, KiB.
 */
export async function mixedLoadPeakKiB(ctx: BenchContext, rig: DirectRig, seed: SeedResult): Promise<number> {
  const { log, profile } = ctx;
  const owners = seed.sampleOwners;
  const ids = seed.sampleAttestationIds;
  const [mixed] = await Promise.all([
    rig.feed(profile.mixedInputs, profile.advance, profile.advance),
    runLoad({
      baseUrl: rig.nodeUrl,
      concurrency: 4,
      count: profile.mixedQueries,
      warmup: 0,
      next: (i) =>
        i % 2 === 0
          ? { method: "GET", path: inspectPath({ type: "attestations_by_owner", params: { owner: owners[i % owners.length] } }) }
          : { method: "GET", path: inspectPath({ type: "attestation", params: { attestation_id: ids[i % ids.length] } }) },
      check: acceptedInspect,
    }),
  ]);
  if (mixed.accepted !== profile.advance + profile.mixedInputs) throw new Error("mixed load: inputs rejected");
  const peakKiB = rig.dappPeakKiB();
  log(`dapp peak RSS ${(peakKiB / 1024).toFixed(1)} MiB`);
  return peakKiB;
}

/** The memory floor: a bare node process's peak RSS, KiB. */
export async function bareNodeKiB(ctx: BenchContext): Promise<number> {
  const bare = spawnChild({
    name: "bare-node",
    file: process.execPath,
    args: ["-e", "setTimeout(() => {}, 1500)"],
    env: {},
    cwd: ctx.root,
    logFile: join(ctx.work, "logs", "bare.log"),
  });
  await new Promise((r) => setTimeout(r, 700));
  const kiB = procStatusKiB(bare.pid, "VmHWM");
  await bare.stop();
  return kiB;
}

export function memoryFigures(largest: number, peakKiB: number, bareKiB: number, big: SeedResult): Figure[] {
  return [
    figure("memory", `dapp peak RSS @ ${largest.toLocaleString("en-US")}`, "MiB", peakKiB / 1024, { name: "bare node", value: bareKiB / 1024 }, {
      target: { text: "<= 96 MiB", met: (v: number) => v <= 96 },
    }),
    figure("memory", "database bytes per attestation", "B", big.fileBytes / big.count, { name: "raw row bytes", value: big.rawRowBytes }),
  ];
}
