/**
 * The attestor's nullifier desk (attestor/nullifier-desk.ts; docs/nullifiers.md, step 2) behind a real
 * HTTP server, with a key dealt in shares 2 of 3 and RFC 9497's group: a prover's blind handed over and
 * spent once, an evaluation only for the account the attestor read, two attestors' evaluations combining
 * into the nullifier the dapp's check accepts (the same for every blind of one account), and every bad
 * request refused with its reason while the desk keeps serving.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NULLIFIER_PROVIDER, nullifierDesk, type NullifierDesk } from "../../attestor/nullifier-desk.ts";
import { blindHex, blindNullifier, finishNullifier, verifyNullifier, type NullifierBlinding } from "../../common/nullifier.ts";
import { dealKey, shareFileOf } from "../../common/nullifier-dealer.ts";
import type { NullifierBinding } from "../../common/tls-claim.ts";
import { startAttestorProcess } from "../support/attestor-process.ts";
import { freePorts, processArgs } from "../support/stack.ts";

const SCHEMA = `0x${"5c".repeat(32)}` as Hex;
const ACCOUNT = "ACC-0042";
const FIELD = "data.account";
const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });

let clock = 0;
const desks = dealt.shares.map((share) => nullifierDesk(share, { now: () => clock, ttlMs: 60_000, maxEntries: 4 }));
const servers: Server[] = [];
const urls: string[] = [];

/** A desk behind its own HTTP server, as the attestor's port serves it; anything else is a 418 here. */
async function serve(desk: NullifierDesk): Promise<string> {
  const server = createServer((req, res) => {
    if (!desk.serve(req, res)) res.writeHead(418).end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  for (const desk of [...desks, nullifierDesk(undefined)]) urls.push(await serve(desk));
});
afterAll(() => {
  for (const server of servers) server.close();
});

const subject = (accountId = ACCOUNT) => ({ provider: NULLIFIER_PROVIDER, schemaId: SCHEMA, accountId });
const bindingOf = (b: NullifierBlinding): NullifierBinding => ({ blinded: b.blinded, blindCommitment: b.blindCommitment, accountField: FIELD });

async function postBlind(url: string, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/nullifier/blind`, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function evaluationAt(url: string, blinded: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/nullifier/evaluation/${blinded}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the attestor's nullifier desk", () => {
  it("two attestors that read the account evaluate; their evaluations make the nullifier the dapp accepts, the same for another blind", async () => {
    const nullifiers: Hex[] = [];
    for (let round = 0; round < 2; round++) {
      const blinding = blindNullifier(subject());
      const evaluations = [];
      for (const k of [0, 2]) {
        const handed = await postBlind(urls[k] as string, JSON.stringify({ blind: blindHex(blinding.blind) }));
        expect(handed).toEqual({ status: 200, body: { blindCommitment: blinding.blindCommitment, expiresInS: 60 } });
        expect((desks[k] as NullifierDesk).evaluate(bindingOf(blinding), SCHEMA, ACCOUNT).ok).toBe(true);
        const fetched = await evaluationAt(urls[k] as string, blinding.blinded);
        expect(fetched.status).toBe(200);
        expect(Object.keys(fetched.body).sort()).toEqual(["evaluation", "index", "proof"]);
        evaluations.push(fetched.body as { index: number; evaluation: Hex; proof: Hex });
      }
      const published = finishNullifier(blinding, evaluations, dealt.keys);
      expect(verifyNullifier(published, dealt.keys)).toEqual({ ok: true, nullifier: published.nullifier });
      nullifiers.push(published.nullifier);
    }
    expect(nullifiers[1]).toBe(nullifiers[0]);
  });

  it("one attestor alone has one evaluation: too few for the dapp", async () => {
    const blinding = blindNullifier(subject());
    await postBlind(urls[1] as string, JSON.stringify({ blind: blindHex(blinding.blind) }));
    const evaluated = (desks[1] as NullifierDesk).evaluate(bindingOf(blinding), SCHEMA, ACCOUNT);
    if (!evaluated.ok) throw new Error(evaluated.reason);
    expect(() => finishNullifier(blinding, [evaluated.value], dealt.keys)).toThrow("1 attestors answered with a valid share, 2 are needed");
  });

  it("refuses a B that is not the account it read, a blind never handed over, spent or expired; nothing evaluated is served", async () => {
    const desk = desks[0] as NullifierDesk;
    const url = urls[0] as string;
    // The prover blinded another account than the answer shows (or names another field's value).
    const other = blindNullifier(subject("ACC-9999"));
    await postBlind(url, JSON.stringify({ blind: blindHex(other.blind) }));
    expect(desk.evaluate(bindingOf(other), SCHEMA, ACCOUNT)).toEqual({ ok: false, reason: "nullifier: the blinded element is not this account's under this blind" });
    // ... or for another schema.
    const schema = blindNullifier({ ...subject(), schemaId: `0x${"77".repeat(32)}` });
    await postBlind(url, JSON.stringify({ blind: blindHex(schema.blind) }));
    expect(desk.evaluate(bindingOf(schema), SCHEMA, ACCOUNT).ok).toBe(false);
    // Never handed over.
    const unknown = blindNullifier(subject());
    expect(desk.evaluate(bindingOf(unknown), SCHEMA, ACCOUNT)).toMatchObject({ ok: false, reason: expect.stringContaining("no blind was handed to this attestor") });
    // Spent: the refused evaluation above spent other's blind, and a good one is spent by its claim.
    expect(desk.evaluate(bindingOf(other), SCHEMA, ACCOUNT)).toMatchObject({ ok: false, reason: expect.stringContaining("no blind was handed") });
    // Expired.
    const late = blindNullifier(subject());
    await postBlind(url, JSON.stringify({ blind: blindHex(late.blind) }));
    clock += 60_001;
    expect(desk.evaluate(bindingOf(late), SCHEMA, ACCOUNT)).toMatchObject({ ok: false, reason: expect.stringContaining("or it expired") });
    for (const b of [other, schema, unknown, late]) expect((await evaluationAt(url, b.blinded)).body).toMatchObject({ error: { code: "NO_EVALUATION" } });
  });

  it("keeps at most its bound of blinds: the oldest go first", async () => {
    const desk = desks[2] as NullifierDesk;
    const blindings = Array.from({ length: 5 }, () => blindNullifier(subject()));
    for (const b of blindings) await postBlind(urls[2] as string, JSON.stringify({ blind: blindHex(b.blind) }));
    expect(desk.evaluate(bindingOf(blindings[0] as NullifierBlinding), SCHEMA, ACCOUNT).ok).toBe(false);
    expect(desk.evaluate(bindingOf(blindings[4] as NullifierBlinding), SCHEMA, ACCOUNT).ok).toBe(true);
  });

  it.each([
    ["not JSON", "{", 400, "INVALID_BODY"],
    ["no blind", "{}", 400, "INVALID_BLIND"],
    ["a blind of the wrong length", JSON.stringify({ blind: "0x1234" }), 400, "INVALID_BLIND"],
    ["the zero blind (B = R = identity would fit any nullifier)", JSON.stringify({ blind: `0x${"00".repeat(32)}` }), 400, "INVALID_BLIND"],
    ["a blind past the group's order", JSON.stringify({ blind: `0x${"ff".repeat(32)}` }), 400, "INVALID_BLIND"],
    ["a body past 1 KiB", JSON.stringify({ blind: "0x".padEnd(2_000, "0") }), 413, "BODY_TOO_LARGE"],
  ])("refuses %s, and keeps serving", async (_, body, status, code) => {
    const answer = await postBlind(urls[0] as string, body);
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ error: { code } });
    const again = await postBlind(urls[0] as string, JSON.stringify({ blind: blindHex(blindNullifier(subject()).blind) }));
    expect(again.status).toBe(200);
  });

  it("answers the wrong method, a malformed B and other paths as such", async () => {
    const url = urls[0] as string;
    expect((await fetch(`${url}/nullifier/blind`)).status).toBe(405);
    expect((await fetch(`${url}/nullifier/evaluation/0x${"00".repeat(32)}`, { method: "POST" })).status).toBe(405);
    expect(await evaluationAt(url, "0x12")).toMatchObject({ status: 400, body: { error: { code: "INVALID_BLINDED" } } });
    expect((await fetch(`${url}/ws`)).status).toBe(418);
  });

  it("an attestor without a share says so, and evaluates nothing", async () => {
    const url = urls[3] as string;
    expect(await postBlind(url, JSON.stringify({ blind: blindHex(blindNullifier(subject()).blind) }))).toMatchObject({ status: 404, body: { error: { code: "NO_NULLIFIER_SHARE" } } });
    const blinding = blindNullifier(subject());
    expect(nullifierDesk(undefined).evaluate(bindingOf(blinding), SCHEMA, ACCOUNT)).toEqual({ ok: false, reason: "this attestor holds no nullifier share, so it signs no claim that binds a nullifier" });
  });
});

describe("the desk on a real attestor's port", () => {
  it("beside attestor-core's own routes: a blind taken with the share file, refused without one", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "attestor-desk-"));
    const shareFile = join(dataDir, "share-3.json");
    writeFileSync(shareFile, JSON.stringify(shareFileOf(dealt.shares[2] as (typeof dealt.shares)[number], dealt.keys)));
    try {
      for (const withShare of [true, false]) {
        const [port] = await freePorts(1);
        const env = { DATA_DIR: dataDir, ATTESTOR_PORT: String(port), ...(withShare ? { NULLIFIER_SHARE_FILE: shareFile } : {}) };
        const { child, ready } = await startAttestorProcess(processArgs("attestor/server.ts"), env);
        try {
          expect(ready).toContain(withShare ? "nullifier share 3" : "no nullifier share");
          const url = `http://127.0.0.1:${port}`;
          const handed = await postBlind(url, JSON.stringify({ blind: blindHex(blindNullifier(subject()).blind) }));
          expect(handed.status).toBe(withShare ? 200 : 404);
          // attestor-core still answers what is its own (its HTTP listener), and the process keeps serving.
          const theirs = await fetch(`${url}/`);
          expect(theirs.status).not.toBe(200);
          expect((await evaluationAt(url, blindNullifier(subject()).blinded)).body).toMatchObject({ error: { code: withShare ? "NO_EVALUATION" : "NO_NULLIFIER_SHARE" } });
        } finally {
          child.kill("SIGKILL");
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
