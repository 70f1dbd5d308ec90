/**
 * Nullifiers through real attestor processes (docs/nullifiers.md, steps 2 and 5): three attestors, each
 * with its share of a key dealt 2 of 3 (NULLIFIER_SHARE_FILE), and honest provers (attestor/prover.ts,
 * through the api's ProverPool) proving a demo answer that names an account. Two attestors' evaluations
 * make the nullifier the dapp's check accepts, the same for every claim of one account in both modes and
 * another for another account; one attestor's alone is not enough; a prover that blinds another account
 * than the answer names gets no signature; the account id is in nothing the claims publish.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors.ts";
import { ProverPool, type AttestorSettings } from "../../api/provider/attestor.ts";
import { blindCommitmentOf, blindHex, finishNullifier, verifyNullifier } from "../../common/nullifier.ts";
import { dealKey, shareFileOf } from "../../common/nullifier-dealer.ts";
import { randomScalar } from "../../common/oprf-ristretto255.ts";
import type { ProveSuccess } from "../../common/prover-protocol.ts";
import { contextNullifierBinding } from "../../common/tls-claim.ts";
import { closedPort } from "../support/api-fixtures.ts";
import { startAttestorProcess } from "../support/attestor-process.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { compiledProver, processArgs, processModule } from "../support/stack.ts";
import { createTestPki, type TestPki } from "../support/tls.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const definition = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const owner = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;
const schemaId = `0x${"ab".repeat(32)}` as Hex;
const ACCOUNT_FIELD = "data.account";
const bodyOf = (account: string): string => `{"data":{"balance":4321.987,"account":"${account}","limit":450}}`;
const dealt = dealKey({ threshold: 2, indices: [1, 2, 3] });

let pki: TestPki;
let provider: ProviderServer;
let dataDir: string;
const attestors: ChildProcess[] = [];
const urls: string[] = [];

async function startAttestor(port: number, shareFile: string): Promise<ChildProcess> {
  const env = { ATTESTOR_PORT: String(port), ATTESTOR_CA_FILES: pki.ca.certPath, DATA_DIR: dataDir, ATTESTOR_KEY_FILE: `key-${port}`, NULLIFIER_SHARE_FILE: shareFile };
  return (await startAttestorProcess(processArgs("attestor/server.ts"), env)).child;
}

const settings = (): AttestorSettings => ({ urls, mode: "zk", provers: 1, timeoutMs: 60_000, caFiles: pki.ca.certPath, dataDir, ...compiledProver() });
const request = (path: string) => ({ url: provider.url(path), method: "GET" as const, headers: { authorization: "Bearer sentinel-7f3a" }, field: "data.balance", definition, owner, schemaId });

/** One claim of `path`'s account through `through`, with a fresh blind; its nullifier from the evaluations. */
async function claimWithNullifier(pool: ProverPool, path: string, mode: "reveal" | "zk", through: readonly string[]): Promise<{ proven: ProveSuccess[]; nullifier: Hex }> {
  const blind = randomScalar();
  const proven = await pool.prove({ ...request(path), mode, nullifier: { blind: blindHex(blind), accountField: ACCOUNT_FIELD } }, through);
  const bindings = proven.map((p) => contextNullifierBinding(p.claim.context));
  const binding = bindings[0];
  if (binding === undefined || !binding.ok) throw new Error("the claim binds no nullifier");
  // Every attestor of the claim signed one B and R, and R is r·G.
  for (const other of bindings) expect(other).toEqual(binding);
  expect(binding.value).toMatchObject({ blindCommitment: blindCommitmentOf(blind), accountField: ACCOUNT_FIELD });
  const evaluations = proven.map((p) => p.nullifier).filter((e) => e !== undefined);
  expect(evaluations).toHaveLength(proven.length);
  const published = finishNullifier({ blind, blinded: binding.value.blinded, blindCommitment: binding.value.blindCommitment }, evaluations, dealt.keys);
  expect(verifyNullifier(published, dealt.keys)).toEqual({ ok: true, nullifier: published.nullifier });
  const everything = JSON.stringify({ proven: proven.map((p) => ({ claim: p.claim, signature: p.signature, nullifier: p.nullifier })), published });
  for (const secret of ["ACC-0042", "ACC-0077", "sentinel-7f3a", "4321.987"]) expect(everything).not.toContain(secret);
  return { proven, nullifier: published.nullifier };
}

