/**
 * Nothing outlives the stack (issue 49; docs/operations.md, "Stopping"): `npm start` with api replicas
 * (haproxy and redis-server beside the node processes), stopped from outside while the test loads the
 * machine (8 CPU burners per core): the supervisor SIGKILLed by its pid, and npm's process group sent
 * SIGTERM then SIGKILL 2 s later while the supervisor's event loop cannot run (SIGSTOPped: the extreme of a
 * busy loop; the stop it would run is npm start's ordinary Ctrl-C, test/devnode/restart.e2e.test.ts). Each time every process the stack started is gone and every port it
 * claimed is free within 10 s of the last signal. Before the lifelines (scripts/lib/stack-lifeline.ts), the
 * first left every piece running, parented to init, holding its port. Last, the stop's bound (STOP_TIMEOUT_MS):
 * a piece that ignores SIGTERM is killed when it is reached, not after its own grace.
 */
import { cpus } from "node:os";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../scripts/lib/stack-processes.ts";
import { PIECE_GRACE_MS } from "../../scripts/lib/stack-restarts.ts";
import { startStack, testDappShellCommand } from "../support/stack.ts";
import { stopDrill } from "../support/stop-drill.ts";

const ARGS = ["--api-replicas", "2"] as const;
const BOUND_MS = 10_000;

describe("npm start stopped from outside on a loaded machine", () => {
  it("the supervisor SIGKILLed by its pid: every piece gone and every port free within 10 s", { timeout: 300_000 }, async () => {
    const result = await stopDrill({ way: "sigkill", args: ARGS, loadPerCore: 8, boundMs: BOUND_MS });
    console.log(`[lifeline] sigkill: ${result.processes} processes gone in ${result.cleanMs ?? "-"} ms with ${result.runnable} runnable`);
    // chain, devnode, dapp, attestor, indexer, redis, two replicas, balancer: each with its keeper.
    expect(result.processes).toBeGreaterThanOrEqual(18);
    expect(result.runnable).toBeGreaterThanOrEqual(8 * cpus().length);
    expect({ leftover: result.leftover, boundPorts: result.boundPorts }).toEqual({ leftover: [], boundPorts: [] });
    expect(result.cleanMs).toBeLessThanOrEqual(BOUND_MS);
  });

  it("npm start sent SIGTERM, then SIGKILL 2 s later (a process manager's stop), its supervisor too busy to handle the TERM: nothing left within 10 s", { timeout: 300_000 }, async () => {
    const result = await stopDrill({ way: "busy-term-then-kill", args: ARGS, loadPerCore: 8, boundMs: BOUND_MS });
    console.log(`[lifeline] busy-term-then-kill: ${result.processes} processes gone ${result.cleanMs ?? "-"} ms after the SIGKILL with ${result.runnable} runnable; last line: ${result.lastLine}`);
    expect(result.processes).toBeGreaterThanOrEqual(18);
    expect(result.runnable).toBeGreaterThanOrEqual(8 * cpus().length);
    expect({ leftover: result.leftover, boundPorts: result.boundPorts }).toEqual({ leftover: [], boundPorts: [] });
    expect(result.cleanMs).toBeLessThanOrEqual(BOUND_MS);
  });
});

describe("a stop within its bound", () => {
  it("a piece that ignores SIGTERM and would run 10 minutes more is killed at the bound, and nothing of it is left", { timeout: 180_000 }, async () => {
    // The dapp's leader is a shell that ignores SIGTERM and, once its dapp has stopped, sleeps on (sleep inherits the ignore).
    const stack = await startStack({ dappCommand: `trap '' TERM; ${testDappShellCommand()}; sleep 600`, stopBoundMs: 1_000 });
    const before = stack.processes();
    const from = Date.now();
    await stack.stop();
    const took = Date.now() - from;
    console.log(`[lifeline] stop with a piece ignoring SIGTERM: ${took} ms (bound 1,000 ms)`);
    expect(before.filter(isAlive)).toEqual([]);
    // Without the bound the piece alone would hold the stop for its whole grace (PIECE_GRACE_MS, 5 s) before
    // its SIGKILL, and the node and the chain would then be stopped gently after it: at the bound all are killed.
    expect(took).toBeLessThan(PIECE_GRACE_MS);
  });
});
