/**
 * The group commit queue on its own: which writes go together, in what order, within which limits, and
 * what each caller is told. Its sender here is a plain function that records the inputs it is given and
 * answers like the InputBox would (the chain itself is exercised by test/api/group-commit.e2e.test.ts).
 */
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../api/rollup/group-commit.ts";
import type { SubmittedInput } from "../../api/rollup/submitter.ts";
import { compactItemToJson, compactSchemaOf, parseCompactBatch } from "../../common/compact-batch.ts";
import { hexToBytes, hexToUtf8 } from "../../common/hex.ts";
import type { InputParams } from "../../common/wire.ts";

interface Sent {
  json: { type: string; params: { items?: unknown[] } };
  release: (outcome?: Error) => void;
}

/** A sender whose transactions stay "in flight" until the test releases them. */
function pipeline() {
  const sent: Sent[] = [];
  let nextIndex = 0;
  const send = (payload: `0x${string}`) =>
    new Promise<SubmittedInput>((resolve, reject) => {
      const index = nextIndex++;
      sent.push({
        json: JSON.parse(hexToUtf8(payload)) as Sent["json"],
        release: (outcome) => (outcome === undefined ? resolve({ inputIndex: index, txHash: `0x${index.toString(16).padStart(64, "0")}` }) : reject(outcome)),
      });
    });
  return { sent, send };
}

const revoke = (n: number): InputParams["revoke_grant"] => ({ grant_id: `0x${n.toString(16).padStart(64, "0")}` });
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("GroupCommit", () => {
  it("sends a write that finds the wallet idle alone, at once, as a plain input", async () => {
    const { sent, send } = pipeline();
    const commits = new GroupCommit(send);
    const answer = commits.write("revoke_grant", revoke(1));
    await tick();
    expect(sent.map((s) => s.json)).toEqual([{ type: "revoke_grant", params: revoke(1) }]);
    sent[0]?.release();
    expect(await answer).toEqual({ inputIndex: 0, txHash: `0x${"0".repeat(64)}`, item: null });
  });

  it("puts the writes that wait for the previous transaction into one batch, in arrival order, each with its position", async () => {
    const { sent, send } = pipeline();
    const commits = new GroupCommit(send);
    const first = commits.write("revoke_grant", revoke(1));
    const waiting = [2, 3, 4].map((n) => commits.write("revoke_grant", revoke(n)));
    await tick();
    expect(sent).toHaveLength(1);
    sent[0]?.release();
    await first;
    await tick();
    expect(sent[1]?.json).toEqual({ type: "batch", params: { items: [2, 3, 4].map((n) => ({ type: "revoke_grant", params: revoke(n) })) } });
    sent[1]?.release();
    expect((await Promise.all(waiting)).map((w) => [w.inputIndex, w.item])).toEqual([[1, 0], [1, 1], [1, 2]]);
    expect(commits.stats).toEqual({ transactions: 2, writes: 4, largestGroup: 3 });
  });

  it("with two transactions in flight, the writes that gather while the first is mined go at once, without its receipt", async () => {
    const { sent, send } = pipeline();
    const commits = new GroupCommit(send, { maxItems: 256, maxBytes: 120 * 1024, inFlight: 2 });
    const first = commits.write("revoke_grant", revoke(1));
    await tick();
    const second = commits.write("revoke_grant", revoke(2));
    const third = [3, 4].map((n) => commits.write("revoke_grant", revoke(n)));
    await tick();
    // Two sent, neither released: the third and fourth wait for a free slot, together.
    expect(sent.map((s) => s.json.type)).toEqual(["revoke_grant", "revoke_grant"]);
    sent[1]?.release();
    await second;
    await tick();
    expect(sent[2]?.json).toEqual({ type: "batch", params: { items: [3, 4].map((n) => ({ type: "revoke_grant", params: revoke(n) })) } });
    sent[0]?.release();
    sent[2]?.release();
    expect((await first).inputIndex).toBe(0);
    expect((await Promise.all(third)).map((w) => [w.inputIndex, w.item])).toEqual([[2, 0], [2, 1]]);
  });

  it("splits the waiting writes by the item limit and by the byte limit", async () => {
    const byItems = pipeline();
    const fewItems = new GroupCommit(byItems.send, { maxItems: 2, maxBytes: 120 * 1024 });
    const all = [0, 1, 2, 3, 4].map((n) => fewItems.write("revoke_grant", revoke(n)));
    for (let i = 0; i < 3; i++) {
      await tick();
      byItems.sent[i]?.release();
      await tick();
    }
    await Promise.all(all);
    expect(byItems.sent.map((s) => s.json.params.items?.length ?? 1)).toEqual([1, 2, 2]);

    const byBytes = pipeline();
    const itemBytes = JSON.stringify({ type: "revoke_grant", params: revoke(0) }).length;
    // Room for the batch's own text and two items (and the comma between them), not three.
    const fewBytes = new GroupCommit(byBytes.send, { maxItems: 256, maxBytes: 38 + 2 * itemBytes + 1 });
    const more = [0, 1, 2, 3, 4].map((n) => fewBytes.write("revoke_grant", revoke(n)));
    for (let i = 0; i < 3; i++) {
      await tick();
      byBytes.sent[i]?.release();
      await tick();
    }
    await Promise.all(more);
    expect(byBytes.sent.map((s) => s.json.params.items?.length ?? 1)).toEqual([1, 2, 2]);
  });

  it("fails every write of a transaction that failed, with that transaction's error, and goes on with the next", async () => {
    const { sent, send } = pipeline();
    const commits = new GroupCommit(send);
    const first = commits.write("revoke_grant", revoke(1));
    const doomed = [2, 3].map((n) => commits.write("revoke_grant", revoke(n)));
    await tick();
    sent[0]?.release();
    await first;
    await tick();
    const later = commits.write("revoke_grant", revoke(4));
    sent[1]?.release(new Error("reverted"));
    for (const write of doomed) await expect(write).rejects.toThrow("reverted");
    await tick();
    sent[2]?.release();
    expect((await later).item).toBeNull();
  });
});

