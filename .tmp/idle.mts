import { readFileSync } from "node:fs";
import setup from "../test/support/global-setup.ts";
const cleanup = await setup();
const { startStack } = await import("../test/support/stack.ts");
const tck = 100;
function cpuOf(pid: number): number {
  try { const st = readFileSync(`/proc/${pid}/stat`, "utf8"); const r = st.slice(st.lastIndexOf(")") + 2).split(" "); return (Number(r[11]) + Number(r[12]) + Number(r[13]) + Number(r[14])) / tck; } catch { return NaN; }
}
const api = process.argv[2] === "api";
const t0 = Date.now();
const stack = await startStack({ api, env: process.argv[3] ? { EPOCH_INTERVAL_MS: process.argv[3] } : {} });
console.log("ready ms", Date.now() - t0);
const snap = () => Object.fromEntries(stack.processes().map((p) => [`${p.pid} ${readFileSync(`/proc/${p.pid}/cmdline`, "utf8").replace(/\0/g, " ").slice(0, 90)}`, cpuOf(p.pid)]));
const a = snap();
await new Promise((r) => setTimeout(r, 20_000));
const b = snap();
for (const k of Object.keys(b)) console.log(((b[k]! - (a[k] ?? 0)) / 20).toFixed(3), "cpu/s", "startup", (a[k] ?? 0).toFixed(2), k);
await stack.stop();
cleanup();
