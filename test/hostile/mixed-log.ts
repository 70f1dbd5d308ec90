/**
 * A reproducible log of mixed advance inputs, accepted and rejected ones: schemas (new and repeated),
 * keys, role changes, attestations, grants (own and relayed), revokes by owners and by strangers, and
 * hostile payloads. Senders are hardhat account numbers (0: admin, 1: attestor, 2: operator, 3..9:
 * users), so the same log runs in-process and through the real chain. Ids of grants are predicted from
 * the input index, so revokes name real grants.
 */
import type { Address, Hex } from "viem";
import { jsonToHex, utf8ToHex } from "../../common/hex.ts";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";

/** Hardhat accounts #0..#9 of the well-known test mnemonic, lower-case. */
export const HARDHAT_ADDRESSES: readonly Address[] = [
  "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
  "0x90f79bf6eb2c4f970365e785982e1f101e93b906",
  "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
  "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
  "0x976ea74026e726554db657fa54763abd0c3a0aa9",
  "0x14dc79964da2c08b23698b3d3cc7ca32193d9955",
  "0x23618e81e3f5cdf7f54c3d65f7fbc0abad436306",
  "0xa0ee7a142d267c1f36714e4a8f75612f20a79720",
];

export interface LogStep {
  /** Hardhat account number of the sender. */
  sender: number;
  payload: Hex;
}

/** mulberry32: a tiny seeded PRNG, so a log is a pure function of (count, seed). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DOMAINS = ["bank.example", "score.example", "age.example", "income.example", "kyc.example"];

function schemaContent(domain: string, variant: number) {
  return {
    provider: "http",
    flowType: variant % 2 === 0 ? "web" : "api",
    domain,
    bucketDefinitions: { value: { boundaries: [0, 100, 1000], labels: ["low", "mid", "high"] } },
    dataKeys: ["value"],
    freshnessHalfLife: 3600 + variant,
  };
}

/**
 * `count` steps starting at input index `firstIndex`. The first three make #1 an attestor and #2 an
 * operator and register one schema.
 */
export function mixedLog(count: number, seed: number, firstIndex = 0): LogStep[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const int = (n: number): number => Math.floor(random() * n);
  const steps: LogStep[] = [
    { sender: 0, payload: jsonToHex({ type: "set_role", params: { address: HARDHAT_ADDRESSES[1], role: "attestor", enabled: true } }) },
    { sender: 0, payload: jsonToHex({ type: "set_role", params: { address: HARDHAT_ADDRESSES[2], role: "operator", enabled: true } }) },
    { sender: 0, payload: jsonToHex({ type: "register_schema", params: schemaContent(DOMAINS[0] as string, 0) }) },
  ];
  const schemas: Hex[] = [schemaIdOf(schemaContent(DOMAINS[0] as string, 0))];
  const grants: { id: Hex; owner: number }[] = [];
  while (steps.length < count) {
    const index = firstIndex + steps.length;
    const roll = random();
    const user = 3 + int(7);
    let step: LogStep;
    if (roll < 0.1) {
      // A schema, often one already registered (accepted, no change); sometimes from a non-admin.
      const content = schemaContent(pick(DOMAINS), int(3));
      const sender = random() < 0.85 ? 0 : user;
      if (sender === 0 && !schemas.includes(schemaIdOf(content))) schemas.push(schemaIdOf(content));
      step = { sender, payload: jsonToHex({ type: "register_schema", params: content }) };
    } else if (roll < 0.4) {
      const schema = random() < 0.9 ? pick(schemas) : (`0x${"cd".repeat(32)}` as Hex);
      const label = random() < 0.9 ? pick(["low", "mid", "high"]) : "bogus";
      const data = `0x${Array.from({ length: 8 + int(24) }, () => int(256).toString(16).padStart(2, "0")).join("")}`;
      step = {
        sender: random() < 0.95 ? 1 : user,
        payload: jsonToHex({
          type: "create_attestation",
          params: { schema_id: schema, owner: HARDHAT_ADDRESSES[user], provider: "http", encrypted_data: data, bucket_values: { value: label } },
        }),
      };
    } else if (roll < 0.6) {
      const requester = HARDHAT_ADDRESSES[3 + int(7)] as Address;
      const relayed = random() < 0.3;
      const expires = random() < 0.9 ? 4_000_000_000 + int(1000) : 1;
      const params: Record<string, unknown> = { requester, schema_id: pick(schemas), expires_at: expires };
      if (relayed) params.owner = HARDHAT_ADDRESSES[user];
      // A relay from a non-operator is refused; the operator's relays go through.
      const sender = relayed ? (random() < 0.8 ? 2 : 3 + int(7)) : user;
      grants.push({ id: inputIdOf("grant_access", index), owner: user });
      step = { sender, payload: jsonToHex({ type: "grant_access", params }) };
    } else if (roll < 0.72 && grants.length > 0) {
      const grant = pick(grants);
      const sender = random() < 0.7 ? grant.owner : 3 + int(7);
      step = { sender, payload: jsonToHex({ type: "revoke_grant", params: { grant_id: grant.id } }) };
    } else if (roll < 0.77) {
      const key = Buffer.from(Array.from({ length: 32 }, () => int(4))).toString("base64");
      step = { sender: 0, payload: jsonToHex({ type: "register_encryption_key", params: { publicKey: key, algorithm: "nacl-box" } }) };
    } else if (roll < 0.82) {
      step = {
        sender: random() < 0.8 ? 0 : user,
        payload: jsonToHex({ type: "set_role", params: { address: HARDHAT_ADDRESSES[3 + int(7)], role: pick(["attestor", "operator"]), enabled: random() < 0.5 } }),
      };
    } else {
      const hostile: Hex[] = [
        "0x7b" as Hex,
        utf8ToHex("not json"),
        jsonToHex({ type: "drop_table", params: {} }),
        jsonToHex({ type: "grant_access", params: { requester: 42, schema_id: [], expires_at: "soon" } }),
        jsonToHex([1, 2, 3]),
        utf8ToHex(`{"type":"register_schema","params":${"[".repeat(500)}${"]".repeat(500)}}`),
        jsonToHex({ type: "register_schema", params: { ...schemaContent("x".repeat(5000), 0) } }),
        "0xc0af" as Hex,
      ];
      step = { sender: int(10), payload: pick(hostile) };
    }
    steps.push(step);
  }
  return steps.slice(0, count);
}

/** The schema every log registers at its third input: writes through the api can use it. */
export const LOG_SCHEMA_ID: Hex = schemaIdOf(schemaContent(DOMAINS[0] as string, 0));
