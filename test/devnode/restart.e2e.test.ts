/**
 * Restarts and crashes of the real stack: the whole stack stopped and started again on the same DATA_DIR
 * (a fresh hardhat chain, so the devnode re-submits its recorded inputs), the chain restarted under a
 * running devnode, the dapp killed and restarted, and `npm start -- --reset`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Hex } from "viem";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { decodePayload } from "../../scripts/lib/rollup-client.ts";
import { freePorts, inputsOnChain, PROJECT_ROOT, startStack, type TestStack } from "../support/stack.ts";
import { schemaInput } from "./fixtures.ts";

const dataDirs: string[] = [];
const stacks: TestStack[] = [];

function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "devnode-restart-"));
  dataDirs.push(dir);
  return dir;
}

async function start(options: Parameters<typeof startStack>[0]): Promise<TestStack> {
  const stack = await startStack(options);
  stacks.push(stack);
  return stack;
}

afterEach(async () => {
  for (const stack of stacks.splice(0)) await stack.stop();
});

afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** What a client can observe of the rollup: every input with its verdict and outputs, and query answers. */
async function observe(stack: TestStack): Promise<unknown> {
  const { inputs } = await stack.graphql<{ inputs: unknown }>(
    `{ inputs { totalCount edges { node {
        index status msgSender timestamp blockNumber payload
        notices { edges { node { index payload } } }
        reports { edges { node { index payload } } }
    } } } }`,
  );
  const schemas = await stack.inspect({ type: "all_provider_schemas", params: {} });
  const health = await stack.inspect({ type: "health", params: {} });
  return { inputs, schemas, health };
}

/** Digest of the dapp's whole database, bookkeeping (last input index, counters) included. */
function dappDigest(dataDir: string): string {
  const sqlite = new Database(join(dataDir, "dapp.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return databaseDigest(sqlite);
  } finally {
    sqlite.close();
  }
}


async function fillHistory(stack: TestStack): Promise<void> {
  expect((await stack.send(schemaInput("one.example"), 0)).status).toBe("ACCEPTED");
  expect((await stack.send(schemaInput("two.example"), 0)).status).toBe("ACCEPTED");
  expect((await stack.send(schemaInput("three.example"), 1)).status).toBe("REJECTED");
  const params = { address: stack.client.account(3).address, role: "admin", enabled: true };
  expect((await stack.send({ type: "set_role", params }, 0)).status).toBe("ACCEPTED");
  // Account #3 is an admin only because of the input before: order matters on replay.
  expect((await stack.send(schemaInput("four.example"), 3)).status).toBe("ACCEPTED");
}

// Each test starts whole stacks (twice for the restart): give them room on a loaded 2-core machine.
const SLOW = { timeout: 180_000 };

describe("restarts", SLOW, () => {
  it("restarts the whole stack on a fresh chain without losing or re-applying an input", async () => {
    const dataDir = tempDataDir();
    const first = await start({ dataDir });
    await fillHistory(first);
    const before = await observe(first);
    await first.stop();
    const digest = dappDigest(dataDir);

    const second = await start({ dataDir });
    // The fresh chain holds the recorded inputs again (re-submitted from their original senders)...
    expect(await inputsOnChain(second)).toBe(5);
    expect(second.logs("devnode")).toMatch(/re-submitting 5 recorded input\(s\)/);
    // ...while the node's record and the dapp's database are unchanged: nothing was applied twice.
    expect(await observe(second)).toEqual(before);
    expect(dappDigest(dataDir)).toBe(digest);

    const next = await second.send(schemaInput("five.example"), 3);
    expect(next.index).toBe(5);
    expect(next.status).toBe("ACCEPTED");
    const health = decodePayload(
      (await second.inspect({ type: "health", params: {} })).reports[0]?.payload as Hex,
    ) as { processed_inputs: number };
    expect(health.processed_inputs).toBe(6);
  });

  it("puts the InputBox and the inputs back when the chain restarts under a running devnode", async () => {
    const stack = await start({});
    expect((await stack.send(schemaInput("chain.example"), 0)).status).toBe("ACCEPTED");
    await stack.restart("chain");
    await expect.poll(() => inputsOnChain(stack).catch(() => -1), { timeout: 20_000 }).toBe(1);
    const next = await stack.send(schemaInput("after-chain.example"), 0);
    expect(next.index).toBe(1);
    expect(next.status).toBe("ACCEPTED");
  });

  it("answers 503 while the dapp is down, keeps inputs for it, and feeds them when it comes back", async () => {
    const stack = await start({});
    await stack.kill("dapp", "SIGKILL");
    // Down means the node has seen the connection go (an inspect in that instant is DAPP_GONE, also 503).
    await expect
      .poll(async () => ((await (await fetch(`${stack.urls.node}/healthz`)).json()) as { dappConnected: boolean }).dappConnected, { timeout: 10_000 })
      .toBe(false);
    await expect(stack.inspect({ type: "health", params: {} })).rejects.toThrow(/HTTP 503.*no dapp is connected/);
    const sent = await stack.client.addInput(schemaInput("while-down.example"), 0);
    await stack.start("dapp");
    const verdict = await stack.client.waitForVerdict(sent.index);
    expect(verdict.status).toBe("ACCEPTED");
    expect((await stack.inspect({ type: "health", params: {} })).processed_input_count).toBe(1);
  });
});

// npm start runs every piece through tsx (as a user runs it), with the attestor and the indexer: on a loaded
// two-core machine it came up in more than 60 s (a full run of 29 November 2026).
const NPM_START_UP_MS = 150_000;

describe("npm start", { timeout: NPM_START_UP_MS + 90_000 }, () => {
  it("--reset starts from nothing, and Ctrl-C stops every piece", async () => {
    const dataDir = tempDataDir();
    const first = await start({ dataDir });
    expect((await first.send(schemaInput("old.example"), 0)).status).toBe("ACCEPTED");
    await first.stop();

    const [chain, node, rollup, api] = await freePorts(4);
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--reset"], {
      cwd: PROJECT_ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        CHAIN_PORT: String(chain),
        NODE_PORT: String(node),
        ROLLUP_HTTP_PORT: String(rollup),
        API_PORT: String(api),
        START_API: "off",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await expect.poll(() => output, { timeout: NPM_START_UP_MS, interval: 200, message: "npm start --reset: waiting for 'Local stack is up'" }).toMatch(/Local stack is up/);
      expect(output).toMatch(/--reset: emptied/);
      const inputs = await fetch(`http://127.0.0.1:${node}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ inputs { totalCount } }" }),
      });
      expect(await inputs.json()).toEqual({ data: { inputs: { totalCount: 0 } } });
      const health = await fetch(`http://127.0.0.1:${node}/inspect/${encodeURIComponent('{"type":"health","params":{}}')}`);
      expect(((await health.json()) as { processed_input_count: number }).processed_input_count).toBe(0);

      child.kill("SIGINT");
      expect(await exited).toBe(0);
      expect(output).toMatch(/\[stack\] stopped/);
      // Nothing listens any more: every child is gone.
      await expect(fetch(`http://127.0.0.1:${node}/healthz`)).rejects.toThrow();
      await expect(fetch(`http://127.0.0.1:${chain}`, { method: "POST" })).rejects.toThrow();
    } finally {
      if (child.exitCode === null) {
        child.kill("SIGINT");
        await exited;
      }
    }
  });
});
