/**
 * The notice follower's catching up (api/rollup/follower.ts), against a node whose answers the test
 * releases one at a time: a `sync` that arrives while a read is running gets a read that starts after it
 * (the running one may have asked before the caller's write was there), shared by every caller
 * meanwhile; `syncTo` asks nothing when the input it needs was read already. (The follower against real
 * nodes: the api's e2e suites.)
 */
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import { RegistryCatalog } from "../../api/rollup/catalog.ts";
import { NoticeFollower } from "../../api/rollup/follower.ts";
import type { NodeReader, NoticePage, NoticeRecord } from "../../api/rollup/node-reader.ts";

const SCHEMA = `0x${"ab".repeat(32)}` as Hex;

function notice(inputIndex: number): NoticeRecord {
  return {
    cursor: String(inputIndex),
    index: 0,
    inputIndex,
    payload: jsonToHex({ event: "attestation:created", data: { claimId: `0x${String(inputIndex).padStart(64, "0")}`, schema_id: SCHEMA, bucket_values: { "data.balance": "mid" } } }),
  };
}

/** A node whose notices the test adds, and whose every `noticesAfter` answer waits until the test releases it. */
class HeldNode implements NodeReader {
  readonly url = "held://node";
  readonly notices: NoticeRecord[] = [];
  readonly asked: { at: number; release: () => void }[] = [];
  private clock = 0;

  tick(): number {
    return ++this.clock;
  }

  noticesAfter(cursor: string | null): Promise<NoticePage> {
    // What the node holds when asked is what it answers, however late the answer comes.
    const after = this.notices.filter((n) => cursor === null || n.inputIndex > Number(cursor));
    return new Promise((resolve) => {
      this.asked.push({ at: this.tick(), release: () => resolve({ notices: after, endCursor: after.at(-1)?.cursor ?? cursor, hasNextPage: false }) });
    });
  }
  inputVerdict(): never {
    throw new Error("not asked");
  }
  inputPayload(): never {
    throw new Error("not asked");
  }
  inputBlock(): never {
    throw new Error("not asked");
  }
  recentInputTimes(): never {
    throw new Error("not asked");
  }
}

/** Lets pending promise callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("the notice follower", () => {
  it("a sync during a running read waits for one read after it, shared by every caller meanwhile", async () => {
    const node = new HeldNode();
    const catalog = new RegistryCatalog();
    const follower = new NoticeFollower(node, catalog, { intervalMs: 60_000, onEvent: () => undefined });
    const first = follower.sync();
    await settle();
    expect(node.asked).toHaveLength(1);
    // The write lands after the running read asked: only a later read can see it.
    node.notices.push(notice(0));
    const calledAt = node.tick();
    let done = 0;
    const waiting = [follower.sync(), follower.sync(), follower.sync()].map((p) => p.then(() => void done++));
    node.asked[0]?.release();
    await first;
    await settle();
    expect(done).toBe(0);
    expect(catalog.bucketCounts(SCHEMA)).toEqual({});
    expect(node.asked).toHaveLength(2);
    expect(node.asked[1]?.at).toBeGreaterThan(calledAt);
    node.asked[1]?.release();
    await Promise.all(waiting);
    expect(done).toBe(3);
    expect(catalog.bucketCounts(SCHEMA)).toEqual({ "data.balance": { mid: 1 } });
    expect(node.asked).toHaveLength(2);
  });

  it("syncTo asks the node only for an input it has not read a notice of (or after)", async () => {
    const node = new HeldNode();
    const follower = new NoticeFollower(node, new RegistryCatalog(), { intervalMs: 60_000, onEvent: () => undefined });
    node.notices.push(notice(0), notice(3));
    await follower.syncTo(-1);
    expect(node.asked).toHaveLength(0);
    const read = follower.syncTo(2);
    await settle();
    node.asked[0]?.release();
    await read;
    expect(node.asked).toHaveLength(1);
    await follower.syncTo(3);
    await follower.syncTo(1);
    expect(node.asked).toHaveLength(1);
    const again = follower.syncTo(4);
    await settle();
    expect(node.asked).toHaveLength(2);
    node.asked[1]?.release();
    await again;
  });
});
