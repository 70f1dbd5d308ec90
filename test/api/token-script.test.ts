import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { verifyToken } from "../../api/auth/tokens.ts";
import { loadConfig } from "../../api/config.ts";
import { processArgs, PROJECT_ROOT } from "../support/stack.ts";

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), "api-token-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function token(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [...processArgs("scripts/token.ts"), ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DATA_DIR: dataDir, JWT_SECRET: "", ...env },
  });
}

describe("npm run token", () => {
  it("prints tokens the api accepts, with the secret the api resolves from DATA_DIR", async () => {
    const user = (await token(["user", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "--ttl", "120"])).stdout.trim();
    const admin = (await token(["admin"])).stdout.trim();
    // The api, started afterwards on the same DATA_DIR, reads the secret the script generated.
    const { jwtSecret } = loadConfig({ DATA_DIR: dataDir });
    const userClaims = await verifyToken(jwtSecret, user);
    expect(userClaims).toMatchObject({ sub: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", role: "user" });
    expect(userClaims.exp - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(120);
    expect(await verifyToken(jwtSecret, admin)).toMatchObject({ sub: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", role: "admin" });
  });

  it("uses JWT_SECRET when set", async () => {
    const secret = "s".repeat(48);
    const printed = (await token(["user", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"], { JWT_SECRET: secret })).stdout.trim();
    expect((await verifyToken(new TextEncoder().encode(secret), printed)).role).toBe("user");
  });

  it("refuses bad arguments with the usage", async () => {
    const outcomes = await Promise.all(
      [["user", "bob"], ["root"], ["admin", "--ttl", "-5"], []].map((args) =>
        token(args).then(
          () => "succeeded",
          (error: { code: number; stderr: string }) => `${error.code} ${error.stderr}`,
        ),
      ),
    );
    // Exit 2 for a usage error, like every script (test/scripts/cli.test.ts).
    for (const outcome of outcomes) expect(outcome).toMatch(/^2 .*usage: npm run token/s);
  });
});
