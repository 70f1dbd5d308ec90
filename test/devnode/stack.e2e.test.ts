/**
 * End to end through the real pieces: a hardhat chain, the devnode and the dapp as processes. Inputs go
 * through the InputBox with viem; results come back through /inspect and /graphql.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address, Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { utf8ToHex } from "../../common/hex.ts";
import type { InspectEnvelope } from "../../common/wire.ts";
import { decodePayload } from "../../scripts/lib/rollup-client.ts";
import { processArgs, PROJECT_ROOT, startStack, type TestStack } from "../support/stack.ts";
import { seriesValue } from "../support/prometheus.ts";
import { schemaInput } from "./fixtures.ts";

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

function decodedReports(envelope: InspectEnvelope): unknown[] {
  return envelope.reports.map((r) => decodePayload(r.payload));
}

async function processedCount(): Promise<number> {
  const { inputs } = await stack.graphql<{ inputs: { edges: { node: { status: string } }[] } }>(
    `{ inputs { edges { node { status } } } }`,
  );
  return inputs.edges.filter((e) => e.node.status !== "UNPROCESSED").length;
}

describe("the dapp process", () => {
  it("runs on the architecture the suite asked for (riscv64 under npm run riscv64 -- e2e, else this host's)", () => {
    expect(stack.logs("dapp")).toContain(`on ${process.env.TEST_DAPP_ARCH ?? process.arch};`);
  });
});

describe("advance inputs", () => {
  it("accepts set_role from the admin (account #0) and rejects it from account #1 with UNAUTHORIZED_SENDER", async () => {
    const params = { address: stack.client.account(5).address, role: "attestor", enabled: true };
    const accepted = await stack.send({ type: "set_role", params }, 0);
    expect(accepted.status).toBe("ACCEPTED");
    expect(accepted.msgSender.toLowerCase()).toBe(stack.addresses.admin.toLowerCase());

    const rejected = await stack.send({ type: "set_role", params }, 1);
    expect(rejected.status).toBe("REJECTED");
    expect(rejected.notices).toEqual([]);
    expect(rejected.reports.map(decodePayload)).toEqual([
      { error: { code: "UNAUTHORIZED_SENDER", message: expect.any(String) } },
    ]);
  });

  it("rejects a payload that is not JSON with the dapp's error report", async () => {
    const verdict = await stack.send("0xdeadbeef", 0);
    expect(verdict.status).toBe("REJECTED");
    expect(decodePayload(verdict.reports[0] as Hex)).toMatchObject({ error: { code: "INVALID_PAYLOAD" } });
  });

  it("records the notices of accepted inputs, per input and in the top-level list, with block metadata", async () => {
    const verdict = await stack.send(schemaInput("notices.example"), 0);
    expect(verdict.status).toBe("ACCEPTED");
    expect(verdict.notices).toHaveLength(1);
    const notice = decodePayload(verdict.notices[0] as Hex) as { event: string; data: { schema_id: Hex } };
    expect(notice.event).toBe("schema:registered");

    const block = await stack.client.publicClient.getBlock({ blockNumber: BigInt(verdict.blockNumber) });
    expect(verdict.timestamp).toBe(Number(block.timestamp));

    const { notices } = await stack.graphql<{
      notices: { edges: { node: { index: number; payload: Hex; input: { index: number } } }[] };
    }>(`{ notices { edges { node { index payload input { index } } } } }`);
    expect(notices.edges.map((e) => e.node)).toContainEqual({
      index: 0,
      payload: verdict.notices[0],
      input: { index: verdict.index },
    });

    const schema = await stack.inspect({ type: "provider_schema", params: { schema_id: notice.data.schema_id } });
    expect(schema.status).toBe("Accepted");
    expect(decodedReports(schema)[0]).toMatchObject({ schema_id: notice.data.schema_id, name: "notices.example/balance" });
  });

  it("processes many inputs in chain order, with inspects answered between them", async () => {
    const domains = Array.from({ length: 12 }, (_, i) => `order-${i}.example`);
    // Sent back to back (the nonce manager keeps them in order); inspects run while they are processed.
    let sending = true;
    const sent = Promise.all(domains.map((domain) => stack.client.addInput(schemaInput(domain), 0))).finally(
      () => (sending = false),
    );
    const seen: number[] = [];
    while (sending) {
      const health = await stack.inspect({ type: "health", params: {} });
      expect(health.status).toBe("Accepted");
      seen.push(health.processed_input_count);
    }
    const indices = (await sent).map((s) => s.index);
    expect(indices).toEqual(indices.map((_, i) => (indices[0] as number) + i));
    for (const index of indices) expect((await stack.client.waitForVerdict(index)).status).toBe("ACCEPTED");
    seen.push((await stack.inspect({ type: "health", params: {} })).processed_input_count);
    // The count an inspect reports never goes backwards.
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);

    const list = await stack.inspect({ type: "all_provider_schemas", params: {} });
    const names = (decodedReports(list)[0] as { name: string }[]).map((s) => s.name);
    expect(names.filter((n) => n.startsWith("order-"))).toEqual(domains.map((d) => `${d}/balance`));
  });
});

describe("inspect", () => {
  it("gives the same answer by GET (percent-encoded path) and POST (raw body)", async () => {
    const query = { type: "all_provider_schemas", params: {} };
    const byGet = await stack.inspect(query, "GET");
    const byPost = await stack.inspect(query, "POST");
    expect(byGet.status).toBe("Accepted");
    expect(byPost).toEqual(byGet);
  });

  it("percent-decodes the whole path, slashes included, and relays a rejection as Rejected with the hex message", async () => {
    const type = "a/b c?d%e&f+ü";
    const envelope = await stack.inspect({ type, params: {} });
    expect(envelope).toEqual({
      status: "Rejected",
      exception_payload: utf8ToHex(`unknown query type: ${type}`),
      reports: [],
      processed_input_count: expect.any(Number),
    });

    // Literal slashes and unencoded JSON characters in the path reach the dapp too.
    const raw = await fetch(`${stack.urls.inspect}/{"type":"x/y","params":{}}`);
    const body = (await raw.json()) as InspectEnvelope;
    expect(body.exception_payload).toBe(utf8ToHex("unknown query type: x/y"));
  });

  it("answers health with the dapp's count of processed inputs, equal to the node's", async () => {
    const envelope = await stack.inspect({ type: "health", params: {} });
    const health = decodedReports(envelope)[0] as { status: string; processed_inputs: number };
    expect(health.status).toBe("ok");
    expect(envelope.processed_input_count).toBe(await processedCount());
    // The dapp counts the inputs it processed, accepted or rejected: the same inputs the node processed.
    expect(health.processed_inputs).toBe(envelope.processed_input_count);
  });
});

describe("metrics", () => {
  it("GET /metrics on the query port counts inputs by status, epochs and inspects by outcome, in Prometheus text", async () => {
    await stack.inspect({ type: "health", params: {} });
    await stack.inspect({ type: "no_such_query", params: {} });
    const response = await fetch(`${stack.urls.node}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const value = (series: string): number => seriesValue(text, series);
    // The inputs above: at least one accepted and one rejected, each counted once per input.
    expect(value('devnode_inputs{status="ACCEPTED"}')).toBeGreaterThanOrEqual(1);
    expect(value('devnode_inputs{status="REJECTED"}')).toBeGreaterThanOrEqual(1);
    expect(value('devnode_inspect_duration_seconds_count{outcome="Accepted"}')).toBeGreaterThanOrEqual(1);
    expect(value('devnode_inspect_duration_seconds_count{outcome="Rejected"}')).toBeGreaterThanOrEqual(1);
    expect(value("devnode_epochs_closed")).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
  });
});

describe("graphql", () => {
  it("lists inputs with status, sender and payload, and errors on a missing index", async () => {
    const sent = await stack.send({ type: "set_role", params: { address: stack.client.account(6).address as Address, role: "operator", enabled: true } }, 0);
    const { input } = await stack.graphql<{ input: { index: number; status: string; msgSender: string; payload: Hex } }>(
      `query($i: Int!) { input(index: $i) { index status msgSender payload } }`,
      { i: sent.index },
    );
    expect(input).toEqual({ index: sent.index, status: "ACCEPTED", msgSender: sent.msgSender, payload: sent.payload });
    await expect(stack.graphql(`{ input(index: 999999) { status } }`)).rejects.toThrow(/input not found: 999999/);
  });
});

// Each script run is a fresh tsx process: slow on a loaded machine.
describe("command-line scripts", { timeout: 120_000 }, () => {
  async function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [...processArgs(`scripts/${script}.ts`), ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, RPC_URL: stack.urls.rpc, ROLLUP_URL: stack.urls.node },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    return { code, stdout, stderr };
  }

  it("input prints the index and the verdict with decoded reports", async () => {
    const params = { address: stack.client.account(7).address, role: "attestor", enabled: true };
    const accepted = await run("input", [JSON.stringify({ type: "set_role", params })]);
    expect(accepted.stderr).toBe("");
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toMatch(/^input \d+ sent by 0x[0-9a-fA-F]{40} in 0x[0-9a-f]{64}/);
    expect(accepted.stdout).toMatch(/"status": "ACCEPTED"/);

    const rejected = await run("input", [JSON.stringify({ type: "set_role", params }), "--sender", "1"]);
    expect(rejected.code).toBe(1);
    expect(rejected.stdout).toMatch(/"status": "REJECTED"/);
    expect(rejected.stdout).toMatch(/"code": "UNAUTHORIZED_SENDER"/);

    const usage = await run("input", ["{not json"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/the input is not JSON/);
  });

  it("inspect prints the envelope with decoded reports", async () => {
    const health = await run("inspect", ['{"type":"health","params":{}}']);
    expect(health.code).toBe(0);
    const printed = JSON.parse(health.stdout) as { status: string; reports: { decoded: { status: string } }[] };
    expect(printed.status).toBe("Accepted");
    expect(printed.reports[0]?.decoded.status).toBe("ok");

    const rejected = await run("inspect", ['{"type":"nope","params":{}}', "--post"]);
    expect(rejected.code).toBe(1);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ status: "Rejected", exception: "unknown query type: nope" });
  });

  it("replay sends a JSON Lines file in order and prints a summary", async () => {
    const dir = mkdtempSync(join(tmpdir(), "replay-"));
    try {
      const file = join(dir, "inputs.jsonl");
      writeFileSync(
        file,
        [
          "# a comment, then a blank line",
          "",
          JSON.stringify({ input: schemaInput("replay-a.example") }),
          JSON.stringify(schemaInput("replay-b.example")),
          JSON.stringify({ sender: 2, input: schemaInput("replay-c.example") }),
        ].join("\n"),
      );
      const result = await run("replay", [file]);
      expect(result.code).toBe(1);
      const lines = result.stdout.trim().split("\n");
      expect(lines[0]).toMatch(/^line 3: input \d+ ACCEPTED$/);
      expect(lines[1]).toMatch(/^line 4: input \d+ ACCEPTED$/);
      expect(lines[2]).toMatch(/^line 5: input \d+ REJECTED UNAUTHORIZED_SENDER$/);
      expect(lines[3]).toMatch(/3 input\(s\) replayed .*: 2 ACCEPTED, 1 REJECTED$/);
      // Progress goes to stderr (plain lines when it is not a terminal), so stdout stays parseable.
      expect(result.stderr).toMatch(/^inputs sent 3\/3 100% .* in \d+ s$/m);
      expect(result.stderr).toMatch(/^verdicts read 3\/3 100% .* in \d+ s$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("replay of a few hundred inputs shows its progress on stderr as plain lines when piped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "replay-"));
    try {
      const file = join(dir, "inputs.jsonl");
      const count = 200;
      const lines = Array.from({ length: count }, (_, i) => JSON.stringify(schemaInput(`progress-${i}.example`)));
      writeFileSync(file, lines.join("\n"));
      const result = await run("replay", [file]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`${count} input\\(s\\) replayed .*: ${count} ACCEPTED$`, "m"));
      expect(result.stderr).not.toContain("\r");
      // Intermediate lines (every 10%, or every 5 s), not only the last one, for both phases.
      const sent = result.stderr.split("\n").filter((l) => l.startsWith("inputs sent "));
      expect(sent.length).toBeGreaterThanOrEqual(5);
      expect(sent.at(-1)).toMatch(new RegExp(`^inputs sent ${count}/${count} 100% .* in \\d+ s$`));
      expect(result.stderr).toMatch(new RegExp(`^verdicts read ${count}/${count} 100% `, "m"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
