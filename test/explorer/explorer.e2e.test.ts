/**
 * The explorer in a real headless Chromium (Debian's /usr/bin/chromium through playwright-core, nothing
 * downloaded) against the real stack: every view shows data made here, a claim made while the live view
 * is open appears in it, bad URLs show their message, and no page logs a console error beyond the
 * expected not-found answers. Screenshots of each view go to test-results/screenshots/.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nacl from "tweetnacl";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationClient } from "../../client/index.ts";
import { TEST_JWT_SECRET, tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import { startProviderServer, type ProviderServer } from "../support/provider-server.ts";
import { PROJECT_ROOT, startStack, type TestStack } from "../support/stack.ts";

const FIELD = "data.balance";
const BUCKETS = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const SHOTS = join(PROJECT_ROOT, "test-results", "screenshots");

let stack: TestStack;
let provider: ProviderServer;
let user: AttestationClient;
let context: BrowserContext;
let page: Page;
let profile: string;
let schemaId: Hex;
let claimId: Hex;
const consoleErrors: string[] = [];

beforeAll(async () => {
  provider = await startProviderServer();
  stack = await startStack({
    api: true,
    env: { PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", EPOCH_INTERVAL_MS: "0" },
  });
  const base = new AttestationClient({ baseUrl: stack.urls.api });
  const admin = base.withToken(await tokenFor("admin", stack.addresses.admin));
  user = base.withToken(await tokenFor("user", USER_A));
  ({ schema_id: schemaId } = await admin.registerSchema({
    provider: "http",
    flowType: "balance",
    domain: "127.0.0.1",
    name: "Bank balance",
    description: "Balance of a bank account, in EUR",
    bucketDefinitions: { [FIELD]: BUCKETS },
    dataKeys: ["data.currency"],
    freshnessHalfLife: 86400,
  }));
  await admin.registerEncryptionKey({ publicKey: Buffer.from(nacl.box.keyPair().publicKey).toString("base64"), algorithm: "nacl-box" });
  provider.route("/balance", { kind: "json", value: { data: { balance: 512.5, currency: "EUR" } } });
  ({ claimId } = await claim());
  await user.grant({ requester: USER_B, schemaId, expiresAt: Math.floor(Date.now() / 1000) + 86400 });
  // The epoch holding the claim is claimed on chain, so its proof is ready.
  expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);

  profile = mkdtempSync(join(tmpdir(), "explorer-chromium-"));
  mkdirSync(SHOTS, { recursive: true });
  context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1200, height: 800 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(`${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
});

afterAll(async () => {
  await context?.close();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  await stack?.stop();
  await provider?.close();
});

function claim() {
  return user.claim({
    provider: "http",
    params: { url: provider.url("/balance", "127.0.0.1"), method: "GET", headers: {} },
    bucketDefinition: { field: FIELD, ...BUCKETS },
  });
}

/** Opens a view by its shareable URL and waits for it to finish loading. */
async function open(hash: string): Promise<void> {
  await page.goto(`${stack.urls.api}/${hash}`);
  await page.locator("#view .view").waitFor();
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

describe("the explorer", () => {
  it("lists the schemas at / and draws one schema's buckets as ranges", async () => {
    await open("");
    await expect(page.locator("h1").textContent()).resolves.toBe("Schemas");
    await expect(page.locator("table").textContent()).resolves.toContain("Bank balance");
    await shot("schemas");
    await page.locator(`a[href="#/schema/${schemaId}"]`).click();
    await page.locator("svg.ranges").waitFor();
    const labels = await page.locator("svg.ranges .band-label").allTextContents();
    expect(labels).toEqual(BUCKETS.labels);
    await expect(page.locator("#view").textContent()).resolves.toContain(schemaId);
    // The registration's data keys and half-life, and the test's claim counted in its bucket.
    await expect(page.locator("#view").textContent()).resolves.toContain("Freshness half-life");
    await expect(page.locator("svg.counts").first().textContent()).resolves.toMatch(/(^|[^0-9])1 attestation([^s]|$)/);
    await shot("schema");
  });

  it("shows an address's attestations and checks another address's access", async () => {
    await open(`#/address/${USER_A}`);
    await expect(page.locator("#view").textContent()).resolves.toContain("Attestations (1)");
    await expect(page.locator(`a[href="#/attestation/${claimId}"]`).count()).resolves.toBe(1);
    // The grant the suite made: given by this address, received by the other.
    await expect(page.locator("#view").textContent()).resolves.toContain("Grants given (1)");
    await page.locator('input[name="requester"]').fill(USER_B);
    await page.locator('button:text("Check access")').click();
    await page.locator("#access-result").waitFor();
    await expect(page.locator("#access-result").textContent()).resolves.toContain("access granted");
    await shot("address");
    await open(`#/address/${USER_B}`);
    await expect(page.locator("#view").textContent()).resolves.toContain("Grants received (1)");
  });

  it("shows one attestation with its claimed epoch and proof", async () => {
    await open(`#/attestation/${claimId}`);
    await expect(page.locator("#claim-id").textContent()).resolves.toBe(claimId);
    await expect(page.locator("#view").textContent()).resolves.toContain("mid");
    // No TLS attestor proved this one: the page says whose word it is.
    await expect(page.locator("#attestor").textContent()).resolves.toBe("not proven: the api's word");
    await expect(page.locator("#view").textContent()).resolves.toMatch(/Input#\d+/);
    await page.locator("#tx-hash").waitFor();
    await expect(page.locator("#tx-hash").textContent()).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await page.locator("text=epoch claimed").waitFor();
    await expect(page.locator("#view").textContent()).resolves.toContain(`npm run verify -- ${claimId}`);
    // Validity at the api's clock: it stands, never expires, and is as fresh as a minutes-old claim.
    await expect(page.locator("#status").textContent()).resolves.toBe("valid never expires");
    await expect(page.locator("#freshness").textContent()).resolves.toMatch(/^100% \(halves/);
    await shot("attestation");
  });

  it("marks a revoked attestation: who revoked it and why, on its page, its owner's list and the live feed", async () => {
    await open("#/live");
    await page.locator("#live-status >> text=connected").waitFor();
    const { claimId: dropped } = await claim();
    await user.revokeAttestation(dropped, { reason: "account closed" });
    await page.locator('#feed li[data-event="attestation:revoked"]').waitFor();
    await expect(page.locator('#feed li[data-event="attestation:revoked"]').first().textContent()).resolves.toContain("“account closed”");
    // Its epoch claimed first, so the page finds its proof (an open epoch is a 409 the browser logs).
    expect((await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
    await open(`#/attestation/${dropped}`);
    await expect(page.locator("h1").textContent()).resolves.toContain("revoked");
    await expect(page.locator("#status").textContent()).resolves.toMatch(/^revoked revoked .+ by 0x[0-9a-f]{6}…[0-9a-f]{6}: “account closed”$/);
    await open(`#/address/${USER_A}`);
    await expect(page.locator("table").first().textContent()).resolves.toContain("revoked");
    await shot("attestation-revoked");
  });

  it("shows a claim made while the live view is open", async () => {
    await open("#/live");
    await page.locator("#live-status >> text=connected").waitFor();
    const { claimId: fresh } = await claim();
    await page.locator(`#feed a[href="#/attestation/${fresh}"]`).waitFor();
    await expect(page.locator("#feed li").first().getAttribute("data-event")).resolves.toBe("attestation:created");
    await expect(page.locator("#feed li").first().textContent()).resolves.toContain("via http");
    await shot("live");
  });

  it("shows the node's health", async () => {
    await open("#/node");
    await expect(page.locator(".tile").count()).resolves.toBe(4);
    await expect(page.locator(".tile.ok").count()).resolves.toBe(4);
    // The inputs this suite made: counted by the dapp, and drawn in the last hour's chart.
    await expect(page.locator("#processed-inputs").textContent()).resolves.toMatch(/^[1-9]\d*$/);
    // The suite closed an epoch before these views: the node shows its claim.
    await expect(page.locator("#latest-claim").textContent()).resolves.toMatch(/^inputs \d+–\d+, claimed in block /);
    await expect(page.locator("svg.per-minute").getAttribute("aria-label")).resolves.toMatch(/^[1-9]\d* inputs in the last hour$/);
    await shot("node");
  });

  it("serves the API reference from the project", async () => {
    await page.goto(`${stack.urls.api}/docs`);
    await page.locator(".swagger-ui .info .title").waitFor();
    await expect(page.locator(".swagger-ui .info .title").textContent()).resolves.toContain("Attestation API");
    await shot("docs");
  });

  it("serves its own files and the reference's, and nothing else from disk", async () => {
    const app = await fetch(`${stack.urls.api}/explorer/app.js`);
    expect(app.status).toBe(200);
    expect(app.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect((await fetch(`${stack.urls.api}/docs/swagger-ui.css`)).status).toBe(200);
    for (const path of ["/explorer/nope.js", "/explorer/index.html", "/docs/package.json", "/docs/..%2Fpackage.json"]) {
      const response = await fetch(`${stack.urls.api}${path}`);
      expect(response.status, path).toBe(404);
      await expect(response.json()).resolves.toMatchObject({ success: false, error: { code: "NOT_FOUND" } });
    }
    // The api's own routes are untouched by the site beside them.
    expect((await fetch(`${stack.urls.api}/api/core/schemas`)).status).toBe(200);
  });

  it("logged no console errors on those pages", () => {
    expect(consoleErrors).toEqual([]);
  });

  it.each([
    ["#/address/nope", "Not an address"],
    ["#/attestation/0x12", "Not an attestation id"],
    [`#/attestation/0x${"0".repeat(64)}`, "Attestation not found"],
    ["#/schema/0x12", "Not a schema id"],
    [`#/schema/0x${"0".repeat(64)}`, "Schema not found"],
    [`#/address/${USER_A}?check=bob`, "is not an address"],
    ["#/live?owner=bob", "is not an address"],
    ["#/nowhere", "No such page"],
  ])("says what is wrong with %s", async (hash, message) => {
    consoleErrors.length = 0;
    await open(hash);
    await expect(page.locator("#view").textContent()).resolves.toContain(message);
    // The only console line allowed is the browser's note of the api's 404 for an unknown id.
    expect(consoleErrors.filter((line) => !/status of 404/.test(line))).toEqual([]);
  });
});
