/**
 * The rollup model: the one object that owns what the dapp is doing. It is `idle`, `advancing` an input
 * or `inspecting` a query; the rollup HTTP server and the version's node server (v1/node-server.ts,
 * v2/node-server.ts) are thin layers that call it. Advance inputs and inspect queries wait in two queues
 * (queues.ts) and are handed to the dapp one at a time, on its `/finish` long-poll, alternating between
 * the queues when both hold work so neither starves the other. Both versions' metadata shapes are the
 * rollup HTTP API's, so they are here; how v2 encodes outputs comes from its record (AdvanceSink).
 */
import type { Address, Hex } from "viem";
import type { CompletionStatus } from "../common/wire.ts";
import { AdvanceGate, Fifo, PendingInspect, type InspectOutcome } from "./queues.ts";
import type { AdvanceOutputs, InputRecord } from "./store.ts";

export type FinishStatus = "accept" | "reject";

/** v1 advance metadata: `timestamp` is the block timestamp in seconds; `epoch_index` is always 0. */
export interface AdvanceMetadata {
  msg_sender: Address;
  epoch_index: number;
  input_index: number;
  block_number: number;
  timestamp: number;
}

/** The advance metadata a v2 node gives the dapp: the EvmAdvance's fields (devnode/v2/inputs.ts decodes them). */
export interface V2AdvanceMetadata {
  chain_id: number;
  app_contract: Address;
  msg_sender: Address;
  block_number: number;
  /** Seconds. */
  block_timestamp: number;
  /** 0x and 64 hex digits. */
  prev_randao: Hex;
  input_index: number;
}

export type RollupRequest =
  | { request_type: "advance_state"; data: { metadata: AdvanceMetadata | V2AdvanceMetadata; payload: Hex } }
  | { request_type: "inspect_state"; data: { payload: Hex } };

/** Where finished advances go: the SQLite record in the devnode, a fake in unit tests. */
export interface AdvanceSink {
  completeInput(index: number, status: CompletionStatus, outputs: AdvanceOutputs, exceptionPayload: Hex | null): void;
  /**
   * How the record encodes notices and vouchers as outputs: a v2 record has it (devnode/v2/record.ts keeps
   * v2 outputs), and a v2 model needs it; the model itself knows no version's contracts.
   */
  readonly outputEncoding?: OutputEncoding;
}

/** Notices and vouchers as the outputs a version proves (v2: the ABI-encoded calls of devnode/v2/outputs.ts). */
export interface OutputEncoding {
  notice(payload: Hex): Hex;
  voucher(destination: Address, value: bigint, payload: Hex): Hex;
  delegateCallVoucher(destination: Address, payload: Hex): Hex;
}

/** One connection of the dapp to the rollup HTTP server; the server makes one per socket. */
export interface DappSession {
  readonly id: number;
}

/** A dapp call the current state does not allow (a notice while idle, a voucher during an inspect...). */
export class ModelError extends Error {
  override readonly name = "ModelError";
}

export interface ModelOptions {
  /** A `/finish` with nothing to hand out answers 202 after this long. */
  finishTimeoutMs: number;
  /** An inspect waits this long for a dapp to connect before it fails. */
  dappWaitMs: number;
  /** An inspect fails after this long whatever the dapp is doing. */
  inspectTimeoutMs: number;
  /** Inputs already processed according to the record (for `processed_input_count`). */
  processedInputCount: number;
  /**
   * Set for a Rollups v2 node: the dapp gets v2 metadata, and its notices and vouchers are v2 outputs
   * numbered across the application's whole history (`outputCount` of them are recorded already), encoded
   * as the sink's `outputEncoding` says.
   */
  v2?: V2Context;
}

export interface V2Context {
  chainId: number;
  appContract: Address;
  outputCount: number;
}

type State =
  | { kind: "idle" }
  | {
      kind: "advancing";
      input: InputRecord;
      session: DappSession;
      outputs: AdvanceOutputs;
      /** The connection that took the input closed: if the next call is a `/finish`, the dapp died. */
      orphaned: boolean;
    }
  | { kind: "inspecting"; inspect: PendingInspect; session: DappSession; reports: Hex[] };

