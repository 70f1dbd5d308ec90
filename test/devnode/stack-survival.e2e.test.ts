/**
 * The stack survives its pieces (docs/operations.md, "When a piece dies"), under `npm start`'s restart
 * policy: a reader killed from outside (`kill -9` of its pid, not through the supervisor) under read load
 * through the api fails no read the other reader can answer and is back within 10 s, counted; the devnode
 * (the state) exiting is the stack's end, said why; and a stopped stack leaves no process it started, nor
 * any descendant, not even one that left its piece's process group.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAlive, type ProcessId } from "../../scripts/lib/stack-processes.ts";
import { TEST_JWT_SECRET } from "../support/api-fixtures.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({
    api: true,
    readers: 2,
    restarts: true,
    // Each dapp leaves a process in a session of its own (as a daemon would): the stop must find it too.
    dappCommand: `setsid sleep 600 & exec "${process.execPath}" --import tsx dapp/main.ts`,
    env: { JWT_SECRET: TEST_JWT_SECRET, TRUST_PROXY: "true", RATE_LIMITS: "off" },
  });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

describe("a piece killed from outside", () => {
  it("a reader killed with SIGKILL by its pid under read load: reads go on, it comes back, restart counted", { timeout: 60_000 }, async () => {
    const pid = stack.pid("reader-1");
    if (pid === undefined) throw new Error("reader-1 is not running");
    const failed: string[] = [];
    let done = 0;
    let killed = false;
    // Bounded: four clients, 60 reads each, one at a time.
    const worker = async (client: number): Promise<void> => {
      for (let i = 0; i < 60; i++) {
        const response = await fetch(`${stack.urls.api}/api/core/schemas`, { headers: { "x-forwarded-for": `192.0.2.${client}` } }).catch((error: unknown) => error);
        if (!(response instanceof Response) || response.status !== 200) failed.push(response instanceof Response ? `${response.status} ${await response.text()}` : String(response));
        done += 1;
        if (killed) await new Promise((r) => setTimeout(r, 20));
      }
    };
    const load = Promise.all([1, 2, 3, 4].map(worker));
    while (done < 40) await new Promise((r) => setTimeout(r, 10));
    const killedAt = Date.now();
    process.kill(pid, "SIGKILL");
    killed = true;
    const back = await until(
      async () => {
        const status = stack.status().find((s) => s.piece === "reader-1");
        const answers = status?.running === true ? await fetch(`${stack.urls.readers[0]}/reader`).then((r) => r.ok, () => false) : false;
        return { running: status?.running, newPid: status?.pid !== pid, answers, restarts: status?.restarts };
      },
      (s) => s.running === true && s.newPid && s.answers,
      "reader-1 back",
      // A generous bound (timings swing with the machine's load): the time itself is printed.
      30_000,
      50,
    );
    console.log(`[survival] reader-1 back ${Date.now() - killedAt} ms after its SIGKILL`);
    await load;
    // The api passes a read the dead reader did not answer to the other one: none fails.
    expect([done, failed]).toEqual([240, []]);
    expect(back.restarts).toBe(1);
    // An operator sees it without reading logs: the api's status and metrics.
    const status = (await (await fetch(`${stack.urls.api}/api/core/status`)).json()) as { data: { stack: { piece: string; restarts: number; running: boolean }[] | null } };
    expect(status.data.stack?.find((p) => p.piece === "reader-1")).toMatchObject({ restarts: 1, running: true });
    expect(await (await fetch(`${stack.urls.api}/metrics`)).text()).toMatch(/^stack_piece_restarts\{piece="reader-1"\} 1$/m);
    expect(stack.supervisorLog()).toContain("reader-1 exited (signal SIGKILL); restart 1 in 250 ms");
    expect(stack.supervisorLog()).toContain("reader-1 is back (restart 1)");
    expect(stack.downReason()).toBeUndefined();
  });

  it("the devnode (it holds the state) killed by its pid: the stack would stop, and says why", { timeout: 30_000 }, async () => {
    const pid = stack.pid("devnode");
    if (pid === undefined) throw new Error("the devnode is not running");
    process.kill(pid, "SIGKILL");
    const reason = await until(() => stack.downReason(), (r) => r !== undefined, "the stack's end", 10_000, 50);
    expect(reason).toBe("devnode exited (signal SIGKILL): it holds the rollup's state, so the stack stops");
    // Not restarted: under npm start the stack now stops every piece.
    expect(stack.status().find((s) => s.piece === "devnode")).toMatchObject({ running: false, restarts: 0, lastExit: { reason: "signal SIGKILL" } });
  });
});

describe("a stopped stack", () => {
  it("leaves no process it started, nor any descendant (one in a session of its own included)", { timeout: 60_000 }, async () => {
    const before: ProcessId[] = stack.processes();
    // Every piece's leader, and at least each dapp's process outside its group.
    const running = stack.status().filter((s) => s.running);
    expect(before.length).toBeGreaterThanOrEqual(running.length + 3);
    await stack.stop();
    expect(before.filter(isAlive)).toEqual([]);
  });
});
