/**
 * What the members of a Quorum voted, judged against this node's own outputs roots (docs/quorum.md);
 * under an Authority its owner is the one member and its claims the votes.
 * A vote is one member's word: it decides nothing alone, so a wrong one does not stop this node's reads
 * (only an accepted root that contradicts its own does, devnode/validator.ts). It is still evidence
 * against that member (a broken node, or its key in someone else's hands): logged as an error once,
 * counted per member in the metrics, and listed in `GET /consensus`, which also says, for each epoch
 * waiting for a quorum, who has voted and who has not.
 */
import type { Address, Hex } from "viem";
import type { Log } from "../log.ts";
import { ClaimEventCursor, type ClaimEvent, type V2Application, type V2ApplicationState } from "./application.ts";
import type { V2Store } from "./record.ts";
import { computedRootAt } from "./validator.ts";

/** Epochs `GET /consensus` lists, newest first. */
const SHOWN_EPOCHS = 20;
/** Epochs, newest last, among which `waiting` looks. */
const WAITING_WINDOW = 200;

export interface WrongVote {
  member: Address;
  epochIndex: number;
  lastBlock: number;
  voted: Hex;
  computed: Hex;
  transactionHash: Hex;
}

/** `GET /consensus`, and the `consensus` of the api's status. */
export interface ConsensusStatus {
  kind: V2ApplicationState["consensus"];
  address: Address;
  epochLength: number;
  /** Votes a root needs to be accepted: a majority of the members (1 under an Authority). */
  needed: number;
  members: { id: number; address: Address; votes: number; wrongVotes: number; self: boolean }[];
  /** Epochs with inputs, newest first: this node's root, the accepted one, and each member's vote. */
  epochs: { index: number; lastBlock: number; computed: Hex | null; accepted: Hex | null; votes: Record<string, Hex> }[];
  /** Epochs this node has computed that no root was accepted for yet, oldest first. */
  waiting: { index: number; lastBlock: number; votes: number; needed: number; notVoted: Address[] }[];
  wrongVotes: WrongVote[];
  /** Why claims are not being accepted, in a sentence, or null while none waits. */
  reason: string | null;
}

export class QuorumVotes {
  /** Votes by epoch index, in chain order. */
  private readonly votes = new Map<number, ClaimEvent[]>();
  private readonly wrong: WrongVote[] = [];
  /** Votes judged already: a member's vote for one root in one epoch counts once, however often it is sent. */
  private readonly judged = new Set<string>();
  private readonly cursor: ClaimEventCursor;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly store: V2Store,
    app: Pick<V2Application, "claimEvents" | "latestBlock">,
    private state: V2ApplicationState,
    private readonly processedInputs: () => number,
    /** Where a wrong vote is reported (stderr). */
    private readonly alarm: Log,
    /** Whether this node records each epoch's acceptance (the claimer, and every node under a Quorum). */
    private readonly recordsAcceptance: boolean,
  ) {
    this.cursor = new ClaimEventCursor(app, "ClaimSubmitted", () => this.state);
  }

  /** After the contracts were placed again (a fresh chain): the votes read so far were another Quorum's. */
  reset(state: V2ApplicationState): void {
    this.state = state;
    this.votes.clear();
    this.judged.clear();
    this.wrong.length = 0;
    this.cursor.rewind();
  }

  /** Reads the votes cast since the last call and judges every vote whose epoch this node has computed (joining a refresh under way). */
  refresh(): Promise<void> {
    this.refreshing ??= this.readAndJudge().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readAndJudge(): Promise<void> {
    await this.cursor.readNew((votes) => {
      for (const vote of votes) {
        const index = Math.floor(vote.lastBlock / this.state.epochLength);
        this.votes.set(index, [...(this.votes.get(index) ?? []), vote]);
      }
    });
    for (const [index, votes] of this.votes) {
      for (const vote of votes) {
        const key = `${vote.submitter}:${vote.lastBlock}:${vote.outputsRoot}`;
        if (this.judged.has(key)) continue;
        const mine = computedRootAt(this.store, this.state.epochLength, vote.lastBlock, this.processedInputs());
        if (mine.kind === "wait") continue;
        this.judged.add(key);
        if (mine.computed === vote.outputsRoot) continue;
        const wrong = { member: vote.submitter as Address, epochIndex: index, lastBlock: vote.lastBlock, voted: vote.outputsRoot, computed: mine.computed, transactionHash: vote.transactionHash };
        this.wrong.push(wrong);
        const own = this.state.memberId > 0 && this.state.members[this.state.memberId - 1]?.toLowerCase() === wrong.member.toLowerCase();
        this.alarm(`Quorum member ${wrong.member} voted outputs root ${wrong.voted} for epoch ${index} (ending at block ${wrong.lastBlock}); this node computes ${wrong.computed} (transaction ${wrong.transactionHash})${own ? ": that is this node's own key, and this node did not send it: someone else holds the key" : ""}`);
      }
    }
  }

  status(): ConsensusStatus {
    const { consensus, authority, epochLength, members, memberId } = this.state;
    const needed = consensus === "quorum" ? Math.floor(members.length / 2) + 1 : 1;
    const claims = this.store.claims();
    const spans = this.store.epochSpans();
    const processed = this.processedInputs();
    const rootOf = (lastBlock: number): Hex | null => {
      const own = computedRootAt(this.store, epochLength, lastBlock, processed);
      return own.kind === "computed" ? own.computed : null;
    };
    const epochs = spans
      .slice(-SHOWN_EPOCHS)
      .reverse()
      .map((span) => ({
        index: span.index,
        lastBlock: span.lastBlock,
        computed: rootOf(span.lastBlock),
        accepted: claims.get(span.index)?.outputsRoot ?? null,
        votes: Object.fromEntries((this.votes.get(span.index) ?? []).map((v) => [v.submitter ?? "", v.outputsRoot])),
      }));
    // Only a node that records acceptances knows what waits (a validator under an Authority records none),
    // and only the recent epochs are looked at: a scrape must not compute a root for every epoch ever.
    const waiting = (this.recordsAcceptance ? spans.slice(-WAITING_WINDOW) : [])
      .filter((span) => !claims.has(span.index) && rootOf(span.lastBlock) !== null)
      .map((span) => {
        const voters = new Set((this.votes.get(span.index) ?? []).map((v) => (v.submitter ?? "").toLowerCase()));
        return { index: span.index, lastBlock: span.lastBlock, votes: voters.size, needed, notVoted: members.filter((m) => !voters.has(m.toLowerCase())) };
      });
    const first = waiting[0];
    const reason =
      first === undefined
        ? null
        : `epoch ${first.index} (ending at block ${first.lastBlock}) waits for ${consensus === "quorum" ? `a quorum: ${first.votes} of ${members.length} member(s) voted, ${needed} needed` : "the Authority's claim"}; not voted: ${first.notVoted.join(", ") || "none"}${waiting.length > 1 ? ` (${waiting.length} epochs wait)` : ""}`;
    const count = (m: Address, list: { submitter?: Address | null; member?: Address }[]): number => list.filter((v) => (v.submitter ?? v.member ?? "").toLowerCase() === m.toLowerCase()).length;
    const allVotes = [...this.votes.values()].flat();
    return {
      kind: consensus,
      address: authority,
      epochLength,
      needed,
      members: members.map((address, i) => ({ id: i + 1, address, votes: count(address, allVotes), wrongVotes: count(address, this.wrong), self: consensus === "quorum" && memberId === i + 1 })),
      epochs,
      waiting,
      wrongVotes: [...this.wrong],
      reason,
    };
  }
}