type FinishWaiter = { session: DappSession; resolve: (request: RollupRequest | null) => void; timer: NodeJS.Timeout };

export interface ModelStatus {
  state: State["kind"];
  currentInput: number | null;
  queuedInputs: number;
  queuedInspects: number;
  dappConnected: boolean;
  processedInputCount: number;
}

const SWEEP_INTERVAL_MS = 100;

export class RollupModel {
  private state: State = { kind: "idle" };
  private readonly advances = new Fifo<InputRecord>();
  private readonly inspects = new Fifo<PendingInspect>();
  private readonly gate = new AdvanceGate();
  private readonly sessions = new Set<DappSession>();
  private waiter: FinishWaiter | undefined;
  private lastWasAdvance = false;
  private processed: number;
  /** v2: outputs of accepted inputs so far; the next output's index once the current advance's are added. */
  private outputCount: number;
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** v2: how notices and vouchers become outputs; undefined on v1, which keeps them apart. */
  private readonly encoding: OutputEncoding | undefined;

  constructor(
    private readonly sink: AdvanceSink,
    private readonly options: ModelOptions,
  ) {
    this.processed = options.processedInputCount;
    this.outputCount = options.v2?.outputCount ?? 0;
    if (options.v2 !== undefined && sink.outputEncoding === undefined) throw new Error("a v2 model needs a record that encodes v2 outputs (devnode/v2/record.ts)");
    this.encoding = options.v2 === undefined ? undefined : sink.outputEncoding;
  }

  get rollups(): "v1" | "v2" {
    return this.options.v2 === undefined ? "v1" : "v2";
  }

  get processedInputCount(): number {
    return this.processed;
  }

  status(): ModelStatus {
    return {
      state: this.state.kind,
      currentInput: this.state.kind === "advancing" ? this.state.input.index : null,
      queuedInputs: this.advances.size,
      queuedInspects: this.inspects.size,
      dappConnected: this.sessions.size > 0,
      processedInputCount: this.processed,
    };
  }

  // ---- the chain side ----

  /** Queues an input for the dapp; inputs must arrive in index order. */
  enqueueAdvance(input: InputRecord): void {
    this.advances.push(input);
    this.pump();
  }

  /** Hands the dapp no new input until `resumeAdvances`; resolves once the one it holds (if any) is finished. */
  pauseAdvances(): Promise<void> {
    return this.gate.close(this.state.kind === "advancing");
  }

  resumeAdvances(): void {
    this.gate.open();
    this.pump();
  }

  // ---- the query side ----

  /** Queues an inspect; resolves when the dapp has answered it, or with a reason why it could not. */
  inspect(payload: Hex): Promise<InspectOutcome> {
    if (this.closed) return Promise.resolve({ ok: false, reason: "shutdown", message: "the devnode is stopping" });
    return new Promise((resolve) => {
      this.inspects.push(new PendingInspect(payload, resolve));
      this.pump();
      this.sweepTimer ??= setInterval(this.sweep, SWEEP_INTERVAL_MS);
    });
  }

  // ---- the dapp side (rollup HTTP server) ----

  connect(session: DappSession): void {
    this.sessions.add(session);
  }

  disconnect(session: DappSession): void {
    this.sessions.delete(session);
    if (this.waiter?.session === session) this.releaseWaiter(null);
    const state = this.state;
    if (state.kind === "advancing" && state.session === session) state.orphaned = true;
    if (state.kind === "inspecting" && state.session === session) {
      state.inspect.settle({ ok: false, reason: "dapp_gone", message: "the dapp disconnected during the inspect" });
      this.state = { kind: "idle" };
    }
  }

  /**
   * Ends the current request with `status` (ignored when nothing is in progress, after an inspect, and for
   * the first `/finish` of a dapp that replaced a dead one) and waits for the next request; null means
   * "nothing yet" (HTTP 202).
   */
  finish(session: DappSession, status: FinishStatus): Promise<RollupRequest | null> {
    const answerInspect = this.closeCurrent(status);
    // A newer /finish supersedes one still waiting (a restarted dapp, or a client that gave up).
    if (this.waiter !== undefined) this.releaseWaiter(null);
    const next = this.closed ? null : this.takeNext(session);
    if (answerInspect !== undefined) {
      // With more work queued, the dapp gets it before the inspect's client gets its answer: the dapp is
      // the one serial resource, and the answer (serialized and written) then overlaps with its work.
      if (next !== null) setImmediate(answerInspect);
      else answerInspect();
    }
    if (next !== null || this.closed) return Promise.resolve(next);
    return new Promise((resolve) => {
      const waiter: FinishWaiter = {
        session,
        resolve,
        timer: setTimeout(() => {
          if (this.waiter === waiter) this.releaseWaiter(null);
        }, this.options.finishTimeoutMs),
      };
      this.waiter = waiter;
    });
  }

