/**
 * The recorded input log `npm run replay -- --libcmt --log` reads (scripts/lib/input-log.ts): a log
 * written and read back is the same log, and a bad line is refused naming the line and the field,
 * before anything runs.
 */
import { describe, expect, it } from "vitest";
import { formatInputLog, InputLogError, parseInputLog, type InputLog } from "../../scripts/lib/input-log.ts";

const ZERO32 = `0x${"00".repeat(32)}` as const;
const HEADER = { inputLog: 1, rollups: "v2", chainId: 31337, application: "0xab7528bb862fb57e8a2bcd567a2e929a0be56a5e" };
const ADVANCE = {
  advance: { index: 0, sender: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", blockNumber: 3, blockTimestamp: 1_700_000_000, prevRandao: ZERO32, payload: "0x7b7d" },
  expected: { status: "ACCEPTED", reports: [], outputs: ["0xc258d6e5"], outputsRoot: ZERO32 },
};
const INSPECT = { inspect: { payload: "0x7b7d" }, expected: { status: "Exception", reports: [], exception: "0x6e6f" } };
const lines = (...values: unknown[]): string => values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join("\n");

describe("the recorded input log", () => {
  it("reads back what it wrote", () => {
    const log: InputLog = parseInputLog(lines(HEADER, ADVANCE, { ...ADVANCE, advance: { ...ADVANCE.advance, index: 1 } }, INSPECT));
    expect(log.advances).toHaveLength(2);
    expect(log.inspects).toHaveLength(1);
    expect(parseInputLog(formatInputLog(log))).toEqual(log);
  });

  it.each([
    ["", "the log is empty: it needs at least its header line"],
    [lines("{"), "line 1: not JSON"],
    [lines({ ...HEADER, inputLog: 2 }), 'line 1 (the header {"inputLog": 1, "rollups", "chainId", "application"}): inputLog: Invalid input: expected 1'],
    [lines({ ...HEADER, rollups: "v3" }), "line 1 (the header"],
    [lines(HEADER, { ...ADVANCE, advance: { ...ADVANCE.advance, index: 4 } }), "line 2: input 4 where input 0 was due (a log holds every input from 0, in order)"],
    [lines(HEADER, { ...ADVANCE, advance: { ...ADVANCE.advance, payload: "0x7" } }), "line 2: advance.payload: expected 0x-prefixed hex with an even number of digits"],
    [lines(HEADER, { ...ADVANCE, advance: { ...ADVANCE.advance, prevRandao: "0x00" } }), "line 2: advance.prevRandao: expected 32 bytes"],
    [lines(HEADER, { ...ADVANCE, expected: { ...ADVANCE.expected, status: "FINE" } }), "line 2: expected.status"],
    [lines(HEADER, { ...ADVANCE, extra: 1 }), "line 2: "],
    [lines(HEADER, INSPECT, ADVANCE), "line 3: an advance after an inspect (inspects are answered at the log's end)"],
    [lines(HEADER, [1, 2]), 'line 2: expected {"advance": ...} or {"inspect": ...}'],
  ])("refuses %j, naming the line", (text, message) => {
    expect(() => parseInputLog(text)).toThrow(InputLogError);
    expect(() => parseInputLog(text)).toThrow(message);
  });
});
