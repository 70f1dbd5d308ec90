/**
 * The dapp's batched line log (dapp/log.ts): prefixed, newline-terminated lines, gathered into one write
 * per turn, written after `flushMs` or on `flush()`, in order, and at once when 64 KiB are waiting.
 */
import { describe, expect, it } from "vitest";
import { createLineLog } from "../../dapp/log.ts";

const POLL = { timeout: 5_000, interval: 2 };
const MAX_PENDING_CHARS = 64 * 1024;

function recorder(): { writes: string[]; write: (text: string) => void } {
  const writes: string[] = [];
  return { writes, write: (text) => writes.push(text) };
}

describe("createLineLog", () => {
  it("prefixes each line and ends it with a newline", () => {
    const { writes, write } = recorder();
    const log = createLineLog("[dapp] ", write, 5);

    log("input 0 accepted");
    log.flush();

    expect(writes).toEqual(["[dapp] input 0 accepted\n"]);
  });

  it("gathers the lines logged in one turn into a single write", async () => {
    const { writes, write } = recorder();
    const log = createLineLog("p: ", write, 5);

    log("one");
    log("two");
    log("three");
    expect(writes).toEqual([]);

    await expect.poll(() => writes.length, POLL).toBe(1);
    expect(writes).toEqual(["p: one\np: two\np: three\n"]);
  });

  it("writes waiting lines after flushMs without a flush() call", async () => {
    const { writes, write } = recorder();
    const log = createLineLog("", write, 5);

    log("later");
    expect(writes).toEqual([]);

    await expect.poll(() => writes, POLL).toEqual(["later\n"]);
  });

  it("flush() writes what is waiting at once, and nothing when nothing is waiting", async () => {
    const { writes, write } = recorder();
    const log = createLineLog("> ", write, 5);

    log.flush();
    expect(writes).toEqual([]);

    log("a");
    log.flush();
    expect(writes).toEqual(["> a\n"]);
    log.flush();
    expect(writes).toEqual(["> a\n"]);

    // The timer of the flushed batch does not write an empty batch; the next line gets its own write.
    log("b");
    await expect.poll(() => writes, POLL).toEqual(["> a\n", "> b\n"]);
  });

  it("keeps the order of lines across flushes and timed writes", async () => {
    const { writes, write } = recorder();
    const log = createLineLog("", write, 5);

    log("1");
    log("2");
    log.flush();
    log("3");
    log("4");
    await expect.poll(() => writes.length, POLL).toBe(2);
    log("5");
    log.flush();

    expect(writes).toEqual(["1\n2\n", "3\n4\n", "5\n"]);
    expect(writes.join("")).toBe("1\n2\n3\n4\n5\n");
  });

  it("writes at once when the waiting text reaches 64 KiB", () => {
    const { writes, write } = recorder();
    // A long flushMs: only the size can cause a write within this test.
    const log = createLineLog("p:", write, 60_000);

    // "p:" + line + "\n" is one character short of 64 KiB: it waits.
    log("x".repeat(MAX_PENDING_CHARS - 4));
    expect(writes).toEqual([]);

    // One more line takes the waiting text past 64 KiB: both are written together, at once.
    log("y");
    expect(writes).toHaveLength(1);
    expect(writes[0]).toBe(`p:${"x".repeat(MAX_PENDING_CHARS - 4)}\np:y\n`);

    // Exactly 64 KiB is enough.
    log("z".repeat(MAX_PENDING_CHARS - 3));
    expect(writes).toHaveLength(2);
    expect(writes[1]).toHaveLength(MAX_PENDING_CHARS);

    log.flush();
    expect(writes).toHaveLength(2);
  });

  it("writes many small lines at once when together they reach 64 KiB", () => {
    const { writes, write } = recorder();
    const log = createLineLog("", write, 60_000);
    const line = "a".repeat(1023); // 1 KiB with its newline

    for (let i = 0; i < 63; i += 1) log(line);
    expect(writes).toEqual([]);
    log(line);

    expect(writes).toHaveLength(1);
    expect(writes[0]).toBe(`${line}\n`.repeat(64));
  });
});