  /** v1: the notice's index within the input; v2: its index among all the application's outputs. */
  addNotice(payload: Hex): number {
    const state = this.advancing("notice");
    if (this.encoding !== undefined) return this.addOutput(state, this.encoding.notice(payload));
    return state.outputs.notices.push(payload) - 1;
  }

  /** `value` (wei) is v2's: a v1 voucher carries none. */
  addVoucher(destination: Address, payload: Hex, value = 0n): number {
    const state = this.advancing("voucher");
    if (this.encoding !== undefined) return this.addOutput(state, this.encoding.voucher(destination, value, payload));
    return state.outputs.vouchers.push({ destination, payload }) - 1;
  }

  /** v2 only (the route does not exist on a v1 node). */
  addDelegateCallVoucher(destination: Address, payload: Hex): number {
    const state = this.advancing("delegate call voucher");
    if (this.encoding === undefined) throw new ModelError("a delegate call voucher is a v2 output");
    return this.addOutput(state, this.encoding.delegateCallVoucher(destination, payload));
  }

  private addOutput(state: Extract<State, { kind: "advancing" }>, output: Hex): number {
    return this.outputCount + state.outputs.outputs.push(output) - 1;
  }

  addReport(payload: Hex): void {
    const state = this.state;
    if (state.kind === "advancing") {
      state.orphaned = false;
      state.outputs.reports.push(payload);
    } else if (state.kind === "inspecting") {
      state.reports.push(payload);
    } else {
      throw new ModelError("no rollup request in progress: a report needs an advance or an inspect");
    }
  }

  /** The dapp gives up on the current request: the input is EXCEPTION, the inspect is Rejected. */
  exception(payload: Hex): void {
    const state = this.state;
    if (state.kind === "advancing") {
      // The record keeps only the reports of an input that did not succeed.
      this.sink.completeInput(state.input.index, "EXCEPTION", state.outputs, payload);
      this.processed++;
      this.gate.between();
    } else if (state.kind === "inspecting") {
      state.inspect.settle({
        ok: true,
        status: "Rejected",
        exceptionPayload: payload,
        reports: [],
        processedInputCount: this.processed,
      });
    } else {
      throw new ModelError("no rollup request in progress: nothing to raise an exception on");
    }
    this.state = { kind: "idle" };
  }

  /** Stops handing out work: pending inspects fail, a waiting `/finish` gets 202. */
  close(): void {
    this.closed = true;
    if (this.waiter !== undefined) this.releaseWaiter(null);
    for (const inspect of this.inspects.values()) {
      inspect.settle({ ok: false, reason: "shutdown", message: "the devnode is stopping" });
    }
    if (this.state.kind === "inspecting") {
      this.state.inspect.settle({ ok: false, reason: "shutdown", message: "the devnode is stopping" });
    }
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }

  // ---- internals ----

  private advancing(what: string): Extract<State, { kind: "advancing" }> {
    const state = this.state;
    if (state.kind !== "advancing") {
      throw new ModelError(
        state.kind === "inspecting"
          ? `a ${what} cannot be emitted during an inspect`
          : `no advance in progress: a ${what} needs one`,
      );
    }
    // The dapp that took the input is evidently alive, even if that connection closed.
    state.orphaned = false;
    return state;
  }

