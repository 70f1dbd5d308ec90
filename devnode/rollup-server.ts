/**
 * The rollup HTTP server (Cartesi rollup HTTP API, v1 host mode) the dapp talks to: `/finish`, `/notice`,
 * `/voucher`, `/report`, `/exception`. Handlers only parse and validate; the model decides.
 */
import type { Address, Hex } from "viem";
import { messageOf } from "../common/errors.ts";
import { isHex } from "../common/hex.ts";
import { MAX_BODY_BYTES } from "./http.ts";
import { createHttp1Server, type Http1Request, type Http1Response, type Http1Server } from "./http1-server.ts";
import { createDevnodeLog, unexpected, type Log } from "./log.ts";
import { ModelError, type DappSession, type FinishStatus, type RollupModel } from "./model.ts";

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

function text(status: number, body: string): Http1Response {
  return { status, contentType: "text/plain; charset=utf-8", body };
}

function json(status: number, value: unknown): Http1Response {
  return { status, contentType: "application/json", body: JSON.stringify(value) };
}

/** `/report` is on every inspect's path: answered with as little as HTTP allows. */
const EMPTY: Http1Response = { status: 200, body: "" };
const EMPTY_ACCEPTED: Http1Response = { status: 202, body: "" };

/** The dapp's connections stay open while it works on a long advance; the model reads a close as its death. */
const KEEP_ALIVE_MS = 600_000;

class BadRequest extends Error {
  override readonly name = "BadRequest";
}

function parseObject(body: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    throw new BadRequest("request body is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BadRequest("request body is not a JSON object");
  }
  return value as Record<string, unknown>;
}

function hexField(body: Record<string, unknown>, name: string): Hex {
  const value = body[name];
  if (typeof value !== "string" || !isHex(value)) {
    throw new BadRequest(`${name} must be 0x-prefixed hex with an even number of digits`);
  }
  return value;
}

function finishStatus(body: Record<string, unknown>): FinishStatus {
  const status = body["status"];
  if (status !== "accept" && status !== "reject") throw new BadRequest('status must be "accept" or "reject"');
  return status;
}

function addressField(body: Record<string, unknown>): Address {
  const destination = body["destination"];
  if (typeof destination !== "string" || !ADDRESS_RE.test(destination)) {
    throw new BadRequest("destination must be a 0x-prefixed 20-byte hex address");
  }
  return destination as Address;
}

/** `logError`: where an unexpected failure is reported (the node's labelled log; plain `[devnode]` lines by default). */
export function createRollupServer(model: RollupModel, logError: Log = createDevnodeLog("plain").error): Http1Server {
  let nextSessionId = 0;
  const v2 = model.rollups === "v2";
  const created = v2 ? 201 : 200;
  // v2 acknowledges a report or an exception with 202 and no body.
  const done = v2 ? EMPTY_ACCEPTED : EMPTY;

  const route = async (req: Http1Request, session: DappSession): Promise<Http1Response> => {
    if (req.method !== "POST") return text(405, "method not allowed");
    const body = parseObject(req.body);
    switch (req.path) {
      case "/finish": {
        const request = await model.finish(session, finishStatus(body));
        return request === null ? text(202, "no rollup request available") : json(200, request);
      }
      // v2's server answers an output with 201 and its index among all the application's outputs.
      case "/notice":
        return json(created, { index: model.addNotice(hexField(body, "payload")) });
      case "/voucher": {
        const destination = addressField(body);
        if (!v2) return json(200, { index: model.addVoucher(destination, hexField(body, "payload")) });
        const value = body["value"];
        if (typeof value !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(value)) {
          throw new BadRequest("value must be a 0x-prefixed hex quantity of at most 32 bytes");
        }
        return json(201, { index: model.addVoucher(destination, hexField(body, "payload"), BigInt(value)) });
      }
      case "/delegate-call-voucher":
        if (!v2) return text(404, "not found");
        return json(201, { index: model.addDelegateCallVoucher(addressField(body), hexField(body, "payload")) });
      case "/report":
        model.addReport(hexField(body, "payload"));
        // Answered after the requests already read: a dapp that writes /finish right behind its report
        // (pipelining, as dapp/transports/http.ts does) has the inspect's client answered first. Answers still leave
        // in request order.
        return new Promise((resolve) => setImmediate(() => resolve(done)));
      case "/exception":
        model.exception(hexField(body, "payload"));
        return done;
      default:
        return text(404, "not found");
    }
  };

  return createHttp1Server<DappSession>({
    maxBodyBytes: MAX_BODY_BYTES,
    keepAliveMs: KEEP_ALIVE_MS,
    logError,
    connect() {
      const session: DappSession = { id: nextSessionId++ };
      model.connect(session);
      return session;
    },
    disconnect: (session) => model.disconnect(session),
    handle: (req, session) =>
      route(req, session).catch((error: unknown): Http1Response => {
        if (error instanceof BadRequest || error instanceof ModelError) return text(400, error.message);
        unexpected(logError, "rollup HTTP server", error);
        return text(500, messageOf(error));
      }),
  });
}
