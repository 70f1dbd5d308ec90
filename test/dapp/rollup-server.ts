/**
 * A small rollup HTTP server (the API a Cartesi node serves the dapp: /finish, /notice, /report,
 * /voucher, /exception) for driving the real dapp loop in-process. Requests are queued; each call
 * resolves once the dapp has finished that request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Hex } from "viem";
import { isBatchNotice } from "../../common/attestation-batch.ts";

export interface AdvanceOutcome {
  index: number;
  status: "accept" | "reject";
  /** The input's JSON notices, in order. */
  notices: Hex[];
  /** Its batch notice (common/attestation-batch.ts), sent after them, or null when it sent none. */
  batch: Hex | null;
  reports: Hex[];
}

export interface InspectOutcome {
  status: "Accepted" | "Rejected";
  reports: Hex[];
  exception: Hex | null;
}

export interface AdvanceInput {
  payload: Hex;
  sender: string;
  timestamp: number;
  /** Defaults to the next index after the last one handed out. */
  index?: number;
  blockNumber?: number;
}

interface Pending {
  type: "advance_state" | "inspect_state";
  data: unknown;
  notices: Hex[];
  reports: Hex[];
  exception: Hex | null;
  settle(status: "accept" | "reject"): void;
}

export class RollupServer {
  private readonly server: Server;
  private readonly queue: Pending[] = [];
  private current: Pending | undefined;
  private waiting: (() => void) | undefined;
  private nextIndex = 0;
  url = "";

  constructor(private readonly idleWaitMs = 200) {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.waiting?.();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  advance(input: AdvanceInput): Promise<AdvanceOutcome> {
    const index = input.index ?? this.nextIndex;
    this.nextIndex = Math.max(this.nextIndex, index + 1);
    const data = {
      metadata: {
        msg_sender: input.sender,
        epoch_index: 0,
        input_index: index,
        block_number: input.blockNumber ?? 100 + index,
        timestamp: input.timestamp,
      },
      payload: input.payload,
    };
    return new Promise((resolve) => {
      const pending: Pending = {
        type: "advance_state",
        data,
        notices: [],
        reports: [],
        exception: null,
        settle: (status) => {
          // Tests read the JSON notices as the specification has them, and the batch notice on its own.
          const last = pending.notices.at(-1);
          const batch = last !== undefined && isBatchNotice(last) ? last : null;
          resolve({ index, status, notices: batch === null ? pending.notices : pending.notices.slice(0, -1), batch, reports: pending.reports });
        },
      };
      this.enqueue(pending);
    });
  }

  inspect(payload: Hex): Promise<InspectOutcome> {
    return new Promise((resolve) => {
      const pending: Pending = {
        type: "inspect_state",
        data: { payload },
        notices: [],
        reports: [],
        exception: null,
        // The status the dapp sends after an inspect means nothing; /exception decides.
        settle: () =>
          resolve(
            pending.exception === null
              ? { status: "Accepted", reports: pending.reports, exception: null }
              : { status: "Rejected", reports: [], exception: pending.exception },
          ),
      };
      this.enqueue(pending);
    });
  }

  private enqueue(pending: Pending): void {
    this.queue.push(pending);
    this.waiting?.();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    switch (req.url) {
      case "/finish": {
        const finished = this.current;
        this.current = undefined;
        if (finished) finished.settle(body.status === "reject" ? "reject" : "accept");
        const next = this.queue.shift() ?? (await this.waitForRequest());
        if (!next) return send(res, 202, undefined);
        this.current = next;
        return send(res, 200, { request_type: next.type, data: next.data });
      }
      case "/notice":
        if (!this.current) return send(res, 400, { error: "no request in progress" });
        this.current.notices.push(body.payload as Hex);
        return send(res, 201, { index: this.current.notices.length - 1 });
      case "/voucher":
        return send(res, 201, { index: 0 });
      case "/report":
        if (!this.current) return send(res, 400, { error: "no request in progress" });
        this.current.reports.push(body.payload as Hex);
        return send(res, 202, undefined);
      case "/exception":
        if (!this.current) return send(res, 400, { error: "no request in progress" });
        this.current.exception = body.payload as Hex;
        return send(res, 202, undefined);
      default:
        return send(res, 404, undefined);
    }
  }

  private waitForRequest(): Promise<Pending | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        resolve(undefined);
      }, this.idleWaitMs);
      this.waiting = () => {
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(this.queue.shift());
      };
    });
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return {};
  const value: unknown = JSON.parse(text);
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
