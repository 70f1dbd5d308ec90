/**
 * The api's structured log (api/log.ts) on the real app: one JSON line per request with its id, route
 * pattern, status and time; the id is the client's when it is a sane token, else a new one, and it is
 * answered in X-Request-Id.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createApi } from "../../api/app.ts";
import { plainLogLine } from "../../api/log.ts";
import { loadConfig } from "../../api/config.ts";
import { createServices } from "../../api/services.ts";
import { closedPort, TEST_JWT_SECRET } from "../support/api-fixtures.ts";
import { until } from "../support/until.ts";

const dataDir = mkdtempSync(join(tmpdir(), "api-log-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function loggingApi(level = "info") {
  const down = await closedPort();
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config = loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: dataDir, ROLLUP_URL: `http://127.0.0.1:${down}`, RPC_URL: `http://127.0.0.1:${down}`, LOG_LEVEL: level });
  const app = createApi(createServices(config, { logDestination: sink }));
  return { app, lines };
}

describe("the api's log", () => {
  it("writes one JSON line per request with the client's request id, which the answer carries", async () => {
    const { app, lines } = await loggingApi();
    const response = await app.request("/api/core/openapi.json", { headers: { "x-request-id": "trace-1.a_b" } });
    expect(response.headers.get("x-request-id")).toBe("trace-1.a_b");
    const unknown = await app.request(`/api/core/attestation/0x${"ab".repeat(32)}`, { headers: { "x-request-id": "trace-2" } });
    expect(unknown.status).toBe(503);
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, service: "api", msg: "request", reqId: "trace-1.a_b", method: "GET", route: "/api/core/openapi.json", status: 200, ms: expect.any(Number) }),
      expect.objectContaining({ msg: "request", reqId: "trace-2", route: "/api/core/attestation/:claimId", status: 503 }),
    ]);
    expect(typeof lines[0]?.time).toBe("string");
  });

  it.each([
    ["absent", undefined],
    ["with spaces", "a b"],
    ["too long", "x".repeat(65)],
    ["JSON-looking", '{"reqId":"forged"}'],
  ])("an id that is %s is replaced by a new one", async (_, offered) => {
    const { app, lines } = await loggingApi();
    const response = await app.request("/api/core/openapi.json", offered === undefined ? {} : { headers: { "x-request-id": offered } });
    const id = response.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines[0]?.reqId).toBe(id);
  });

  it("a load balancer's healthy /healthcheck is a debug line, not an info line", async () => {
    const quiet = await loggingApi("info");
    expect((await quiet.app.request("/healthcheck")).status).toBe(200);
    expect(quiet.lines).toEqual([]);
    const verbose = await loggingApi("debug");
    await verbose.app.request("/healthcheck");
    expect(verbose.lines).toEqual([expect.objectContaining({ level: 20, msg: "request", route: "/healthcheck", status: 200 })]);
  });
});

describe("LOG_FORMAT=plain (what npm start sets)", () => {
  async function plainApi() {
    const down = await closedPort();
    let text = "";
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString("utf8");
        done();
      },
    });
    const config = loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: dataDir, ROLLUP_URL: `http://127.0.0.1:${down}`, RPC_URL: `http://127.0.0.1:${down}`, LOG_FORMAT: "plain" });
    return { app: createApi(createServices(config, { logDestination: sink })), text: () => text };
  }

  it("writes one readable line per event, with the request id", async () => {
    const { app, text } = await plainApi();
    await app.request("/api/core/openapi.json", { headers: { "x-request-id": "trace-9" } });
    await app.request(`/api/core/attestation/0x${"ab".repeat(32)}`, { headers: { "x-request-id": "trace-10" } });
    const lines = text().trimEnd().split("\n");
    expect(lines[0]).toMatch(/^\[api\] INFO request reqId=trace-9 method=GET route=\/api\/core\/openapi\.json status=200 ms=[\d.]+$/);
    expect(lines.at(-1)).toMatch(/^\[api\] INFO request reqId=trace-10 method=GET route=\/api\/core\/attestation\/:claimId status=503 ms=[\d.]+$/);
    expect(text()).not.toContain("{");
  });

  it("refuses a format it does not know, naming the variable", () => {
    expect(() => loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: dataDir, LOG_FORMAT: "pretty" })).toThrow(/LOG_FORMAT/);
  });
});

describe("plainLogLine", () => {
  it("says an error's type and message, and its stack at level error", () => {
    const err = { type: "TypeError", message: "boom", stack: "TypeError: boom\n    at f (a.ts:1:1)" };
    expect(plainLogLine({ level: 40, msg: "cannot read notices", service: "api", url: "http://x/rpc", err })).toBe('[api] WARN cannot read notices url=http://x/rpc err="TypeError: boom"\n');
    expect(plainLogLine({ level: 50, msg: "unexpected fault", service: "api", replica: "api-2", err })).toBe('[api-2] ERROR unexpected fault err="TypeError: boom"\n    at f (a.ts:1:1)\n');
  });
});

describe("standard output written once per turn of the event loop", () => {
  /** A process that logs through `createApiLogger` to its standard output, its lines gathered as they come. */
  function loggingProcess(body: string) {
    const logModule = pathToFileURL(join(process.cwd(), "api/log.ts")).href;
    const script = `import { createApiLogger } from ${JSON.stringify(logModule)};\nconst logger = createApiLogger("info");\n${body}`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const lines = () => out.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { msg: string; n?: number });
    return { child, lines, exited };
  }

  it("writes a turn's lines at its end, without waiting for more, whole and in order", async () => {
    const run = loggingProcess(`for (let n = 0; n < 50; n++) logger.info({ n }, "turn");\nsetTimeout(() => undefined, 60_000);`);
    try {
      const lines = await until(() => run.lines(), (l) => l.length >= 50, "the first turn's 50 lines", 30_000, 20);
      expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    } finally {
      run.child.kill("SIGKILL");
    }
  });

  it("writes the last turn's lines when the process exits in that turn", async () => {
    const run = loggingProcess(`logger.info({ n: 1 }, "before exit");\nlogger.fatal({ n: 2 }, "exiting");\nprocess.exit(3);`);
    expect(await run.exited).toBe(3);
    expect(run.lines().map((l) => [l.msg, l.n])).toEqual([
      ["before exit", 1],
      ["exiting", 2],
    ]);
  });
});
