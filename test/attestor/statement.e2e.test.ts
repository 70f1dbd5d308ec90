/**
 * What the attestor signs (attestor/server.ts: attestor-core with our check of the range statement), end
 * to end with real processes: the attestor, honest provers (attestor/prover.ts) in both modes, and
 * dishonest ones (test/support/lying-prover.ts) that hide part of the number, the bytes between a key and
 * another value, or the object around another key, or that ask for a pattern other than the canonical
 * one (cut, widened, made up) or name no statement. Honest claims prove the bucket, name it in their
 * context and hold no trace of the value; every lie is refused by the attestor, so no signature exists to
 * send anywhere, where attestor-core alone signs each of them.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors.ts";
import { ProverPool, type AttestorSettings } from "../../api/provider/attestor.ts";
import { checkProofs } from "../../common/proof-check.ts";
import { binRange } from "../../common/range-pattern.ts";
import { claimParameters, fieldPattern } from "../../common/tls-claim.ts";
import { closedPort } from "../support/api-fixtures.ts";
import { startAttestorProcess } from "../support/attestor-process.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { compiledProver, processArgs, processModule } from "../support/stack.ts";
import { createTestPki, type TestPki } from "../support/tls.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const definition = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const owner = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as Address;
const schemaId = `0x${"ab".repeat(32)}` as Hex;
const BODY = '{"data":{"balance":4321.987,"limit":450,"currency":"EUR"},"other":{"balance":450}}';

let pki: TestPki;
let provider: ProviderServer;
let attestor: ChildProcess;
let stock: ChildProcess;
let attestorUrl: string;
let stockUrl: string;
let dataDir: string;

async function startAttestor(port: number, entry: "attestor/server.ts" | "test/support/stock-attestor.ts"): Promise<ChildProcess> {
  const env = { ATTESTOR_PORT: String(port), ATTESTOR_CA_FILES: pki.ca.certPath, DATA_DIR: dataDir };
  return (await startAttestorProcess(processArgs(entry), env)).child;
}

function settings(): AttestorSettings {
  return { urls: [attestorUrl], mode: "zk", provers: 1, timeoutMs: 60_000, caFiles: pki.ca.certPath, dataDir, ...compiledProver() };
}

const lyingProver = processModule("test/support/lying-prover.ts");

function lyingPool(lie: string): ProverPool {
  return new ProverPool({ ...settings(), provers: 2 }, () =>
    fork(lyingProver.module, [], {
      cwd: ROOT,
      execArgv: lyingProver.execArgv,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATTESTOR_CA_FILES: pki.ca.certPath, DATA_DIR: dataDir, LIE: lie },
    }),
  );
}

/** Our attestor refuses what `pool`'s prover asks: no signature, and a reason matching `reason`. */
async function expectRefused(pool: ProverPool, reason: RegExp): Promise<void> {
  const outcome = await pool.prove({ ...request(), mode: "zk" }, [attestorUrl]).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(ApiError);
  const error = outcome as ApiError;
  expect(error.code).toBe("ZKTLS_PROOF_FAILED");
  expect(String(error.details?.reason)).toMatch(reason);
}

const request = () => ({ url: provider.url("/balance"), method: "GET" as const, headers: { authorization: "Bearer sentinel-7f3a" }, field: "data.balance", definition, owner, schemaId });

beforeAll(async () => {
  pki = createTestPki();
  dataDir = mkdtempSync(join(tmpdir(), "statement-"));
  provider = await startProviderServer({ tls: pki.localhost });
  provider.route("/balance", { kind: "text", body: BODY, contentType: "application/json" });
  const [port, stockPort] = [await closedPort(), await closedPort()];
  attestorUrl = `ws://127.0.0.1:${port}/ws`;
  stockUrl = `ws://127.0.0.1:${stockPort}/ws`;
  [attestor, stock] = await Promise.all([startAttestor(port, "attestor/server.ts"), startAttestor(stockPort, "test/support/stock-attestor.ts")]);
}, 120_000);

