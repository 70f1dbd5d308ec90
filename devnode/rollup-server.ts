/**
 * The rollup HTTP server (Cartesi rollup HTTP API, v1 host mode) the dapp talks to: `/finish`, `/notice`,
 * `/voucher`, `/report`, `/exception`. Handlers only parse and validate; the model decides.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Address, Hex } from "viem";
import { messageOf } from "../common/errors.ts";
import { isHex } from "../common/hex.ts";
import { BodyTooLargeError, readBody, sendJson, sendText } from "./http.ts";
import { ModelError, type DappSession, type FinishStatus, type RollupModel } from "./model.ts";

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** `/report` is on every inspect's path: answer it with as little as HTTP allows. */
function sendEmpty(res: ServerResponse): void {
  res.writeHead(200, { "content-length": "0" });
  res.end();
}

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

export function createRollupServer(model: RollupModel): Server {
  let nextSessionId = 0;
  const sessions = new WeakMap<Socket, DappSession>();

  const route = async (req: IncomingMessage, res: ServerResponse, session: DappSession): Promise<void> => {
    if (req.method !== "POST") return sendText(res, 405, "method not allowed");
    const body = parseObject(await readBody(req));
    switch (req.url) {
      case "/finish": {
        const request = await model.finish(session, finishStatus(body));
        if (res.destroyed) return;
        if (request === null) return sendText(res, 202, "no rollup request available");
        return sendJson(res, 200, request);
      }
      case "/notice":
        return sendJson(res, 200, { index: model.addNotice(hexField(body, "payload")) });
      case "/voucher": {
        const destination = body["destination"];
        if (typeof destination !== "string" || !ADDRESS_RE.test(destination)) {
          throw new BadRequest("destination must be a 0x-prefixed 20-byte hex address");
        }
        return sendJson(res, 200, { index: model.addVoucher(destination as Address, hexField(body, "payload")) });
      }
      case "/report":
        model.addReport(hexField(body, "payload"));
        // Answered after the requests already read: a dapp that writes /finish right behind its report
        // (pipelining, as dapp/app.ts does) has the inspect's client answered first. Answers still leave
        // in request order (node:http keeps them so).
        setImmediate(() => sendEmpty(res));
        return;
      case "/exception":
        model.exception(hexField(body, "payload"));
        return sendEmpty(res);
      default:
        return sendText(res, 404, "not found");
    }
  };

  const server = createServer((req, res) => {
    const session = sessions.get(req.socket);
    if (session === undefined) return sendText(res, 500, "unknown connection");
    route(req, res, session).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof BadRequest || error instanceof ModelError) return sendText(res, 400, error.message);
      if (error instanceof BodyTooLargeError) return sendText(res, 413, error.message);
      console.error("[devnode] rollup HTTP server:", error);
      sendText(res, 500, messageOf(error));
    });
  });

  server.on("connection", (socket: Socket) => {
    const session: DappSession = { id: nextSessionId++ };
    sessions.set(socket, session);
    model.connect(session);
    socket.once("close", () => model.disconnect(session));
  });
  // The dapp's death is seen as its connections closing: keep them open while it works on a long advance
  // (Node's fetch honours the Keep-Alive hint, so it does not drop them after its default 4 s either).
  server.keepAliveTimeout = 600_000;
  return server;
}
