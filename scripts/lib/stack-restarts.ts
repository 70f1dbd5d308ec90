/**
 * What the stack does when one of its pieces exits on its own (a crash, a `kill -9` from outside, any code
 * or signal): one table keyed by the kind of piece, and the backoff of the pieces it restarts; and how long a
 * piece, and the whole stack, may take to stop. The
 * supervisor (scripts/lib/stack-supervisor.ts) applies it; docs/operations.md ("When a piece dies") says it
 * to operators.
 */
import type { PieceKind, PieceName } from "./stack-pieces.ts";

/** How long a piece has between SIGTERM and SIGKILL, when it is stopped alone or its supervisor is gone. */
export const PIECE_GRACE_MS = 5_000;
/** How long a stop of the whole stack may take by default (STOP_TIMEOUT_MS; docs/operations.md, "Stopping"). */
export const DEFAULT_STOP_BOUND_MS = 10_000;

/** `restart`: the stack brings the piece back; `stop-stack`: the piece holds the state, so the stack stops. */
export type ExitPolicy = "restart" | "stop-stack";

/**
 * Only the chain and the node hold the rollup's state: a stack that restarted them under its other pieces
 * would serve a state it cannot vouch for. Every other piece is rebuilt from them, so it comes back.
 */
export const ON_UNEXPECTED_EXIT: Readonly<Record<PieceKind, ExitPolicy>> = {
  chain: "stop-stack",
  devnode: "stop-stack",
  dapp: "restart",
  reader: "restart",
  "reader-dapp": "restart",
  provider: "restart",
  attestor: "restart",
  redis: "restart",
  indexer: "restart",
  api: "restart",
  balancer: "restart",
  publisher: "restart",
};

export interface Backoff {
  /** The wait before the first restart; it doubles with each quick failure in a row. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** A piece up this long before it exits starts over at `firstDelayMs`, its quick failures forgotten. */
  healthyAfterMs: number;
  /** Quick failures in a row (exits, or restarts that never became ready) after which the stack gives up. */
  maxQuickFailures: number;
}

export const RESTART_BACKOFF: Backoff = { firstDelayMs: 250, maxDelayMs: 5_000, healthyAfterMs: 30_000, maxQuickFailures: 8 };

/** The next step for a piece that exited: restart after `delayMs` (the `restarts`-th time), or give up. */
export type RestartDecision = { restart: true; delayMs: number; restarts: number } | { restart: false; quickFailures: number };

/** Counts each piece's restarts and its quick failures in a row; decides the next wait. */
export class RestartBook {
  private readonly quickFailures = new Map<PieceName, number>();
  private readonly restarts = new Map<PieceName, number>();

  constructor(private readonly backoff: Backoff = RESTART_BACKOFF) {}

  /** A piece exited after `upForMs` (0: a restart that never became ready). */
  decide(piece: PieceName, upForMs: number): RestartDecision {
    const failures = upForMs >= this.backoff.healthyAfterMs ? 1 : (this.quickFailures.get(piece) ?? 0) + 1;
    this.quickFailures.set(piece, failures);
    if (failures > this.backoff.maxQuickFailures) return { restart: false, quickFailures: failures - 1 };
    const restarts = (this.restarts.get(piece) ?? 0) + 1;
    this.restarts.set(piece, restarts);
    return { restart: true, delayMs: Math.min(this.backoff.firstDelayMs * 2 ** (failures - 1), this.backoff.maxDelayMs), restarts };
  }

  /** How many times the stack restarted each piece that it restarted at all. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.restarts);
  }
}

/** How an exit reads in the stack's log: `signal SIGKILL`, `code 1`. */
export function exitReason(code: number | null, signal: NodeJS.Signals | null): string {
  return signal !== null ? `signal ${signal}` : `code ${code ?? "?"}`;
}