afterAll(async () => {
  attestor?.kill("SIGTERM");
  stock?.kill("SIGTERM");
  await provider?.close();
  pki?.cleanup();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

describe("an honest prover", () => {
  it.each(["reveal", "zk"] as const)("in %s mode gets the bucket signed, and the claim holds no trace of the value", { timeout: 120_000 }, async (mode) => {
    const pool = new ProverPool(settings());
    try {
      const [proven] = await pool.prove({ ...request(), mode }, [attestorUrl]);
      if (proven === undefined) throw new Error("no claim");
      expect(proven.label).toBe("high");
      const range = binRange(definition, "high");
      if (range === undefined) throw new Error("no bin");
      expect(JSON.parse(proven.claim.parameters)).toEqual(claimParameters({ url: request().url, method: "GET", field: "data.balance", range }));
      expect((JSON.parse(proven.claim.context) as { statement?: unknown }).statement).toEqual({ field: "data.balance", range });
      const signed = JSON.stringify({ claim: proven.claim, signature: proven.signature });
      for (const trace of ["4321.987", ".987", "sentinel-7f3a"]) expect(signed).not.toContain(trace);
      const checked = checkProofs(
        [{ claim: proven.claim, signature: proven.signature }],
        { schemaId, domain: "localhost", definitions: { "data.balance": definition }, quorum: 1, owner, bucketValues: { "data.balance": "high" }, now: proven.claim.timestampS },
        (address) => address === proven.attestor.toLowerCase(),
      );
      expect(checked.attestors).toEqual([proven.attestor.toLowerCase()]);
    } finally {
      await pool.close();
    }
  });
});

describe("a prover that lies gets no signature from our attestor, where attestor-core alone signs the lie", () => {
  it.each([
    ["truncate", "hides the number's tail (4321.987 shown as 432)", /range statement refused: the body hides something other than a whole value/],
    ["middle", "hides digits in the middle of the number", /range statement refused: the body hides something other than a whole value/],
    ["key", "hides the bytes between the key and another value", /range statement refused: the body hides something other than a whole value/],
    ["nested", "shows another object's key as if it were the field", /range statement refused: /],
  ])("%s: a prover that %s", { timeout: 120_000 }, async (lie, _what, reason) => {
    const pool = lyingPool(lie);
    try {
      // attestor-core alone signs the lie: a wrong bucket for this answer's 4321.987 ("high").
      const [signed] = await pool.prove({ ...request(), mode: "zk" }, [stockUrl]);
      expect(signed?.label).not.toBe("high");
      expect(JSON.parse(signed?.claim.parameters ?? "{}")).toEqual(
        claimParameters({ url: request().url, method: "GET", field: "data.balance", range: binRange(definition, signed?.label ?? "") ?? { lo: "0", hi: null, hiInclusive: false } }),
      );
      await expectRefused(pool, reason);
    } finally {
      await pool.close();
    }
  });
});

describe("a prover that asks for anything but the canonical statement gets no signature from our attestor", () => {
  const mid = binRange(definition, "mid");
  it.each([
    ["cut", "the bucket's pattern cut before its closing delimiter (432, a prefix of 4321.987, satisfies it)", /range statement refused: the response match is not the canonical range statement for data\.balance in \[100, 1000\)/],
    ["widened", "the pattern of [100, 10000) under the statement [100, 1000)", /range statement refused: the response match is not the canonical range statement for data\.balance in \[100, 1000\)/],
    ["arbitrary", "a pattern of its own", /range statement refused: the response match is not the canonical range statement/],
    ["unnamed", "the true bucket's pattern with no statement in the context", /range statement refused: this attestor signs range statements only: name the statement to sign in the context/],
  ])("%s: a prover that asks for %s", { timeout: 120_000 }, async (lie, _what, reason) => {
    const pool = lyingPool(lie);
    try {
      // attestor-core alone signs it; the signed pattern is not the canonical one of the label it claims,
      // or (unnamed) the claim does not say in words what it states.
      const [signed] = await pool.prove({ ...request(), mode: "zk" }, [stockUrl]);
      if (signed === undefined) throw new Error("attestor-core alone signed nothing");
      const pattern = (JSON.parse(signed.claim.parameters) as { responseMatches: { value: string }[] }).responseMatches[0]?.value;
      const statement = (JSON.parse(signed.claim.context) as { statement?: unknown }).statement;
      if (lie === "unnamed") expect(statement).toBeUndefined();
      else expect(pattern).not.toBe(fieldPattern("data.balance", mid ?? { lo: "0", hi: null, hiInclusive: false }));

      await expectRefused(pool, reason);
    } finally {
      await pool.close();
    }
  });
});
