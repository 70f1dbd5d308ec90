/**
 * Crash and restart: a stream of mixed inputs goes to the InputBox straight from hardhat accounts, while
 * clients write grants through the api. At seeded random points the dapp, then the devnode, then the api
 * are killed with SIGKILL (not a polite stop) and started again, inputs still arriving meanwhile.
 * Afterwards:
 * - every input has a verdict and was applied exactly once (the dapp counted each once);
 * - the dapp's database digest equals a clean replay of the node's record into a fresh dapp, and every
 *   verdict equals the replay's;
 * - every write the api answered with success is in the rollup, accepted; the others failed clearly.
 */
import { isBatchNotice } from "../../common/attestation-batch.ts";
import { randomBytes } from "node:crypto";
import type { Address, Hex } from "viem";
import { hardhatAccount, hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hexToUtf8 } from "../../common/hex.ts";
import { inputBoxAbi } from "../../devnode/v1/inputs.ts";
import { AttestationApiError, AttestationClient } from "../../client/index.ts";
import { TEST_JWT_SECRET, tokenFor } from "../support/api-fixtures.ts";
import { startStack, type PieceName, type TestStack } from "../support/stack.ts";
import { LOG_SCHEMA_ID, mixedLog, prng } from "./mixed-log.ts";
import { cleanReplay, fileStateDigest, figure, recordedInputs, runs, SCALE, scaledTimeout, sleep } from "./support.ts";

/** The api writes from its own wallet (#19) so the stream's senders never share its nonces. */
const API_ACCOUNT = hardhatAccount(19);
const API_KEY: Hex = hardhatPrivateKey(19);
const COUNT = runs(150);
const SEED = Number(process.env.FUZZ_SEED ?? "") || 7_202_611;

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({
    api: true,
    index: false, // nothing here reads EAS's GraphQL: no indexer's CPU beside the stack (issue 51)
    env: {
      JWT_SECRET: TEST_JWT_SECRET,
      PRIVATE_KEY: API_KEY,
      RATE_LIMITS: "off",
      // Long enough to ride out a dapp or devnode restart: the api waits for the verdict instead of failing.
      VERDICT_TIMEOUT_MS: "45000",
      NOTICE_POLL_MS: "100",
    },
  });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

type WriteOutcome = { ok: true; grantId: Hex; owner: Address; requester: Address } | { ok: false; what: string };

