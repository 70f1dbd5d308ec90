/**
 * `npm start`'s port table (scripts/lib/stack-config.ts, stackPorts): every documented combination of flags
 * gives every piece a port of its own, and a validator beside such a stack takes none of them; a clash
 * between two pieces names both before anything starts; a port something else holds is named too.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_QUORUM } from "../../common/tls-claim.ts";
import { assertPortsFree, loadStartOptions, MAX_API_REPLICAS, MAX_READERS, stackPorts, type PortClaim } from "../../scripts/lib/stack-config.ts";
import { PROJECT_ROOT } from "../support/stack.ts";

// --api-replicas needs haproxy and redis-server on PATH: stand-ins do, since nothing is started here.
const bin = mkdtempSync(join(tmpdir(), "stack-ports-"));
for (const program of ["haproxy", "redis-server"]) {
  writeFileSync(join(bin, program), "#!/bin/sh\n");
  chmodSync(join(bin, program), 0o755);
}
afterAll(() => rmSync(bin, { recursive: true, force: true }));

const table = (argv: string[], env: Record<string, string> = {}): PortClaim[] => stackPorts(loadStartOptions({ PATH: bin, ...env }, argv, PROJECT_ROOT).settings);

function clashes(claims: readonly PortClaim[]): string[] {
  const owners = new Map<number, string>();
  const found: string[] = [];
  for (const claim of claims) {
    const first = owners.get(claim.port);
    if (first !== undefined) found.push(`${claim.port}: ${first} and ${claim.owner}`);
    owners.set(claim.port, claim.owner);
  }
  return found;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** Each flag's whole documented range (MAX_READERS, MAX_API_REPLICAS, MAX_QUORUM), and every switch that adds or moves a port. */
const READERS = range(0, MAX_READERS);
const REPLICAS = range(1, MAX_API_REPLICAS);
const ATTESTORS = range(1, MAX_QUORUM);
const SWITCHES = ["--publish", "--demo-provider", "--rollups=v2"] as const;

function* combinations(): Generator<string[]> {
  for (const readers of READERS)
    for (const replicas of REPLICAS)
      for (const attestors of ATTESTORS)
        for (let mask = 0; mask < 2 ** SWITCHES.length; mask++) {
          const switches = SWITCHES.filter((_, i) => (mask & (1 << i)) !== 0);
          yield [`--readers=${readers}`, `--api-replicas=${replicas}`, `--attestors=${attestors}`, ...switches];
        }
}

describe("npm start's port table", () => {
  it("gives every piece of every documented combination of flags a port of its own, and a validator beside it another", { timeout: 120_000 }, () => {
    let walked = 0;
    const found: string[] = [];
    // The validator runs beside the stack on its chain (the same --rollups and --api-replicas), so its
    // ports must be free of the stack's too.
    const validators = new Map<string, PortClaim[]>();
    for (const argv of combinations()) {
      const stack = table(argv);
      const alike = ["--validator", ...argv.filter((a) => a.startsWith("--rollups") || a.startsWith("--api-replicas"))];
      const beside = validators.get(alike.join(" ")) ?? table(alike);
      validators.set(alike.join(" "), beside);
      for (const clash of [...clashes(stack), ...clashes([...stack, ...beside])]) found.push(`${argv.join(" ")}: ${clash}`);
      walked++;
    }
    expect(found).toEqual([]);
    expect(walked).toBe(READERS.length * REPLICAS.length * ATTESTORS.length * 2 ** SWITCHES.length);
  });

  it("has every piece of the largest stack in it, each once", () => {
    const owners = table(["--readers", "8", "--api-replicas", "8", "--attestors", "16", "--publish", "--demo-provider"]).map((c) => c.owner.split(" ")[0]);
    expect(owners).toHaveLength(1 + 2 + 16 + 1 + 16 + 1 + 8 + 1 + 1 + 1);
    expect(owners).toEqual(expect.arrayContaining(["chain", "devnode", "provider", "attestor", "attestor-16", "balancer", "api-8", "redis", "publisher", "reader-8", "indexer"]));
  });

  it("puts the third attestor past the publisher's 8005 (the clash of --publish --attestors 3), whether or not --publish is given", () => {
    const ports = (argv: string[]): number[] => loadStartOptions({}, argv, PROJECT_ROOT).settings.attestor?.ports.slice() ?? [];
    expect(ports(["--publish", "--attestors", "3"])).toEqual([8003, 8004, 8006]);
    expect(ports(["--attestors", "3"])).toEqual([8003, 8004, 8006]);
  });

  it.each([
    [["--publish"], { ATTESTOR_PORT: "8005" }, "port 8005 is wanted by attestor (ATTESTOR_PORT) and by publisher (PUBLISHER_PORT): give one of them another port"],
    [["--demo-provider"], { DEMO_PROVIDER_PORT: "8545" }, "port 8545 is wanted by chain (CHAIN_PORT) and by provider (DEMO_PROVIDER_PORT): give one of them another port"],
    [["--readers", "1"], { READER_ROLLUP_BASE_PORT: "5004" }, "port 5004 is wanted by devnode's rollup HTTP server (ROLLUP_HTTP_PORT) and by reader-1's rollup HTTP server (READER_ROLLUP_BASE_PORT): give one of them another port"],
    [["--api-replicas", "2"], { REDIS_PORT: "8102" }, "port 8102 is wanted by api-2 (API_REPLICA_BASE_PORT + 1) and by redis (REDIS_PORT): give one of them another port"],
    [[], { INDEX_PORT: "10000" }, "port 10000 is wanted by devnode (NODE_PORT) and by indexer (INDEX_PORT): give one of them another port"],
  ])("refuses %j with %j, naming both owners", (argv, env, message) => {
    expect(() => table(argv, env)).toThrow(message);
  });

  it("refuses a port something on this machine already listens on, naming the piece that wanted it", async () => {
    const holder: Server = await new Promise((resolveServer) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => resolveServer(server));
    });
    try {
      const address = holder.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const claims = table([], { API_PORT: String(address.port) });
      await expect(assertPortsFree(claims.filter((c) => c.owner.startsWith("api")))).rejects.toThrow(
        `port ${address.port} of api (API_PORT) is already in use on this machine (another stack still running?): stop what holds it, or choose another port`,
      );
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
  });
});