describe("GroupCommit, attestations with their schema", () => {
  const schema = compactSchemaOf(3, `0x${"5e".repeat(32)}`, "http", "bank.example", { balance: { boundaries: [0, 100], labels: ["low"] } });
  const claim = (n: number): InputParams["create_attestation"] => ({
    schema_id: schema.schemaId,
    owner: `0x${n.toString(16).padStart(40, "0")}`,
    provider: "http",
    encrypted_data: "0xabcd",
    bucket_values: { balance: "low" },
  });

  it("go alone as plain JSON, and together as a compact batch whose item i is write i (other kinds as JSON items)", async () => {
    const payloads: `0x${string}`[] = [];
    const releases: (() => void)[] = [];
    const send = (payload: `0x${string}`) =>
      new Promise<SubmittedInput>((resolve) => {
        const index = payloads.push(payload) - 1;
        releases.push(() => resolve({ inputIndex: index, txHash: `0x${index.toString(16).padStart(64, "0")}` }));
      });
    const commits = new GroupCommit(send);
    const first = commits.write("create_attestation", claim(1), schema);
    const waiting = [commits.write("create_attestation", claim(2), schema), commits.write("revoke_grant", revoke(9)), commits.write("create_attestation", claim(3), schema)];
    await tick();
    expect(JSON.parse(hexToUtf8(payloads[0] as `0x${string}`))).toEqual({ type: "create_attestation", params: claim(1) });
    releases[0]?.();
    await first;
    await tick();
    const container = parseCompactBatch(hexToBytes(payloads[1] as `0x${string}`));
    expect(container.items.map((i) => i.kind)).toEqual([0, 2, 0]);
    expect(container.items.map((_, i) => compactItemToJson(container, i, () => schema))).toEqual([
      { type: "create_attestation", params: claim(2) },
      { type: "revoke_grant", params: revoke(9) },
      { type: "create_attestation", params: claim(3) },
    ]);
    releases[1]?.();
    expect((await Promise.all(waiting)).map((w) => [w.inputIndex, w.item])).toEqual([[1, 0], [1, 1], [1, 2]]);
  });
});
