/**
 * Determinism: a recorded log of thousands of mixed inputs (accepted, rejected, hostile) is run live into
 * the real dapp, then replayed twice into fresh dapps. Every replay gives the same outputs and the same
 * table digest as the live run, bookkeeping included; the operator's tool (scripts/db-digest.ts) prints
 * the same digest for the live and the replayed database files.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Address, Hex } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { databaseDigest, tableDigests } from "../../dapp/db/digest.ts";
import { startHarness, T0 } from "../dapp/harness.ts";
import type { AdvanceOutcome } from "../dapp/rollup-server.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";
import { HARDHAT_ADDRESSES, mixedLog, prng, type LogStep } from "./mixed-log.ts";
import { directDapp, errorOf, figure, runs, scaledTimeout } from "./support.ts";

const dir = mkdtempSync(path.join(tmpdir(), "hostile-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COUNT = runs(2000);
const SEED = Number(process.env.FUZZ_SEED ?? "") || 20261121;

interface Recorded extends LogStep {
  index: number;
  timestamp: number;
}

/** The log with the metadata a node gives each input: its index and a block timestamp (often shared). */
function record(steps: LogStep[], seed: number): Recorded[] {
  const random = prng(seed ^ 0x5eed);
  let timestamp = T0;
  return steps.map((step, index) => {
    if (random() < 0.6) timestamp += 1 + Math.floor(random() * 30);
    return { ...step, index, timestamp };
  });
}

interface RunResult {
  outcomes: AdvanceOutcome[];
  digest: string;
  tables: ReturnType<typeof tableDigests>;
}

/** The live run: the real dapp loop (@deroll/app over HTTP) against a rollup server. */
async function runLive(log: Recorded[], dbPath: string): Promise<RunResult> {
  const h = await startHarness({ dbPath });
  const outcomes: AdvanceOutcome[] = [];
  try {
    for (const step of log) {
      outcomes.push(
        await h.server.advance({
          payload: step.payload,
          sender: HARDHAT_ADDRESSES[step.sender] as string,
          timestamp: step.timestamp,
          index: step.index,
        }),
      );
    }
    return { outcomes, digest: databaseDigest(h.db.$client), tables: tableDigests(h.db.$client) };
  } finally {
    await h.close();
  }
}

/** A replay: a fresh database and the real dispatcher, without the HTTP loop (fast). */
async function runReplay(log: Recorded[], dbPath: string): Promise<RunResult> {
  const dapp = directDapp({ dbPath, admins: [HARDHAT_ADDRESSES[0] as Address] });
  const outcomes: AdvanceOutcome[] = [];
  try {
    for (const step of log) outcomes.push(await dapp.advance(step.payload, HARDHAT_ADDRESSES[step.sender] as string, step.timestamp, step.index));
    return { outcomes, digest: databaseDigest(dapp.db.$client), tables: tableDigests(dapp.db.$client) };
  } finally {
    dapp.close();
  }
}

describe("replay of a recorded input log", () => {
  it(`gives the live run's outputs and table digest, twice (${COUNT} mixed inputs)`, { timeout: scaledTimeout(300_000) }, async () => {
    const started = Date.now();
    const log = record(mixedLog(COUNT, SEED), SEED);
    // The recorded log, as an operator would keep it (one JSON line per input).
    writeFileSync(path.join(dir, "inputs.jsonl"), log.map((s) => JSON.stringify(s)).join("\n"));

    const live = await runLive(log, path.join(dir, "live.sqlite"));
    const statuses = live.outcomes.map((o) => o.status);
    const accepted = statuses.filter((s) => s === "accept").length;
    const codes = new Set(live.outcomes.map((o) => errorOf(o.reports[0])?.code).filter((c) => c !== undefined));
    // The log really is mixed: most kinds accepted, and rejections of many kinds.
    expect(accepted).toBeGreaterThan(COUNT * 0.4);
    expect(COUNT - accepted).toBeGreaterThan(COUNT * 0.1);
    expect([...codes].sort()).toEqual(
      expect.arrayContaining(["DUPLICATE", "INVALID_PARAMS", "INVALID_PAYLOAD", "NOT_OWNER", "SCHEMA_NOT_FOUND", "UNAUTHORIZED_SENDER", "UNKNOWN_KIND"]),
    );
    expect(live.tables.find((t) => t.table === "attestations")?.rows).toBeGreaterThan(COUNT * 0.2);

    for (const name of ["replay-1", "replay-2"]) {
      const replay = await runReplay(log, path.join(dir, `${name}.sqlite`));
      expect(replay.digest).toBe(live.digest);
      expect(replay.tables).toEqual(live.tables);
      // Same verdicts and byte-identical notices and reports, input by input.
      expect(replay.outcomes).toEqual(live.outcomes);
    }

    // The operator's tool agrees, file against file.
    const digestOf = (file: string): string => {
      const out = execFileSync(process.execPath, [...processArgs("scripts/db-digest.ts"), path.join(dir, file)], {
        cwd: PROJECT_ROOT,
        encoding: "utf8",
      });
      return /^digest\t([0-9a-f]{64})$/m.exec(out)?.[1] ?? out;
    };
    expect(digestOf("live.sqlite")).toBe(live.digest);
    expect(digestOf("replay-2.sqlite")).toBe(live.digest);
    figure(`determinism: ${COUNT} inputs (${accepted} accepted), live + 2 replays in ${((Date.now() - started) / 1000).toFixed(1)} s, digest ${live.digest.slice(0, 16)}…`);
  });

  it("a different log gives a different digest (the digest sees the state)", async () => {
    const a = record(mixedLog(200, 1), 1);
    const ra = await runReplay(a, path.join(dir, "a.sqlite"));
    // Drop one accepted input that created something (it emitted a notice): the state differs.
    const creating = ra.outcomes.findIndex((o, i) => i > 10 && o.status === "accept" && o.notices.length > 0);
    expect(creating).toBeGreaterThan(0);
    const b = a.map((step, i) => (i === creating ? { ...step, payload: "0x7b" as Hex } : step));
    const rb = await runReplay(b, path.join(dir, "b.sqlite"));
    expect(rb.digest).not.toBe(ra.digest);
  });
});
