/**
 * The devnode's Prometheus metrics (`GET /metrics` on the query port, docs/operations.md): inputs by
 * completion status and epochs are read from the record when scraped; inspects are counted and timed
 * as they are answered. One registry per devnode, made at start.
 */
import { collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { EpochStatus } from "./epoch-schedule.ts";
import type { ReaderStatus } from "./reader.ts";
import type { ValidatorStatus } from "./validator.ts";

export interface DevnodeMetricSources {
  inputCountsByStatus(): { status: string; n: number }[];
  epochs(): EpochStatus | undefined;
  /** A validator's verdicts; undefined on a claimer. */
  validator?(): ValidatorStatus | undefined;
  /** A validator's reads (devnode/reader.ts); undefined on a claimer. */
  reader?(): ReaderStatus;
  /** v2: how the consensus's votes stand (devnode/v2/quorum-votes.ts supplies it; the core knows no version). */
  consensus?(): ConsensusCounts;
}

/** What the consensus metrics read: each member's votes and wrong votes, and the epochs waiting for a root. */
export interface ConsensusCounts {
  members: { address: string; votes: number; wrongVotes: number }[];
  waiting: readonly unknown[];
}

export interface DevnodeMetrics {
  registry: Registry;
  /** An inspect answered: `Accepted`, `Rejected`, or the node's own failure (`timeout`, `unavailable`). */
  observeInspect(outcome: string, seconds: number): void;
  text(): Promise<string>;
}

export function createDevnodeMetrics(sources: DevnodeMetricSources): DevnodeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  new Gauge({
    name: "devnode_inputs",
    help: "Inputs the devnode holds, by completion status (ACCEPTED, REJECTED, UNPROCESSED, ...)",
    labelNames: ["status"],
    registers,
    collect() {
      this.reset();
      for (const { status, n } of sources.inputCountsByStatus()) this.set({ status }, n);
    },
  });
  new Gauge({ name: "devnode_epochs_closed", help: "Epochs closed (each with at least one input)", registers, collect() { this.set(sources.epochs()?.epochs ?? 0); } });
  new Gauge({ name: "devnode_epochs_claimed", help: "Closed epochs whose claim the History holds", registers, collect() { this.set(sources.epochs()?.claimed ?? 0); } });
  if (sources.validator !== undefined) {
    const verdicts = sources.validator;
    new Gauge({
      name: "devnode_validator_claims",
      help: "Claims on chain this validator checked, by verdict (match, mismatch)",
      labelNames: ["verdict"],
      registers,
      collect() {
        const status = verdicts();
        this.set({ verdict: "match" }, status?.matched ?? 0);
        this.set({ verdict: "mismatch" }, status?.mismatched ?? 0);
      },
    });
    new Gauge({
      name: "devnode_validator_mismatch",
      help: "1 once any claim on chain disagreed with this validator's own epoch hash (alert on it), else 0",
      registers,
      collect() {
        this.set((verdicts()?.mismatched ?? 0) > 0 ? 1 : 0);
      },
    });
    // A validator that cannot read the History finds no mismatch either: alert on this too, or a silent
    // validator passes for a content one.
    new Gauge({
      name: "devnode_validator_chain_unreadable",
      help: "1 while this validator's last attempt to read the claims on chain failed, else 0",
      registers,
      collect() {
        this.set((verdicts()?.lastError ?? null) === null ? 0 : 1);
      },
    });
  }
  if (sources.reader !== undefined) {
    const reader = sources.reader;
    new Gauge({ name: "devnode_reader_serving", help: "1 while this reader serves reads, 0 while it refuses them (a mismatch, or a snapshot not yet verified)", registers, collect() { this.set(reader().serving ? 1 : 0); } });
    new Gauge({ name: "devnode_reader_stale", help: "1 while this reader's last successful read of the chain is older than READER_STALE_MS", registers, collect() { this.set(reader().stale ? 1 : 0); } });
  }
  if (sources.consensus !== undefined) {
    const consensus = sources.consensus;
    new Gauge({
      name: "devnode_consensus_votes",
      help: "Votes (ClaimSubmitted) each member of the consensus cast for the application",
      labelNames: ["member"],
      registers,
      collect() {
        this.reset();
        for (const m of consensus().members) this.set({ member: m.address }, m.votes);
      },
    });
    new Gauge({
      name: "devnode_consensus_wrong_votes",
      help: "Votes for an outputs root this node's dapp did not compute, by member (alert on any)",
      labelNames: ["member"],
      registers,
      collect() {
        this.reset();
        for (const m of consensus().members) this.set({ member: m.address }, m.wrongVotes);
      },
    });
    new Gauge({
      name: "devnode_consensus_epochs_waiting",
      help: "Epochs this node computed that the consensus has accepted no root for yet (under a Quorum: too few members voted)",
      registers,
      collect() {
        this.set(consensus().waiting.length);
      },
    });
  }
  const inspects = new Histogram({
    name: "devnode_inspect_duration_seconds",
    help: "Time to answer an inspect, by outcome",
    labelNames: ["outcome"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 30],
    registers,
  });
  return {
    registry,
    observeInspect(outcome, seconds) {
      // The histogram's _count is the number of inspects per outcome.
      inspects.observe({ outcome }, seconds);
    },
    text: () => registry.metrics(),
  };
}
