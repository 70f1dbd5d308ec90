/**
 * A reader: a validator (DEVNODE_ROLE=validator) serving the rollup's reads as a replica of the node, for
 * an api that spreads its inspects over several (docs/operations.md, Readers). `GET /reader` says how
 * current it is; it refuses reads the chain's claims contradict or do not yet vouch for: after any claim
 * that did not match its own, until an operator acts (503 READER_MISMATCH), and, when it started from a
 * snapshot, until a claim over an input after the snapshot matched (503 READER_NOT_VERIFIED). A reader
 * whose chain reads stopped says it is `stale` and still answers: the api decides whether to skip it.
 * `POST /snapshot` takes a snapshot of it (snapshot.ts). Both versions' node servers route here; it
 * knows neither.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { ChainReads } from "./chain.ts";
import { BodyTooLargeError, readBody, sendJson } from "./http.ts";
import { installedSnapshotOf, SnapshotError, type InstalledSnapshot, type SnapshotErrorCode, type SnapshotTaker } from "./snapshot.ts";
import type { ReaderVerdicts } from "./validator.ts";

/** `GET /reader`, exactly. */
export interface ReaderStatus {
  serving: boolean;
  /** Why it serves no reads; null while it serves. */
  reason: string | null;
  processedInputCount: number;
  lastInputIndex: number | null;
  lastInputBlock: number | null;
  chainBlock: number | null;
  /** Unix ms of the last successful read of the chain. */
  chainReadAt: number | null;
  stale: boolean;
  snapshot: { inputCount: number; verified: boolean } | null;
}

/** Why a reader serves no read now: the body of its 503. */
export interface ReadRefusal {
  code: "READER_MISMATCH" | "READER_NOT_VERIFIED";
  message: string;
}

export interface ReaderSources {
  model: { readonly processedInputCount: number };
  record: { getInput(index: number): { blockNumber: number } | undefined; getMeta(key: string): string | undefined };
  chain: { reads(): ChainReads };
  validator: { verdicts(): ReaderVerdicts };
  /** READER_STALE_MS. */
  staleMs: number;
  snapshots: SnapshotTaker;
  now?: () => number;
}

const CORS = { "access-control-allow-origin": "*" };
const SNAPSHOT_REQUEST_MAX_BYTES = 64 * 1024;
const snapshotRequest = z.object({ path: z.string().min(1).optional() }).strict();

/** Each refusal of a snapshot as the wire says it (the one place SnapshotError codes meet HTTP). */
const SNAPSHOT_STATUS: Record<SnapshotErrorCode, number> = { SNAPSHOT_BUSY: 409, SNAPSHOT_EXISTS: 409, SNAPSHOT_TIMEOUT: 503, SNAPSHOT_FAILED: 500 };

export class Reader {
  /** Read once: a record gets its snapshot when it is installed, before the devnode starts. */
  private readonly installed: InstalledSnapshot | undefined;
  private readonly now: () => number;

  constructor(private readonly sources: ReaderSources) {
    this.installed = installedSnapshotOf(sources.record);
    this.now = sources.now ?? Date.now;
  }

  /** Why no read may be served now, or undefined: asked on every inspect, so from memory only. */
  refusal(): ReadRefusal | undefined {
    const { mismatch, matchedThroughInput } = this.sources.validator.verdicts();
    if (mismatch !== null) {
      return { code: "READER_MISMATCH", message: `a claim on chain does not match this reader's state: ${mismatch}; it serves no reads until its operator acts` };
    }
    const installed = this.installed;
    if (installed !== undefined && matchedThroughInput < installed.inputCount) {
      return {
        code: "READER_NOT_VERIFIED",
        message: `started from a snapshot at input ${installed.inputCount}: it serves no reads until a claim on chain over input ${installed.inputCount} or later matches its own`,
      };
    }
    return undefined;
  }

  status(): ReaderStatus {
    const refusal = this.refusal();
    const processed = this.sources.model.processedInputCount;
    const { chainBlock, chainReadAt } = this.sources.chain.reads();
    const installed = this.installed;
    return {
      serving: refusal === undefined,
      reason: refusal?.message ?? null,
      processedInputCount: processed,
      lastInputIndex: processed > 0 ? processed - 1 : null,
      lastInputBlock: processed > 0 ? (this.sources.record.getInput(processed - 1)?.blockNumber ?? null) : null,
      chainBlock,
      chainReadAt,
      stale: chainReadAt === null || this.now() - chainReadAt > this.sources.staleMs,
      snapshot: installed === undefined ? null : { inputCount: installed.inputCount, verified: this.sources.validator.verdicts().matchedThroughInput >= installed.inputCount },
    };
  }

  /** Answers a read's request with 503 when none may be served; true when it did. */
  refuseRead(res: ServerResponse): boolean {
    const refusal = this.refusal();
    if (refusal === undefined) return false;
    sendJson(res, 503, { error: refusal }, CORS);
    return true;
  }

  /** `GET /reader` and `POST /snapshot`; false for any other route. */
  async route(req: IncomingMessage, res: ServerResponse, path: string, method: string): Promise<boolean> {
    if (path === "/reader" && method === "GET") {
      sendJson(res, 200, this.status(), CORS);
      return true;
    }
    if (path !== "/snapshot" || method !== "POST") return false;
    await this.snapshot(req, res);
    return true;
  }

  /** `POST /snapshot` with an empty body or `{"path": "<folder>"}`. */
  private async snapshot(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fail = (status: number, code: string, message: string): void => sendJson(res, status, { error: { code, message } }, CORS);
    let body: Buffer;
    try {
      body = await readBody(req, SNAPSHOT_REQUEST_MAX_BYTES);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return fail(413, "BAD_REQUEST", error.message);
      throw error;
    }
    let json: unknown = {};
    try {
      if (body.length > 0) json = JSON.parse(body.toString("utf8"));
    } catch {
      return fail(400, "BAD_REQUEST", 'expected an empty body or JSON {"path": "<folder>"}');
    }
    const request = snapshotRequest.safeParse(json);
    if (!request.success) return fail(400, "BAD_REQUEST", 'expected an empty body or JSON {"path": "<folder>"}');
    // A state the chain contradicts is nothing to start a reader from.
    const refusal = this.refusal();
    if (refusal?.code === "READER_MISMATCH") return fail(409, refusal.code, refusal.message);
    try {
      const { folder, manifest } = await this.sources.snapshots.take(request.data.path);
      sendJson(res, 200, { folder, inputCount: manifest.inputCount, snapshot: manifest }, CORS);
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error;
      fail(SNAPSHOT_STATUS[error.code], error.code, error.message);
    }
  }
}
