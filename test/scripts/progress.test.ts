/** The progress lines of long scripts: what they say, and how often they are written. */
import { describe, expect, it } from "vitest";
import { renderProgress, startProgress } from "../../toolkit/progress.ts";

function recorder(isTTY: boolean) {
  const chunks: string[] = [];
  let clock = 0;
  return { chunks, stream: { isTTY, write: (text: string) => chunks.push(text) }, now: () => clock, advance: (ms: number) => (clock += ms) };
}

describe("renderProgress", () => {
  it("says done/total, share, rate and time left, with a bar on a terminal", () => {
    expect(renderProgress("inputs sent", 120, 400, 4_000, true)).toBe("inputs sent [#######.................] 120/400 30% 30/s, 10 s left");
    expect(renderProgress("inputs sent", 120, 400, 4_000, false)).toBe("inputs sent 120/400 30% 30/s, 10 s left");
    expect(renderProgress("verdicts", 400, 400, 125_000, false)).toBe("verdicts 400/400 100% 3.2/s, in 2 min 5 s");
  });
});

describe("startProgress", () => {
  it("writes plain lines at the start, every 10% and at the end when stderr is not a terminal", () => {
    const r = recorder(false);
    const progress = startProgress({ label: "n", total: 100, stream: r.stream, now: r.now });
    for (let i = 0; i < 100; i++) {
      r.advance(10);
      progress.tick();
    }
    progress.done();
    expect(r.chunks.every((c) => c.endsWith("\n") && !c.includes("\r"))).toBe(true);
    // A first line at once, then one per 10%, and the last one.
    expect(r.chunks.map((c) => c.split(" ")[1])).toEqual(["1/100", "10/100", "20/100", "30/100", "40/100", "50/100", "60/100", "70/100", "80/100", "90/100", "100/100", "100/100"]);
  });

  it("also writes a plain line when 5 s passed without reaching the next 10%", () => {
    const r = recorder(false);
    const progress = startProgress({ label: "n", total: 1000, stream: r.stream, now: r.now });
    r.advance(5_001);
    progress.tick();
    r.advance(100);
    progress.tick();
    expect(r.chunks).toHaveLength(1);
    expect(r.chunks[0]).toMatch(/^n 1\/1000 0% /);
  });

  it("redraws one line in place on a terminal, at most every 100 ms, and ends it", () => {
    const r = recorder(true);
    const progress = startProgress({ label: "n", total: 10, stream: r.stream, now: r.now });
    for (let i = 0; i < 10; i++) {
      r.advance(60);
      progress.tick();
    }
    progress.done();
    expect(r.chunks.slice(0, -1).every((c) => c.startsWith("\r") && c.includes("["))).toBe(true);
    expect(r.chunks.length).toBeLessThan(10);
    expect(r.chunks[r.chunks.length - 2]).toContain("10/10 100%");
    expect(r.chunks[r.chunks.length - 1]).toBe("\n");
  });
});