  /** Ends the current request; for an inspect, returns the settling of its outcome for the caller to run. */
  private closeCurrent(status: FinishStatus): (() => void) | undefined {
    const state = this.state;
    let answerInspect: (() => void) | undefined;
    if (state.kind === "advancing") {
      if (state.orphaned) {
        // The dapp died mid-advance and a new one asks for work: hand the input out again, from scratch.
        this.advances.unshift(state.input);
      } else {
        this.sink.completeInput(state.input.index, status === "accept" ? "ACCEPTED" : "REJECTED", state.outputs, null);
        this.processed++;
        // A rejected input's outputs are discarded, and the next input's outputs take their indices.
        if (status === "accept") this.outputCount += state.outputs.outputs.length;
      }
      this.gate.between();
    } else if (state.kind === "inspecting") {
      const outcome: InspectOutcome = {
        ok: true,
        status: "Accepted",
        exceptionPayload: null,
        reports: state.reports,
        processedInputCount: this.processed,
      };
      answerInspect = () => state.inspect.settle(outcome);
    }
    this.state = { kind: "idle" };
    return answerInspect;
  }

  private nextInspect(): PendingInspect | undefined {
    let head = this.inspects.peek();
    while (head !== undefined && head.settled) {
      this.inspects.shift();
      head = this.inspects.peek();
    }
    return head;
  }

  private takeNext(session: DappSession): RollupRequest | null {
    const inspect = this.nextInspect();
    const input = this.gate.isOpen ? this.advances.peek() : undefined;
    if (inspect !== undefined && (input === undefined || this.lastWasAdvance)) {
      this.inspects.shift();
      this.lastWasAdvance = false;
      this.state = { kind: "inspecting", inspect, session, reports: [] };
      return { request_type: "inspect_state", data: { payload: inspect.payload } };
    }
    if (input !== undefined) {
      this.advances.shift();
      this.lastWasAdvance = true;
      this.state = {
        kind: "advancing",
        input,
        session,
        outputs: { notices: [], vouchers: [], reports: [], outputs: [] },
        orphaned: false,
      };
      return { request_type: "advance_state", data: { metadata: this.metadataOf(input), payload: input.payload } };
    }
    return null;
  }

  private metadataOf(input: InputRecord): AdvanceMetadata | V2AdvanceMetadata {
    const v2 = this.options.v2;
    if (v2 === undefined) {
      return { msg_sender: input.msgSender, epoch_index: 0, input_index: input.index, block_number: input.blockNumber, timestamp: input.timestamp };
    }
    // As the v2 rollup HTTP server writes them: addresses in lower case, prev_randao as 32 bytes of hex.
    return {
      chain_id: v2.chainId,
      app_contract: v2.appContract.toLowerCase() as Address,
      msg_sender: input.msgSender.toLowerCase() as Address,
      block_number: input.blockNumber,
      block_timestamp: input.timestamp,
      prev_randao: input.prevRandao ?? `0x${"00".repeat(32)}`,
      input_index: input.index,
    };
  }

  /** Hands new work to a `/finish` that is waiting for it. */
  private pump(): void {
    const waiter = this.waiter;
    if (waiter === undefined || this.state.kind !== "idle") return;
    const next = this.takeNext(waiter.session);
    if (next !== null) this.releaseWaiter(next);
  }

  private releaseWaiter(request: RollupRequest | null): void {
    const waiter = this.waiter;
    if (waiter === undefined) return;
    this.waiter = undefined;
    clearTimeout(waiter.timer);
    waiter.resolve(request);
  }

  /** Fails inspects that waited too long; one interval for all of them keeps timers off the hot path. */
  private readonly sweep = (): void => {
    const now = Date.now();
    const connected = this.sessions.size > 0;
    for (const inspect of this.inspects.values()) {
      if (inspect.settled) continue;
      const age = now - inspect.since;
      if (!connected && age >= this.options.dappWaitMs) {
        inspect.settle({
          ok: false,
          reason: "no_dapp",
          message: `no dapp is connected to the rollup HTTP server (waited ${this.options.dappWaitMs} ms)`,
        });
      } else if (age >= this.options.inspectTimeoutMs) {
        inspect.settle({ ok: false, reason: "timeout", message: "the dapp did not answer the inspect in time" });
      }
    }
    const state = this.state;
    if (state.kind === "inspecting" && now - state.inspect.since >= this.options.inspectTimeoutMs) {
      state.inspect.settle({ ok: false, reason: "timeout", message: "the dapp did not answer the inspect in time" });
    }
    if (this.nextInspect() === undefined && state.kind !== "inspecting") {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
    }
  };
}