describe("SIGKILL of the dapp, the devnode and the api in a stream of inputs", () => {
  it(`applies each of ${COUNT}+ inputs exactly once; the digest equals a clean replay; no lost write reported as success`, { timeout: scaledTimeout(600_000) }, async () => {
    const started = Date.now();
    const random = prng(SEED);
    // The api's wallet becomes an admin (it relays grants as operator).
    expect((await stack.send({ type: "set_role", params: { address: API_ACCOUNT.address, role: "admin", enabled: true } }, 0)).status).toBe("ACCEPTED");
    const log = mixedLog(COUNT, SEED, 1);

    // Kill points: in each cycle (one at CI size, more in the soak) the dapp in the first third, the
    // devnode in the second, the api in the last.
    const cycles = Math.max(1, Math.round(SCALE));
    const at = (cycle: number, from: number, to: number) => Math.floor((COUNT / cycles) * (cycle + from + random() * (to - from)));
    const kills: { piece: PieceName; at: number; downFor: number }[] = [];
    for (let cycle = 0; cycle < cycles; cycle++) {
      kills.push(
        { piece: "dapp", at: at(cycle, 0.1, 0.3), downFor: 5 + Math.floor(random() * 10) },
        { piece: "devnode", at: at(cycle, 0.4, 0.6), downFor: 5 + Math.floor(random() * 10) },
        { piece: "api", at: at(cycle, 0.7, 0.9), downFor: 3 + Math.floor(random() * 5) },
      );
    }

    // The log registers the schema the api's writers use at its third input.
    for (const step of log.slice(0, 3)) await stack.client.addInput(step.payload, step.sender);

    // Three clients writing through the api the whole time.
    const writes: WriteOutcome[] = [];
    let streaming = true;
    const base = new AttestationClient({ baseUrl: stack.urls.api });
    const writer = async (): Promise<void> => {
      while (streaming) {
        const owner = `0x${randomBytes(20).toString("hex")}` as Address;
        const requester = `0x${randomBytes(20).toString("hex")}` as Address;
        const client = base.withToken(await tokenFor("user", owner));
        try {
          const result = await client.grant({ requester, schemaId: LOG_SCHEMA_ID, expiresAt: Math.floor(Date.now() / 1000) + 86_400 });
          writes.push({ ok: true, grantId: result.grantId, owner, requester });
        } catch (error) {
          writes.push({ ok: false, what: error instanceof AttestationApiError ? error.code : error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error) });
          await sleep(200);
        }
      }
    };
    const writers = Promise.all([writer(), writer(), writer()]);

    const events: string[] = [];
    /** A piece's restart still in progress: the next kill of that piece waits for it. */
    const restarting = new Map<PieceName, Promise<void>>();
    for (const [i, step] of log.entries()) {
      if (i < 3) continue;
      await stack.client.addInput(step.payload, step.sender);
      // A paced stream (as from many users), so the api's clients write in between.
      await sleep(Math.floor(random() * 60));
      for (const kill of kills) {
        if (kill.at === i) {
          await restarting.get(kill.piece);
          // A few milliseconds after an input was mined: the dapp is likely in the middle of it.
          await sleep(Math.floor(random() * 30));
          await stack.kill(kill.piece, "SIGKILL");
          events.push(`killed ${kill.piece} after input ${i + 1}`);
        }
        if (kill.at + kill.downFor === i) {
          const restart = stack.start(kill.piece).then(() => void events.push(`restarted ${kill.piece} after input ${i + 1}`));
          // Awaited below or by the next kill; kept from being an unhandled rejection meanwhile.
          restart.catch(() => undefined);
          restarting.set(kill.piece, restart);
        }
      }
    }
    await Promise.all(restarting.values());
    streaming = false;
    await writers;

    // Every input gets its verdict.
    const total = Number(
      await stack.client.publicClient.readContract({
        address: stack.addresses.inputBox,
        abi: inputBoxAbi,
        functionName: "getNumberOfInputs",
        args: [stack.addresses.dapp],
      }),
    );
    await stack.client.waitForVerdict(total - 1, 120_000);
    const inputs = await recordedInputs(stack.graphql);
    expect(inputs.map((input) => input.index)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(inputs.filter((input) => input.status === "UNPROCESSED")).toEqual([]);

    // Exactly once: the node finished every input once, and the dapp's bookkeeping ends at the last accepted
    // one (a rejected input leaves no trace, as in the machine).
    const lastAccepted = inputs.map((input) => input.status).lastIndexOf("ACCEPTED");
    const health = await stack.inspect({ type: "health", params: {} });
    expect(JSON.parse(hexToUtf8(health.reports[0]?.payload ?? "0x"))).toMatchObject({ processed_inputs: lastAccepted + 1 });
    expect(health.processed_input_count).toBe(total);

    // A clean replay of the node's record gives the same database and the same verdicts.
    const replay = await cleanReplay(inputs, [stack.addresses.admin.toLowerCase() as Address]);
    expect(fileStateDigest(`${stack.dataDir}/dapp.sqlite`, true)).toBe(replay.digest);
    const verdicts = inputs.map((input) => input.status);
    expect(verdicts).toEqual(replay.outcomes.map((o) => (o.status === "accept" ? "ACCEPTED" : "REJECTED")));
    expect(inputs.map((input) => input.reports)).toEqual(replay.outcomes.map((o) => o.reports));
    // And the same notices: an input re-delivered after a crash sends its outputs again (see redelivery).
    expect(inputs.map((input) => input.notices)).toEqual(replay.outcomes.map((o) => (o.batch === null ? o.notices : [...o.notices, o.batch])));

    // Every write the api reported as a success is in the rollup, accepted, and visible.
    const successes = writes.filter((w): w is Extract<WriteOutcome, { ok: true }> => w.ok);
    // Grants made alone or as items of a batch (group commit): the input is the one whose notice names the id.
    const byId = new Map(
      inputs.flatMap((input) =>
        // The JSON notices: the input's batch notice (common/attestation-batch.ts) names no grant.
        input.notices.filter((payload) => !isBatchNotice(payload)).flatMap((payload) => {
          const notice = JSON.parse(hexToUtf8(payload)) as { event: string; data: { grantId?: Hex } };
          return notice.event === "grant:created" && notice.data.grantId !== undefined ? [[notice.data.grantId, input] as const] : [];
        }),
      ),
    );
    for (const write of successes) {
      expect([write.grantId, byId.get(write.grantId)?.status]).toEqual([write.grantId, "ACCEPTED"]);
      const access = await stack.inspect({ type: "check_access", params: { owner: write.owner, requester: write.requester } });
      expect(JSON.parse(hexToUtf8(access.reports[0]?.payload ?? "0x"))).toMatchObject({ has_access: true });
    }
    const failures = writes.filter((w): w is Extract<WriteOutcome, { ok: false }> => !w.ok);
    expect(successes.length).toBeGreaterThan(5);
    // A failure is a clear one: an api error code, or the connection to a killed api.
    for (const failure of failures) expect(failure.what).toMatch(/^[A-Z_]+$|ECONNREFUSED|ECONNRESET|socket|fetch failed|terminated|other side closed/i);

    const notices = { recorded: inputs.reduce((n, i) => n + i.notices.length, 0), replayed: replay.outcomes.reduce((n, o) => n + o.notices.length, 0) };
    figure(
      `crash/restart: ${total} inputs (${verdicts.filter((v) => v === "ACCEPTED").length} accepted), ` +
        `${events.length <= 6 ? events.join(", ") : `${events.filter((e) => e.startsWith("killed")).length} SIGKILLs and restarts of dapp, devnode and api`}; ` +
        `api writes ${successes.length} ok / ${failures.length} failed (${[...new Set(failures.map((f) => f.what))].join(", ") || "none"}); ` +
        `${notices.recorded} notices = clean replay's; digest = clean replay; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });
});
