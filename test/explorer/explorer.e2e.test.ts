/**
 * The explorer in a real headless Chromium (Debian's /usr/bin/chromium through playwright-core, nothing
 * downloaded) against the real stack: every view shows data made here, a claim made while the live view
 * is open appears in it, bad URLs show their message, and no page logs a console error beyond the
 * expected not-found answers. An owner grants and revokes with its own wallet: no extension runs here, so a
 * second page carries an injected EIP-1193 provider whose requests a viem account in this process answers.
 * Screenshots of each view go to test-results/screenshots/.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nacl from "tweetnacl";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import type { Address, Hex, TypedDataDefinition } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttestationClient } from "../../client/index.ts";
import { TEST_JWT_SECRET, tokenFor, USER_A, USER_A_KEY, USER_B } from "../support/api-fixtures.ts";
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
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    // The publisher brings the claim to the registry and the gate once its epoch is claimed: the page shows it.
    publish: true,
    env: { PROVIDER_ALLOWED_HOSTS: "127.0.0.1", JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: "off", EPOCH_INTERVAL_MS: "0", PUBLISH_POLL_MS: "100" },
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
  watchConsole(page);
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
async function open(hash: string, on: Page = page): Promise<void> {
  await on.goto(`${stack.urls.api}/${hash}`);
  await on.locator("#view .view").waitFor();
}

async function shot(name: string, on: Page = page): Promise<void> {
  await on.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

function watchConsole(on: Page): void {
  on.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(`${on.url()}: ${message.text()}`);
  });
  on.on("pageerror", (error) => consoleErrors.push(`${on.url()}: ${error.message}`));
}

/**
 * The browser wallet of the wallet tests: an EIP-1193 provider in the page whose every request goes to
 * `answerWallet` here, where a viem account signs as a wallet extension would. Only the wallet page has it,
 * so the first page stays a browser without a wallet.
 */
const WALLET_SHIM = `
window.ethereum = {
  async request({ method, params }) {
    const reply = await window.testWalletRequest(method, JSON.stringify(params ?? []));
    if (reply.error !== undefined) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
    return reply.result;
  },
  on() {},
  removeListener() {},
};`;

/** The account the wallet holds now: the tests switch it, then reload the page (a new page memory). */
let walletAccount: PrivateKeyAccount = privateKeyToAccount(USER_A_KEY);
/** The methods the page asked the wallet for, in order. */
const walletCalls: string[] = [];
let walletChainId = 0;
/** When set, the wallet's user declines the next signature (EIP-1193 code 4001). */
let walletDeclines = false;

type WalletReply = { result: unknown } | { error: { code: number; message: string } };

async function answerWallet(method: string, paramsJson: string): Promise<WalletReply> {
  walletCalls.push(method);
  const params = JSON.parse(paramsJson) as unknown[];
  const account = walletAccount;
  // As a wallet does: it signs only for its own account.
  const notMine = (address: unknown): WalletReply | undefined =>
    typeof address === "string" && address.toLowerCase() === account.address.toLowerCase()
      ? undefined
      : { error: { code: 4100, message: `the wallet holds ${account.address}, not ${String(address)}` } };
  if (walletDeclines && method.includes("sign")) {
    walletDeclines = false;
    return { error: { code: 4001, message: "User rejected the request." } };
  }
  switch (method) {
    case "eth_requestAccounts":
    case "eth_accounts":
      return { result: [account.address] };
    case "eth_chainId":
      return { result: `0x${walletChainId.toString(16)}` };
    case "personal_sign": {
      const [data, address] = params;
      return notMine(address) ?? { result: await account.signMessage({ message: { raw: data as Hex } }) };
    }
    case "eth_signTypedData_v4": {
      const [address, json] = params;
      const refused = notMine(address);
      if (refused !== undefined) return refused;
      const typed = JSON.parse(String(json)) as { types: Record<string, unknown>; domain: unknown; primaryType: string; message: unknown };
      // viem derives EIP712Domain from the domain itself and refuses it among the types.
      const { EIP712Domain: _domainType, ...types } = typed.types;
      return { result: await account.signTypedData({ ...typed, types } as unknown as TypedDataDefinition) };
    }
    default:
      return { error: { code: 4200, message: `the test wallet does not support ${method}` } };
  }
}

interface GivenGrant {
  grantId: Hex;
  requester: Address;
  consent: "signed" | "owner" | "relayed";
}

