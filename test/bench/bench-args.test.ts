/**
 * `npm run bench`'s arguments (scripts/bench.ts): the defaults, each option, and a clear refusal of what
 * it does not take.
 */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../scripts/bench.ts";

describe("npm run bench's arguments", () => {
  it("defaults to the full size on Rollups v1", () => {
    expect(parseBenchArgs([])).toMatchObject({ size: "full", rollups: "v1", riscv64: false, machine: false, attestor: false });
  });

  it("takes --rollups v2 in either spelling, with the other options", () => {
    expect(parseBenchArgs(["--rollups", "v2", "--size", "ci"])).toMatchObject({ size: "ci", rollups: "v2" });
    expect(parseBenchArgs(["--rollups=v2", "--riscv64"])).toMatchObject({ rollups: "v2", riscv64: true });
  });

  it("--quorum measures the consensus alone", () => {
    expect(parseBenchArgs(["--quorum"])).toMatchObject({ quorum: true, onchain: false, attestor: false });
    expect(parseBenchArgs([]).quorum).toBe(false);
  });

  it("--index measures the index against inspect alone, at either size", () => {
    expect(parseBenchArgs(["--index", "--size", "ci"])).toMatchObject({ index: true, size: "ci", rollups: "v1", receipts: false, quorum: false });
    expect(parseBenchArgs([]).index).toBe(false);
    expect(parseBenchArgs(["--index", "--backend", "postgres"])).toMatchObject({ index: true, backend: "postgres" });
    expect(parseBenchArgs(["--index"]).backend).toBeUndefined();
  });

  it("--nullifier measures a nullifier's costs alone, with its riscv64 rows on --riscv64", () => {
    expect(parseBenchArgs(["--nullifier", "--size", "ci"])).toMatchObject({ nullifier: true, size: "ci", riscv64: false, attestor: false, index: false });
    expect(parseBenchArgs(["--nullifier", "--riscv64"])).toMatchObject({ nullifier: true, riscv64: true });
    expect(parseBenchArgs([]).nullifier).toBe(false);
  });

  it.each([
    [["--nullifier", "--receipts"], /--nullifier runs on its own \(with --riscv64 for its riscv64 rows\): leave out the other flags/],
    [["--nullifier", "--rollups", "v2"], /--nullifier runs on its own/],
    [["--rollups", "v3"], /--rollups: /],
    [["--rollups"], /--rollups needs a value/],
    [["--attestor", "--rollups", "v2"], /--attestor runs on its own/],
    [["--quorum", "--onchain"], /--quorum runs on its own, on Rollups v2: leave out the other flags/],
    [["--quorum", "--rollups", "v2"], /--quorum runs on its own/],
    [["--index", "--receipts"], /--index runs on its own, on Rollups v1: leave out the other flags/],
    [["--index", "--rollups", "v2"], /--index runs on its own/],
    [["--fast"], /unknown argument: --fast/],
    [["--backend", "postgres"], /--backend goes with --index/],
    [["--index", "--backend", "mysql"], /--backend: /],
  ])("refuses %j", (argv, message) => {
    expect(() => parseBenchArgs(argv)).toThrow(message);
  });
});
