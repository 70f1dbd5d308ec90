/**
 * With readers (`--readers N`), last in the api's end-to-end suite (test/api/e2e-suite.ts), once every other
 * test has read and written: the node served the api no inspect; then a reader's dapp killed by its pid
 * with a read in flight on it fails no read (v1 and v2: e2e-readers.test.ts, e2e-readers-v2.test.ts), the
 * failover counted in the api's metrics with its reason. (Killed readers under load, and brought back:
 * test/api/readers.e2e.test.ts, test/devnode/stack-survival*.e2e.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { loadCpus } from "../../support/cpu-load.ts";
import { seriesValue } from "../../support/prometheus.ts";
import type { SuiteContext } from "./context.ts";

export function readersTests(ctx: SuiteContext): void {
  describe("readers", () => {
    it("the api sent the node no inspect: every read went to the readers", async () => {
      const sent = ctx.nodeProxy?.received().toString("latin1") ?? "";
      // The api did reach the node (verdicts, notices, proofs), and never its inspect route.
      expect(sent).toMatch(/^POST \/(graphql|rpc) HTTP\/1\.1/m);
      expect(sent.match(/^[A-Z]+ \/inspect[^\r\n]*/gm) ?? []).toEqual([]);
      const reads = await ctx.asClient(ctx.anon).status();
      expect(reads.readers.map((r) => r.health)).toEqual(ctx.stack.urls.readers.map(() => "serving"));
    });

    // A Quorum's members are its readers: their dapps are left alone (e2e-readers-v2 is the v2 case).
    if (ctx.quorum > 0) return;
    // The suite's last test: the dapp is not started again (about 9 s on a loaded machine), the stack stops next.
    it("a reader's dapp killed by its pid with a read in flight on it: no read fails, the failover is counted", { timeout: 60_000 }, async () => {
      const piece = "reader-dapp-1";
      const reader = ctx.stack.urls.readers[0] as string;
      const pid = ctx.stack.pid(piece);
      if (pid === undefined) throw new Error(`${piece} is not running`);
      // On a loaded machine, raised here (8 busy processes per core): the case failed only under load.
      const load = loadCpus(8);
      const failed: string[] = [];
      const reads: Promise<void>[] = [];
      try {
        // Stopped, the dapp still takes the next inspect its reader hands it (its /finish is waiting), and never answers it.
        await ctx.stack.kill(piece, "SIGSTOP");
        const read = (): Promise<void> => ctx.asClient(ctx.anon).schemas().then(() => undefined, (error: unknown) => void failed.push(String(error)));
        // A read at a time until one is in flight on the held dapp (reads go to the readers in turn).
        const deadline = Date.now() + 20_000;
        while (((await (await fetch(`${reader}/healthz`)).json()) as { state: string }).state !== "inspecting") {
          if (Date.now() > deadline) throw new Error(`no read in flight on ${piece} after ${reads.length} reads`);
          reads.push(read());
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        process.kill(pid, "SIGKILL");
        await Promise.all(reads);
      } finally {
        load.stop();
      }
      expect(failed).toEqual([]);
      // The read the dapp held failed at its reader (v2: 200 `Failed`; v1: 503 DAPP_GONE) and moved on.
      const series = `api_rollup_reads_total{target="${reader}",outcome="failed",reason="${ctx.rollups === "v2" ? "failed" : "5xx"}"}`;
      // Counted by the replica that made the read (each api process has its own metrics).
      const counts = await Promise.all(ctx.stack.apiReplicaUrls.map(async (url) => seriesValue(await (await fetch(`${url}/metrics`)).text(), series) || 0));
      expect(counts.reduce((sum, n) => sum + n, 0), `${series} on ${ctx.stack.apiReplicaUrls.join(", ")}`).toBeGreaterThanOrEqual(1);
    });
  });
}
