import { writeFileSync } from "node:fs";
export default class TimelineReporter {
  rows = new Map();
  t0 = Date.now();
  row(m) { const k = m.moduleId; if (!this.rows.has(k)) this.rows.set(k, { name: k.replace(/.*\/(main|wt)\//, ""), project: m.project.name }); return this.rows.get(k); }
  onTestModuleQueued(m) { this.row(m).queued = (Date.now() - this.t0) / 1000; }
  onTestModuleCollected(m) { this.row(m).collected = (Date.now() - this.t0) / 1000; }
  onTestModuleStart(m) { this.row(m).start = (Date.now() - this.t0) / 1000; }
  onTestModuleEnd(m) { const r = this.row(m); r.end = (Date.now() - this.t0) / 1000; const d = m.diagnostic(); Object.assign(r, { env: d.environmentSetupDuration, prepare: d.prepareDuration, collect: d.collectDuration, setup: d.setupDuration, duration: d.duration }); }
  onTestRunEnd() { writeFileSync(process.env.TIMELINE_FILE ?? "/work/runs/timeline.json", JSON.stringify({ rows: [...this.rows.values()] }, null, 1)); }
}
