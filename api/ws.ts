/**
 * The WebSocket channel (DECISIONS.md section 11): `{event, data}` messages relayed from the dapp's
 * notices. A client may narrow what it gets with `{"subscribe": [events], "owner": "0x..."}`. Dead peers
 * are found by ping/pong; a peer that does not read is dropped rather than buffered without bound.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { z } from "zod";
import { addressSchema } from "../common/address.ts";
import type { AttestationCreatedEvent, NoticeEvent } from "../common/wire.ts";

export const WS_EVENTS = ["attestation:created", "attestation:revoked", "grant:created", "grant:revoked", "schema:registered"] as const;
export type WsEventName = (typeof WS_EVENTS)[number];
export type WsEvent = AttestationCreatedEvent | Extract<NoticeEvent, { event: Exclude<WsEventName, "attestation:created"> }>;

export interface WsHubOptions {
  heartbeatMs?: number;
  /** Bytes queued for one client past which it is dropped. */
  maxBufferedBytes?: number;
  /** Largest accepted client message: clients only ever send small subscribe messages. */
  maxClientMessageBytes?: number;
}

const subscribeSchema = z
  .object({
    subscribe: z.array(z.enum(WS_EVENTS)).optional(),
    owner: addressSchema.nullable().optional(),
  })
  .strict();

interface ClientState {
  alive: boolean;
  events: Set<WsEventName> | undefined;
  owner: string | undefined;
}

export class WsHub {
  private readonly server: WebSocketServer;
  private readonly clients = new Map<WebSocket, ClientState>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly maxBufferedBytes: number;

  constructor(options: WsHubOptions = {}) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
    this.server = new WebSocketServer({ noServer: true, maxPayload: options.maxClientMessageBytes ?? 4096 });
    this.server.on("connection", (socket) => this.onConnection(socket));
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs ?? 30_000);
    this.heartbeat.unref();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Serves upgrades on `path` of an http server; other upgrade paths are refused. */
  attach(httpServer: Server, path = "/ws"): void {
    httpServer.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const pathname = new URL(request.url ?? "/", "http://localhost").pathname;
      if (pathname !== path) {
        socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      this.server.handleUpgrade(request, socket, head, (ws) => this.server.emit("connection", ws, request));
    });
  }

  broadcast(event: WsEvent): void {
    const message = JSON.stringify(event);
    for (const [socket, state] of this.clients) {
      if (!wants(state, event)) continue;
      if (socket.readyState !== WebSocket.OPEN) continue;
      if (socket.bufferedAmount > this.maxBufferedBytes) {
        // 1008: policy violation; the client was not reading its events.
        socket.close(1008, "too slow: events were buffered past the limit");
        socket.terminate();
        this.clients.delete(socket);
        continue;
      }
      socket.send(message);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    for (const socket of this.clients.keys()) socket.close(1001, "server shutting down");
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.clients.keys()) socket.terminate();
    this.clients.clear();
  }

  private onConnection(socket: WebSocket): void {
    const state: ClientState = { alive: true, events: undefined, owner: undefined };
    this.clients.set(socket, state);
    socket.on("pong", () => {
      state.alive = true;
    });
    socket.on("message", (data: RawData, isBinary: boolean) => this.onMessage(socket, state, data, isBinary));
    socket.on("close", () => this.clients.delete(socket));
    // A socket error (e.g. an oversized frame) ends in close; nothing else to do, but it must be handled.
    socket.on("error", () => this.clients.delete(socket));
  }

  private onMessage(socket: WebSocket, state: ClientState, data: RawData, isBinary: boolean): void {
    const reply = (value: unknown) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(value));
    };
    let parsed: unknown;
    try {
      if (isBinary) throw new Error("binary messages are not accepted");
      parsed = JSON.parse(rawText(data));
    } catch (error) {
      reply(errorMessage(`not a JSON text message: ${error instanceof Error ? error.message : String(error)}`));
      return;
    }
    const result = subscribeSchema.safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      reply(errorMessage(`${issue?.path.join(".") || "message"}: ${issue?.message ?? "invalid"}`));
      return;
    }
    if (result.data.subscribe !== undefined) state.events = new Set(result.data.subscribe);
    if (result.data.owner !== undefined) state.owner = result.data.owner ?? undefined;
    reply({
      event: "subscribed",
      data: { events: state.events === undefined ? [...WS_EVENTS] : [...state.events], owner: state.owner ?? null },
    });
  }

  private beat(): void {
    for (const [socket, state] of this.clients) {
      if (!state.alive) {
        socket.terminate();
        this.clients.delete(socket);
        continue;
      }
      state.alive = false;
      socket.ping();
    }
  }
}

function wants(state: ClientState, event: WsEvent): boolean {
  if (state.events !== undefined && !state.events.has(event.event)) return false;
  // Events without an owner (schema registrations) are not narrowed by the owner filter.
  if (state.owner !== undefined && "owner" in event.data) return event.data.owner.toLowerCase() === state.owner;
  return true;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

function errorMessage(message: string) {
  return { event: "error", data: { code: "INVALID_REQUEST", message } };
}