async function grantsGiven(owner: string): Promise<GivenGrant[]> {
  const body = (await (await fetch(`${stack.urls.api}/api/core/grants/${owner}`)).json()) as { data: { given: GivenGrant[] } };
  return body.data.given;
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
    // The grant the suite made: given by this address, received by the other, relayed by the api on a token.
    await expect(page.locator("#view").textContent()).resolves.toContain("Grants given (1)");
    await expect(page.locator("#grants-given [data-consent]").getAttribute("data-consent")).resolves.toBe("relayed");
    // This browser has no wallet: the card says one is needed, and no revoke is offered.
    await expect(page.locator("#wallet-needed").textContent()).resolves.toContain("needs an Ethereum wallet");
    await expect(page.locator("[data-revoke]").count()).resolves.toBe(0);
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
    // Its schema lets one provider account back several owners, and the page says so (never an account).
    await expect(page.locator("#unique-per-account").textContent()).resolves.toMatch(/^not unique/);
    // Its receipt, signed by the operator's key the status publishes.
    await page.locator("#receipt-signer").waitFor();
    await expect(page.locator("#receipt-signer").textContent()).resolves.toBe((await user.status()).receipts.signer);
    // Then the api's verdict on it: signed while its epoch is open, proven once the chain backs it.
    await page.locator("#receipt-state[data-verdict]").waitFor();
    await expect(page.locator("#receipt-state").textContent()).resolves.toMatch(/^(signed by the operator|proven equal, field for field, to the notice the chain proves)/);
    await expect(page.locator("#view").textContent()).resolves.toMatch(/Input#\d+/);
    await page.locator("#tx-hash").waitFor();
    await expect(page.locator("#tx-hash").textContent()).resolves.toMatch(/^0x[0-9a-f]{64}$/);
    await page.locator("text=epoch claimed").waitFor();
    await expect(page.locator("#view").textContent()).resolves.toContain(`npm run verify -- ${claimId}`);
    // Validity at the api's clock: it stands, never expires, and is as fresh as a minutes-old claim.
    await expect(page.locator("#status").textContent()).resolves.toBe("valid never expires");
    await expect(page.locator("#freshness").textContent()).resolves.toMatch(/^100% \(halves/);
    // On chain: the publisher recorded it in the registry and the gate (the page is read again until it has).
    for (let tries = 0; !((await page.locator("#onchain-gate").textContent({ timeout: 10_000 })) ?? "").startsWith("recorded"); tries++) {
      expect(tries).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 200));
      await open(`#/attestation/${claimId}`);
    }
    await expect(page.locator("#onchain-registry").textContent()).resolves.toBe("recorded · isAttestationValid: true");
    await expect(page.locator("#onchain-gate").textContent()).resolves.toBe("recorded · 0 attestor(s)");
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
    await expect(page.locator("#registry-address").textContent()).resolves.toBe(stack.contracts?.registry.toLowerCase());
    await expect(page.locator("#gate-address").textContent()).resolves.toBe(stack.contracts?.gate.toLowerCase());
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

  describe("an owner's own wallet", () => {
    let walletPage: Page;

    beforeAll(async () => {
      const domain = (await (await fetch(`${stack.urls.api}/api/core/consent/domain`)).json()) as { data: { chainId: number } };
      walletChainId = domain.data.chainId;
      walletPage = await context.newPage();
      watchConsole(walletPage);
      await walletPage.exposeFunction("testWalletRequest", answerWallet);
      await walletPage.addInitScript(WALLET_SHIM);
    });

    afterAll(async () => {
      await walletPage?.close();
    });

    it("tells a wallet connected as another address that it is not the owner", async () => {
      walletAccount = privateKeyToAccount(generatePrivateKey());
      await open(`#/address/${USER_A}`, walletPage);
      await walletPage.locator("#wallet-connect").click();
      await walletPage.locator("#wallet-status").waitFor();
      await expect(walletPage.locator("#wallet-status").textContent()).resolves.toContain("which is not this address");
      await expect(walletPage.locator("#grant-form").count()).resolves.toBe(0);
      await expect(walletPage.locator("[data-revoke]").count()).resolves.toBe(0);
      // Connecting asks for nothing to be signed.
      expect(walletCalls).toEqual(["eth_requestAccounts"]);
    });

    it("grants with the owner's signature (listed as signed), then revokes with it", async () => {
      walletAccount = privateKeyToAccount(USER_A_KEY);
      walletCalls.length = 0;
      // A reload is a new page memory: no connection, no token.
      await walletPage.reload();
      await walletPage.locator("#view .view").waitFor();
      await walletPage.locator("#wallet-connect").click();
      await walletPage.locator("#grant-form").waitFor();
      await expect(walletPage.locator("#wallet-status").textContent()).resolves.toContain("(this address)");
      // The connected owner is offered a signed revoke of each grant it gave.
      await expect(walletPage.locator("#grants-given [data-revoke]").count()).resolves.toBeGreaterThan(0);

      const requester = privateKeyToAccount(generatePrivateKey()).address;
      await walletPage.locator('input[name="grant-requester"]').fill(requester);
      await walletPage.locator('select[name="grant-schema"]').selectOption(schemaId);
      await walletPage.locator('input[name="grant-days"]').fill("7");
      await walletPage.locator('button:text("Sign and grant")').click();
      await walletPage.locator("#grant-id").waitFor({ timeout: 60_000 });
      const grantId = (await walletPage.locator("#grant-id").textContent()) as Hex;
      expect(grantId).toMatch(/^0x[0-9a-f]{64}$/);
      // Signed in once (SIWE), then the Grant's typed data on the rollup's chain.
      expect(walletCalls).toEqual(["eth_requestAccounts", "personal_sign", "eth_chainId", "eth_signTypedData_v4"]);

      // Listed as signed: on the page, by the api's grants of the owner, and by its access check.
      const revoke = walletPage.locator(`[data-revoke="${grantId}"]`);
      await revoke.waitFor();
      const row = walletPage.locator("#grants-given tbody tr", { has: revoke });
      await expect(row.locator("[data-consent]").getAttribute("data-consent")).resolves.toBe("signed");
      const listed = (await grantsGiven(USER_A)).find((g) => g.grantId === grantId);
      expect(listed?.consent).toBe("signed");
      expect(listed?.requester.toLowerCase()).toBe(requester.toLowerCase());
      const access = (await (await fetch(`${stack.urls.api}/api/core/access/${USER_A}/${requester}`)).json()) as { data: { grants: { grantId: Hex; consent: string }[] } };
      expect(access.data.grants).toEqual([expect.objectContaining({ grantId, consent: "signed" })]);
      // The token lived in the page's memory only.
      await expect(walletPage.evaluate("JSON.stringify([localStorage.length, sessionStorage.length, document.cookie])")).resolves.toBe('[0,0,""]');
      await shot("address-wallet", walletPage);

      walletCalls.length = 0;
      await revoke.click();
      await walletPage.locator("#revoke-result").waitFor({ timeout: 60_000 });
      // Still signed in: only the RevokeGrant is signed.
      expect(walletCalls).toEqual(["eth_chainId", "eth_signTypedData_v4"]);
      await expect(walletPage.locator(`[data-revoke="${grantId}"]`).count()).resolves.toBe(0);
      expect((await grantsGiven(USER_A)).map((g) => g.grantId)).not.toContain(grantId);
    });

    it("says so when the user declines to sign a revoke", async () => {
      walletDeclines = true;
      const relayed = walletPage.locator('#grants-given tbody tr:has([data-consent="relayed"]) [data-revoke]');
      await relayed.click();
      await walletPage.locator('#grants-given [role="alert"]').waitFor();
      await expect(walletPage.locator('#grants-given [role="alert"]').textContent()).resolves.toBe("You declined the revoke's signature in your wallet.");
      // Nothing was sent: the grant stands.
      await expect(walletPage.locator('#grants-given [data-consent="relayed"]').count()).resolves.toBe(1);
    });

    it("shows the api's error code and message when the rollup refuses a grant", async () => {
      // The suite's live grant to USER_B on this schema makes a second one a duplicate.
      await walletPage.locator('input[name="grant-requester"]').fill(USER_B);
      await walletPage.locator('select[name="grant-schema"]').selectOption(schemaId);
      await walletPage.locator('button:text("Sign and grant")').click();
      const error = walletPage.locator('#grant-access .outcome [role="alert"]');
      await error.waitFor({ timeout: 60_000 });
      await expect(error.textContent()).resolves.toMatch(/^ROLLUP_REJECTED: The rollup rejected the input \(DUPLICATE: /);
      // The browser notes the api's 422 answer on the console; nothing else may be there.
      const unexpected = consoleErrors.filter((line) => !/status of 422/.test(line));
      consoleErrors.length = 0;
      consoleErrors.push(...unexpected);
    });
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
