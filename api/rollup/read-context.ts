/**
 * Read-your-writes, per request. A request's reads must see every input the client has been told about:
 * the index it names in `X-Min-Input-Index`, every write this api answered before the read began, and
 * every write any replica answered (through Redis) before the request's first read (api/rollup/
 * write-mark.ts). The request's needs travel with it in an AsyncLocalStorage, so the read pool learns
 * them without every route passing them on; what happened to them comes back as response headers:
 * `X-Input-Index` after a write, `X-Read-Fallback` when readers were too far behind and the node
 * answered instead.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import type { WriteMark } from "./write-mark.ts";

export const MIN_INPUT_INDEX_HEADER = "X-Min-Input-Index";
export const INPUT_INDEX_HEADER = "X-Input-Index";
export const READ_FALLBACK_HEADER = "X-Read-Fallback";

export interface ReadNeeds {
  /** The input the client has seen (its header), or undefined. */
  minInputIndex: number | undefined;
  /** The highest input index a write of this request was recorded at. */
  wrote: number | undefined;
  /** Why a read of this request went to the node, when one did. */
  fallback: string | undefined;
  /** The replicas' write mark as the request's first read asked it: asked once (a Redis GET), not per read. */
  writeMark: Promise<number> | undefined;
}

const storage = new AsyncLocalStorage<ReadNeeds>();

/** The needs of the request being served, or undefined outside one (the notice follower, start-up reads). */
export function currentReadNeeds(): ReadNeeds | undefined {
  return storage.getStore();
}

/**
 * The input the request's reads must see: the client's (X-Min-Input-Index) and every write answered before
 * them. The replicas' shared mark is asked once per request (a Redis GET); this replica's own writes, the
 * request's among them, are known without asking.
 */
export async function inputNeeded(mark: WriteMark): Promise<number> {
  const needs = currentReadNeeds();
  const shared = needs === undefined ? mark.highest() : (needs.writeMark ??= mark.highest());
  return Math.max(needs?.minInputIndex ?? -1, mark.own, await shared);
}

/** A write of this request was recorded at `inputIndex`: its answer says where (its later reads see it through the write mark). */
export function noteWrite(inputIndex: number): void {
  const needs = storage.getStore();
  if (needs !== undefined) needs.wrote = Math.max(needs.wrote ?? -1, inputIndex);
}

/** A read of this request was answered by the node because no reader had processed what it needed. */
export function noteFallback(reason: string): void {
  const needs = storage.getStore();
  if (needs !== undefined) needs.fallback ??= reason;
}

const INDEX = /^(0|[1-9][0-9]{0,15})$/;

/** Reads X-Min-Input-Index (a bad one is refused before anything runs) and sets the headers on the way out. */
export function readConsistency(): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header(MIN_INPUT_INDEX_HEADER);
    let minInputIndex: number | undefined;
    if (header !== undefined) {
      const value = header.trim();
      if (!INDEX.test(value) || !Number.isSafeInteger(Number(value))) {
        throw new ApiError("INVALID_PARAMETER", `Invalid ${MIN_INPUT_INDEX_HEADER}: expected an input index (a non-negative integer)`, {
          parameter: MIN_INPUT_INDEX_HEADER,
          value: value.slice(0, 40),
          expected: "a non-negative integer",
        });
      }
      minInputIndex = Number(value);
    }
    const needs: ReadNeeds = { minInputIndex, wrote: undefined, fallback: undefined, writeMark: undefined };
    await storage.run(needs, () => next());
    if (needs.wrote !== undefined) c.res.headers.set(INPUT_INDEX_HEADER, String(needs.wrote));
    if (needs.fallback !== undefined) c.res.headers.set(READ_FALLBACK_HEADER, needs.fallback);
  };
}
