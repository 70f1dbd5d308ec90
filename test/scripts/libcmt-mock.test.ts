/**
 * What toolkit/libcmt-mock.ts refuses before it starts anything: folders and paths libcmt's mock driver
 * cannot use, a request larger than its buffer, and no dapp to run. Each refusal says why, and no
 * dapp is spawned (the command named would fail the test if it were).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MockSessionError, runMockSessions, writeMockRequest, type MockSessionOptions } from "../../toolkit/libcmt-mock.ts";

const scratch = mkdtempSync(join(tmpdir(), "libcmtmock"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const options = (overrides: Partial<MockSessionOptions>): MockSessionOptions => ({
  dir: scratch,
  requests: [{ kind: "inspect", payload: "0x7b7d" }],
  endsSession: () => false,
  command: ["/nonexistent/dapp"],
  cwd: scratch,
  env: {},
  ...overrides,
});

async function refusal(run: () => Promise<unknown> | unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(MockSessionError);
    return (error as Error).message;
  }
  throw new Error("expected a MockSessionError");
}

describe("libcmt's mock driver, refused before anything runs", () => {
  it("a folder with a '.' or ',' in its path (the mock cuts file names there)", async () => {
    for (const dir of ["/tmp/a.b", "/tmp/a,b"]) {
      expect(await refusal(() => runMockSessions(options({ dir })))).toBe(`libcmt's mock cannot use the folder ${dir}: its path must have no "." or ","`);
    }
  });

  it("a folder whose request paths pass the mock's 127 characters", async () => {
    const dir = `/tmp/${"d".repeat(120)}`;
    expect(await refusal(() => runMockSessions(options({ dir })))).toBe(`libcmt's mock takes paths of at most 127 characters: ${dir} is too long`);
    expect(existsSync(dir)).toBe(false);
  });

  it("no dapp command", async () => {
    expect(await refusal(() => runMockSessions(options({ command: [] })))).toBe("the dapp command is empty");
    expect(readdirSync(scratch)).toEqual([]);
  });

  it("a request over the mock's 2 MiB buffer; one at the limit is written", async () => {
    const limit = 2 * 1024 * 1024;
    const path = join(scratch, "big");
    const hexOf = (bytes: number): `0x${string}` => `0x${"ab".repeat(bytes)}`;
    expect(await refusal(() => writeMockRequest(path, { kind: "inspect", payload: hexOf(limit + 1) }))).toBe(`${path}: ${limit + 1} bytes, over the mock's ${limit}`);
    expect(existsSync(path)).toBe(false);
    writeMockRequest(path, { kind: "inspect", payload: hexOf(limit) });
    expect(existsSync(path)).toBe(true);
    rmSync(path);
  });
});
