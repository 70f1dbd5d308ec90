import { describe, expect, it } from "vitest";
import { perMinute } from "../../api/routes/health.ts";

describe("perMinute (the status's inputsPerMinute)", () => {
  it("counts block times into the 60 minutes before now, oldest first, and drops older ones", () => {
    const now = 1_800_000_000;
    const counts = perMinute([now, now - 30, now - 61, now - 3599, now - 3600, now - 10_000, now + 20], now);
    expect(counts).toHaveLength(60);
    expect(counts[59]).toBe(3); // now, 30 s ago, and a block 20 s ahead of the api's clock
    expect(counts[58]).toBe(1); // 61 s ago
    expect(counts[0]).toBe(1); // 3,599 s ago
    expect(counts.reduce((a, b) => a + b, 0)).toBe(5);
  });
});
