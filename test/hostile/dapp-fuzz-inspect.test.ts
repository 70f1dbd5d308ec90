/**
 * Inspect queries fuzzed against the real dapp in-process, for volume: the real dispatcher on a real
 * migrated SQLite database seeded with the same inputs as the advance fuzz (dapp-fuzz.test.ts). Any
 * payload — well-formed queries with hostile params, free text, bytes — gets one report or a rejection
 * whose message has a specified prefix, and never changes the state. The devnode's HTTP path for inspect
 * is in stack-hostile.test.ts.
 */
import fc from "fast-check";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { QUERY_TYPES } from "../../common/wire.ts";
import { ADMIN, ALICE, T0 } from "../dapp/harness.ts";
import { fullDigest, s1, setup } from "./dapp-fuzz-support.ts";
import { directDapp, runs as runsDone, scaledTimeout, fcOptions, figure, type DirectDapp } from "./support.ts";

let d: DirectDapp;
const counts = new Map<string, number>();
const started = Date.now();

/** A fresh dapp holding exactly what the advance fuzz seeds (its rejected inputs leave no trace). */
beforeAll(async () => {
  d = directDapp({ admins: [ADMIN] });
  for (const [index, [type, params, sender]] of setup.entries()) {
    expect((await d.advance(jsonToHex({ type, params }), sender, T0 + index, index)).status).toBe("accept");
  }
});

afterAll(async () => {
  const summary = [...counts].sort().map(([code, n]) => `${code} ${n}`).join(", ");
  figure(`dapp inspect fuzz: ${((Date.now() - started) / 1000).toFixed(1)} s (${summary})`);
  d?.close();
});

describe("inspect queries (volume; the devnode's HTTP path is in stack-hostile)", () => {
  it("any payload: one report, or a rejection with a specified message; never a state change", { timeout: scaledTimeout(60_000) }, async () => {
    const before = fullDigest(d.db.$client);
    const PREFIXES = ["invalid query: ", "unknown query type: ", "missing required parameter: ", "schema not found: ", "attestation not found: ", "no key registered for 0x", "no content key of attestation 0x", "no nullifier key set registered"];
    const params = fc.dictionary(
      fc.constantFrom("schema_id", "owner", "requester", "attestation_id", "limit", "offset", "at", "include_description"),
      fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(s1, ALICE, -1, 0, 1000, 1001, 2 ** 53, "0x")),
      { maxKeys: 4 },
    );
    const payload = fc.oneof(
      fc.record({ type: fc.constantFrom(...QUERY_TYPES), params }).map((q) => jsonToHex(q)),
      fc.string({ maxLength: 100 }).map((t) => utf8ToHex(t)),
      fc.string({ maxLength: 100 }).map((t) => utf8ToHex(encodeURIComponent(t))),
      fc.uint8Array({ maxLength: 64 }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex),
      fc.string({ maxLength: 20 }).map((t) => t as Hex),
    );
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(payload, async (p) => {
        const answer = await d.inspect(p);
        if (answer.exception === null) {
          expect(answer.reports).toHaveLength(1);
        } else {
          rejected++;
          expect(answer.reports).toEqual([]);
          const message = Buffer.from(answer.exception.slice(2), "hex").toString("utf8");
          expect(PREFIXES.some((prefix) => message.startsWith(prefix))).toBe(true);
          expect(message.length).toBeLessThan(2048);
        }
      }),
      fcOptions(1500),
    );
    expect(rejected).toBeGreaterThan(0);
    expect(fullDigest(d.db.$client)).toBe(before);
    counts.set("inspect", runsDone(1500));
  });
});
