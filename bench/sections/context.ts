/**
 * What every section of `npm run bench` is handed (bench/run.ts composes them in order) and the few
 * helpers several of them use: the run's directories, profile, dapp bundle and log; the interleaved rounds
 * of the load figures; how an inspect is addressed and judged.
 */
import type { DappBundle } from "../bundle.ts";
import type { Profile } from "../profile.ts";
import type { Figure } from "../report.ts";

export interface BenchContext {
  /** Project root: the children's working directory. */
  root: string;
  /** The run's scratch directory (stores, rigs, logs), removed when the run ends. */
  work: string;
  profile: Profile;
  /** The dapp as the machine runs it (bench/bundle.ts). */
  bundle: DappBundle;
  log: (line: string) => void;
}

/** What a section adds to the report, in the order it adds them. */
export interface SectionRows {
  figures: Figure[];
  notes: string[];
}

/** Interleaved rounds of the load figures (runInterleaved): noise from the rest of the machine is shared. */
export const ROUNDS = 5;

export function inspectPath(query: unknown): string {
  return `/inspect/${encodeURIComponent(JSON.stringify(query))}`;
}

export function acceptedInspect(status: number, body: Buffer): void {
  if (status !== 200 || !body.includes('"status":"Accepted"')) {
    throw new Error(`inspect failed: HTTP ${status} ${body.toString("utf8").slice(0, 300)}`);
  }
}