beforeAll(async () => {
  pki = createTestPki();
  dataDir = mkdtempSync(join(tmpdir(), "nullifier-e2e-"));
  provider = await startProviderServer({ tls: pki.localhost });
  provider.route("/a", { kind: "text", body: bodyOf("ACC-0042"), contentType: "application/json" });
  provider.route("/b", { kind: "text", body: bodyOf("ACC-0077"), contentType: "application/json" });
  const ports = [await closedPort(), await closedPort(), await closedPort()];
  for (const [k, share] of dealt.shares.entries()) {
    const file = join(dataDir, `share-${share.index}.json`);
    writeFileSync(file, JSON.stringify(shareFileOf(share, dealt.keys)));
    urls.push(`ws://127.0.0.1:${ports[k] as number}/ws`);
  }
  attestors.push(...(await Promise.all(ports.map((port, k) => startAttestor(port, join(dataDir, `share-${k + 1}.json`))))));
}, 120_000);

afterAll(async () => {
  for (const child of attestors) child.kill("SIGTERM");
  await provider?.close();
  pki?.cleanup();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

describe("nullifiers from three attestors, two of which must evaluate", () => {
  it("one account has one nullifier whichever two attestors, blind and mode; another account another; one attestor's evaluation is not enough", { timeout: 240_000 }, async () => {
    const pool = new ProverPool(settings());
    try {
      const first = await claimWithNullifier(pool, "/a", "reveal", [urls[0] as string, urls[1] as string]);
      const again = await claimWithNullifier(pool, "/a", "zk", [urls[1] as string, urls[2] as string]);
      expect(again.nullifier).toBe(first.nullifier);
      const other = await claimWithNullifier(pool, "/b", "reveal", [urls[0] as string, urls[2] as string]);
      expect(other.nullifier).not.toBe(first.nullifier);
      // One attestor's claim carries one evaluation: the prover cannot finish with fewer than t.
      const blind = randomScalar();
      const [alone] = await pool.prove({ ...request("/a"), mode: "reveal", nullifier: { blind: blindHex(blind), accountField: ACCOUNT_FIELD } }, [urls[0] as string]);
      const binding = contextNullifierBinding(alone?.claim.context ?? "{}");
      if (!binding.ok || alone?.nullifier === undefined) throw new Error("no evaluation");
      expect(() => finishNullifier({ blind, ...binding.value }, [alone.nullifier as NonNullable<ProveSuccess["nullifier"]>], dealt.keys)).toThrow("1 attestors answered with a valid share, 2 are needed");
    } finally {
      await pool.close();
    }
  });

  it("a prover that blinds another account than the answer names gets no signature", { timeout: 120_000 }, async () => {
    const lyingProver = processModule("test/support/lying-prover.ts");
    const pool = new ProverPool({ ...settings(), provers: 1 }, () =>
      fork(lyingProver.module, [], {
        cwd: ROOT,
        execArgv: lyingProver.execArgv,
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATTESTOR_CA_FILES: pki.ca.certPath, DATA_DIR: dataDir, LIE: "other-account" },
      }),
    );
    try {
      const outcome = await pool.prove({ ...request("/a"), mode: "zk", nullifier: { blind: blindHex(randomScalar()), accountField: ACCOUNT_FIELD } }, [urls[0] as string]).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(ApiError);
      expect(String((outcome as ApiError).details?.reason)).toMatch(/nullifier refused: nullifier: the blinded element is not this account's under this blind/);
    } finally {
      await pool.close();
    }
  });
});
