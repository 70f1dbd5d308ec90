/**
 * What the attestor signs (attestor/server.ts: attestor-core with our check of the range statement), end
 * to end with real processes: the attestor, honest provers (attestor/prover.ts) in both modes, and
 * dishonest ones (test/support/lying-prover.ts) that hide part of the number, the bytes between a key and
 * another value, or the object around another key. Honest claims prove the bucket and hold no trace of the
 * value; every lie is refused by the attestor, so no signature exists to send anywhere.
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors.ts";
import { ProverPool, type AttestorSettings } from "../../api/provider/attestor.ts";
import { checkProofs } from "../../common/proof-check.ts";
import { binRange } from "../../common/range-pattern.ts";
import { claimParameters } from "../../common/tls-claim.ts";
import { closedPort } from "../support/api-fixtures.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
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

async function startAttestor(port: number, entry: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATTESTOR_PORT: String(port), ATTESTOR_CA_FILES: pki.ca.certPath, DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the attestor did not start in 60 s")), 60_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening on")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`the attestor exited (${code})`)));
  });
  return child;
}

function settings(): AttestorSettings {
  return { urls: [attestorUrl], mode: "zk", provers: 1, timeoutMs: 60_000, caFiles: pki.ca.certPath, dataDir };
}

function lyingPool(lie: string): ProverPool {
  return new ProverPool({ ...settings(), provers: 2 }, () =>
    fork(join(ROOT, "test", "support", "lying-prover.ts"), [], {
      cwd: ROOT,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ATTESTOR_CA_FILES: pki.ca.certPath, DATA_DIR: dataDir, LIE: lie },
    }),
  );
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
      const outcome = await pool.prove({ ...request(), mode: "zk" }, [attestorUrl]).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(ApiError);
      const error = outcome as ApiError;
      expect(error.code).toBe("ZKTLS_PROOF_FAILED");
      expect(String(error.details?.reason)).toMatch(reason);
    } finally {
      await pool.close();
    }
  });
});
