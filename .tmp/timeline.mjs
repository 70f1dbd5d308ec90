import { readFileSync } from "node:fs";
const r = JSON.parse(readFileSync(process.argv[2], "utf8"));
const t0 = r.startTime;
const files = r.testResults.map((f) => ({ name: f.name.replace(/.*\/(main|wt)\//, ""), s: (f.startTime - t0) / 1000, e: (f.endTime - t0) / 1000, tests: f.assertionResults.length, sumTests: f.assertionResults.reduce((a, x) => a + (x.duration ?? 0), 0) / 1000 })).sort((a, b) => a.s - b.s);
const workers = [];
for (const f of files) {
  let best = -1;
  for (let i = 0; i < workers.length; i++) if (workers[i].end <= f.s + 0.001 && (best < 0 || workers[i].end > workers[best].end)) best = i;
  if (best < 0) { workers.push({ end: 0, files: [], gaps: 0 }); best = workers.length - 1; }
  const w = workers[best]; w.gaps += f.s - w.end; w.files.push({ ...f, gap: f.s - w.end }); w.end = f.e;
}
const end = Math.max(...files.map((f) => f.e));
console.log("wall", end.toFixed(0), "workers inferred", workers.length);
for (const [i, w] of workers.entries()) console.log(`worker ${i}: files ${w.files.length} busy ${(w.files.reduce((a, f) => a + f.e - f.s, 0)).toFixed(0)} gaps ${w.gaps.toFixed(0)} end ${w.end.toFixed(0)}`);
const inFile = files.reduce((a, f) => a + (f.e - f.s), 0), inTests = files.reduce((a, f) => a + f.sumTests, 0);
console.log("file time", inFile.toFixed(0), "test time", inTests.toFixed(0), "setup/hooks in file", (inFile - inTests).toFixed(0));
const big = workers.flatMap((w) => w.files).sort((a, b) => b.gap - a.gap).slice(0, 12);
for (const f of big) console.log("gap before", f.gap.toFixed(1), f.name);
const hooks = files.map((f) => ({ n: f.name, h: f.e - f.s - f.sumTests })).sort((a, b) => b.h - a.h).slice(0, 25);
for (const f of hooks) console.log("outside tests", f.h.toFixed(1), f.n);
console.log("---- per worker sequence (start, gap, dur, name)");
for (const [i, w] of workers.entries()) { console.log("worker", i); for (const f of w.files) if (f.gap > 3 || f.e - f.s > 15) console.log(`  ${f.s.toFixed(0).padStart(5)} gap ${f.gap.toFixed(1).padStart(5)} dur ${(f.e - f.s).toFixed(1).padStart(5)} ${f.name}`); }
