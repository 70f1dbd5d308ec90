/**
 * The api's pool of prover processes (api/provider/attestor.ts) with real provers (attestor/prover.ts,
 * forked as the api forks them) against attestors that are not there or never answer: the failures a
 * claim meets before any proof, mapped to ZKTLS_PROOF_FAILED with their reasons, and a prover that
 * overruns its time killed and replaced.
 */
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors.ts";
import { ProverPool, type AttestorSettings } from "../../api/provider/attestor.ts";
import { closedPort } from "../support/api-fixtures.ts";
import { compiledProver } from "../support/stack.ts";

const dataDir = mkdtempSync(join(tmpdir(), "prover-pool-"));
const request = {
  url: "https://localhost:1/balance",
  method: "GET" as const,
  headers: {},
  field: "data.balance",
  definition: { boundaries: [0, 100], labels: ["low"] },
  owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" as const,
  schemaId: `0x${"ab".repeat(32)}` as const,
};

/** A TCP server that accepts connections and never says a word: a WebSocket handshake to it never ends. */
let silent: Server;
const sockets: Socket[] = [];
beforeAll(async () => {
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
  rmSync(dataDir, { recursive: true, force: true });
});

function settings(url: string, timeoutMs: number): AttestorSettings {
  return { urls: [url], mode: "reveal", provers: 1, timeoutMs, caFiles: "", dataDir, ...compiledProver() };
}

/** One claim through the pool's only attestor. */
function prove(pool: ProverPool): Promise<unknown> {
  return pool.prove(request, pool.settings.urls);
}

async function failureOf(promise: Promise<unknown>): Promise<ApiError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(outcome)}`);
  return outcome;
}

describe("the prover pool", () => {
  it("an attestor that is not there: ZKTLS_PROOF_FAILED, attestor unreachable", { timeout: 60_000 }, async () => {
    const pool = new ProverPool(settings(`ws://127.0.0.1:${await closedPort()}/ws`, 30_000));
    try {
      const error = await failureOf(prove(pool));
      expect([error.code, error.status]).toEqual(["ZKTLS_PROOF_FAILED", 502]);
      expect(String(error.details?.reason)).toMatch(/^attestor unreachable: /);
      // The prover survived its failed claim and waits for the next one.
      expect(pool.size).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it("a claim that overruns its time: the prover is killed, the claim fails, the next one gets a new prover", { timeout: 60_000 }, async () => {
    const address = silent.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    const pool = new ProverPool(settings(`ws://127.0.0.1:${address.port}/ws`, 3_000));
    try {
      const error = await failureOf(prove(pool));
      expect([error.code, error.details]).toEqual(["ZKTLS_PROOF_FAILED", { reason: "the proof took longer than 3 s" }]);
      expect(pool.size).toBe(0);
      const again = await failureOf(prove(pool));
      expect(again.details).toEqual({ reason: "the proof took longer than 3 s" });
    } finally {
      await pool.close();
    }
  });

  it("a prover that never says it is ready: the claim fails naming the start, not the proof, and the prover is killed", { timeout: 60_000 }, async () => {
    // A process on the IPC channel that never sends `ready`, as a prover stuck loading attestor-core would.
    let child: ChildProcess | undefined;
    const stuck = (): ChildProcess => (child = fork("-e", ["setInterval(() => {}, 1000)"], { stdio: ["ignore", "inherit", "inherit", "ipc"] }));
    const pool = new ProverPool({ ...settings("ws://127.0.0.1:1/ws", 30_000), startTimeoutMs: 1_500 }, stuck);
    try {
      const error = await failureOf(prove(pool));
      expect([error.code, error.details]).toEqual(["ZKTLS_PROOF_FAILED", { reason: "the prover did not start within 2 s" }]);
      expect(pool.size).toBe(0);
      // The claim fails as the kill is sent; the process ends just after.
      if (child === undefined) throw new Error("no prover was started");
      const ended = child.exitCode !== null || child.signalCode !== null ? undefined : await once(child, "exit");
      expect(ended?.[1] ?? child.signalCode).toBe("SIGKILL");
    } finally {
      await pool.close();
    }
  });

  it("closing fails the claims under way and waiting, and refuses new ones", { timeout: 60_000 }, async () => {
    const address = silent.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    const pool = new ProverPool(settings(`ws://127.0.0.1:${address.port}/ws`, 30_000));
    const running = failureOf(prove(pool));
    const waiting = failureOf(prove(pool));
    await new Promise((r) => setTimeout(r, 500));
    await pool.close();
    expect((await running).details).toEqual({ reason: "the api is shutting down" });
    expect((await waiting).details).toEqual({ reason: "the api is shutting down" });
    expect((await failureOf(prove(pool))).details).toEqual({ reason: "the api is shutting down" });
    expect(pool.size).toBe(0);
  });
});
