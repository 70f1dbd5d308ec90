import { readFileSync } from "node:fs";
import setup from "../test/support/global-setup.ts";
const cleanup = await setup();
const { startStack } = await import("../test/support/stack.ts");
const { schemaInput } = await import("../test/devnode/fixtures.ts");
function cpuOf(pid: number): number {
  try { const st = readFileSync(`/proc/${pid}/stat`, "utf8"); const r = st.slice(st.lastIndexOf(")") + 2).split(" "); return (Number(r[11]) + Number(r[12])) / 100; } catch { return NaN; }
}
const stack = await startStack({ api: process.argv[2] === "api", env: process.env.CHAINLOG ? { CHAIN_LOGGING: "on" } : process.env.PROF_DIR ? { NODE_OPTIONS: "--require /tmp/profkit/cpuprof.cjs", PROF_OUT: process.env.PROF_DIR, PROF_MS: process.env.PROF_MS ?? "0" } : {} });
const snap = () => Object.fromEntries(stack.processes().map((p) => [`${p.pid} ${readFileSync(`/proc/${p.pid}/cmdline`, "utf8").replace(/\0/g, " ").slice(0, 80)}`, cpuOf(p.pid)]));
const N = 200;
const counts = new Map<string, number>();
const realFetch = globalThis.fetch;
globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => { const u = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url); const k = u.port + u.pathname.slice(0, 20); counts.set(k, (counts.get(k) ?? 0) + 1); return realFetch(input, init); }) as typeof fetch;
const a = snap(); const me0 = process.cpuUsage(); const t0 = Date.now();
for (let i = 0; i < N; i++) await stack.send(schemaInput(`s${i}.example`), 0);
const wall = Date.now() - t0; const me = process.cpuUsage(me0);
const b = snap();
console.log("client requests", JSON.stringify([...counts]), "node port", stack.ports.node, "chain", stack.ports.chain);
console.log("per input wall ms", (wall / N).toFixed(1), "test process cpu ms", ((me.user + me.system) / 1000 / N).toFixed(2));
for (const k of Object.keys(b)) { const d = (b[k]! - (a[k] ?? 0)) * 1000 / N; if (d > 0.05) console.log(d.toFixed(2), "ms cpu/input", k); }
if (process.env.METRICS) console.log((await (await fetch(stack.urls.node + "/metrics")).text()).split("\n").filter((l) => !l.startsWith("#") && /request|http/i.test(l)).join("\n"));
if (process.env.CHAINLOG) { const { cpSync } = await import("node:fs"); cpSync(stack.dataDir + "/logs", "/tmp/chainlogs", { recursive: true }); }
await stack.stop();
cleanup();
