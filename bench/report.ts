/** The bench's results: figures (each a ratio to a floor measured in the same run), the table and the chart. */

export interface Floor {
  name: string;
  value: number;
}

export interface Figure {
  section: "inspect" | "scale" | "advance" | "memory" | "api" | "writes" | "riscv64" | "attestor" | "onchain" | "nullifier";
  name: string;
  unit: string;
  value: number;
  /** The primary floor; `ratio` is value / floor.value. */
  floor: Floor;
  ratio: number;
  /** A second floor, when the issue names two (inspect: sqlite beside the echo server). */
  alt?: Floor & { ratio: number };
  target?: { text: string; met: boolean };
}

export interface ScalePoint {
  stored: number;
  p50: number;
  p99: number;
  sqliteP50: number;
}

export interface BenchReport {
  size: string;
  startedAt: string;
  finishedAt: string;
  command: string;
  machine: { cpus: number; cpuModel: string; memoryMiB: number; node: string; platform: string };
  seeding: { stored: number; seconds: number; fileBytes: number; how: string }[];
  notes: string[];
  figures: Figure[];
  scale: ScalePoint[];
}

export function figure(
  section: Figure["section"],
  name: string,
  unit: string,
  value: number,
  floor: Floor,
  extra: { alt?: Floor; target?: { text: string; met: (value: number, ratio: number) => boolean } } = {},
): Figure {
  const ratio = value / floor.value;
  const out: Figure = { section, name, unit, value, floor, ratio };
  if (extra.alt !== undefined) out.alt = { ...extra.alt, ratio: value / extra.alt.value };
  if (extra.target !== undefined) out.target = { text: extra.target.text, met: extra.target.met(value, ratio) };
  return out;
}

function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** A plain-text table (also valid Markdown), one row per figure. */
export function formatTable(figures: readonly Figure[]): string {
  const header = ["section", "figure", "value", "unit", "floor", "floor value", "ratio", "2nd floor (ratio)", "target", "met"];
  const rows = figures.map((f) => [
    f.section,
    f.name,
    fmt(f.value),
    f.unit,
    f.floor.name,
    fmt(f.floor.value),
    `${fmt(f.ratio)}x`,
    f.alt === undefined ? "" : `${f.alt.name} ${fmt(f.alt.value)} (${fmt(f.alt.ratio)}x)`,
    f.target?.text ?? "",
    f.target === undefined ? "" : f.target.met ? "yes" : "NO",
  ]);
  const numeric = new Set([2, 5, 6]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((cell, c) => pad(cell, widths[c] ?? 0, numeric.has(c))).join(" | ")} |`;
  const rule = `|${widths.map((w, c) => (numeric.has(c) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

/**
 * Latency against stored attestations (log x axis), as a self-contained SVG: p50 and p99 of
 * attestations_by_owner through the devnode, and p50 of the same query straight on SQLite.
 */
export function scaleChart(points: readonly ScalePoint[], title: string): string {
  const width = 720;
  const height = 420;
  const m = { left: 70, right: 190, top: 50, bottom: 60 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const xs = points.map((p) => Math.log10(p.stored));
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  // Log y axis too: SQLite's tenths of a millisecond and the p99's tens must both be readable.
  const values = points.flatMap((p) => [p.p50, p.p99, p.sqliteP50]).filter((v) => v > 0);
  const yLo = Math.floor(Math.log10(Math.min(...values, 1)));
  const yHi = Math.max(yLo + 1, Math.ceil(Math.log10(Math.max(...values, 1))));
  const x = (stored: number) => m.left + (xMax === xMin ? plotW / 2 : ((Math.log10(stored) - xMin) / (xMax - xMin)) * plotW);
  const y = (ms: number) => m.top + plotH - ((Math.log10(Math.max(ms, 10 ** yLo)) - yLo) / (yHi - yLo)) * plotH;
  const series: { name: string; color: string; dash: string; value: (p: ScalePoint) => number }[] = [
    { name: "p99 via devnode", color: "#d62728", dash: "6 4", value: (p) => p.p99 },
    { name: "p50 via devnode", color: "#1f77b4", dash: "", value: (p) => p.p50 },
    { name: "p50 SQLite only", color: "#2ca02c", dash: "2 3", value: (p) => p.sqliteP50 },
  ];
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  parts.push(`<text x="${m.left}" y="24" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  for (let decade = yLo; decade <= yHi; decade++) {
    for (const f of decade < yHi ? [1, 2, 5] : [1]) {
      const v = f * 10 ** decade;
      const yy = y(v).toFixed(1);
      parts.push(`<line x1="${m.left}" y1="${yy}" x2="${m.left + plotW}" y2="${yy}" stroke="${f === 1 ? "#d0d0d0" : "#eeeeee"}"/>`);
      parts.push(`<text x="${m.left - 8}" y="${yy}" text-anchor="end" dominant-baseline="middle">${Number(v.toPrecision(1))}</text>`);
    }
  }
  for (const p of points) {
    const xx = x(p.stored).toFixed(1);
    parts.push(`<line x1="${xx}" y1="${m.top}" x2="${xx}" y2="${m.top + plotH}" stroke="#f0f0f0"/>`);
    parts.push(`<text x="${xx}" y="${m.top + plotH + 18}" text-anchor="middle">${p.stored.toLocaleString("en-US")}</text>`);
  }
  parts.push(`<line x1="${m.left}" y1="${m.top + plotH}" x2="${m.left + plotW}" y2="${m.top + plotH}" stroke="#333"/>`);
  parts.push(`<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${m.top + plotH}" stroke="#333"/>`);
  parts.push(`<text x="${m.left + plotW / 2}" y="${height - 16}" text-anchor="middle">attestations stored (log scale)</text>`);
  parts.push(`<text transform="translate(18 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">latency (ms, log scale)</text>`);
  series.forEach((s, i) => {
    const path = points.map((p, j) => `${j === 0 ? "M" : "L"}${x(p.stored).toFixed(1)},${y(s.value(p)).toFixed(1)}`).join(" ");
    parts.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash === "" ? "" : ` stroke-dasharray="${s.dash}"`}/>`);
    for (const p of points) {
      parts.push(`<circle cx="${x(p.stored).toFixed(1)}" cy="${y(s.value(p)).toFixed(1)}" r="3.5" fill="${s.color}"><title>${escapeXml(`${s.name}: ${fmt(s.value(p))} ms at ${p.stored}`)}</title></circle>`);
    }
    const ly = m.top + 10 + i * 22;
    const lx = m.left + plotW + 20;
    parts.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 28}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dash === "" ? "" : ` stroke-dasharray="${s.dash}"`}/>`);
    parts.push(`<text x="${lx + 36}" y="${ly}" dominant-baseline="middle">${escapeXml(s.name)}</text>`);
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
