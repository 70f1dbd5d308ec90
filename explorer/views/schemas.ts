/** Schemas: the registry list, and one schema with its bucket definitions drawn as ranges. */
import { get } from "../api.ts";
import { card, facts, h, ID_RE, problem, schemaLink, short, svg, table } from "../dom.ts";

interface SchemaSummary {
  schema_id: string;
  name: string;
  description: string;
  provider_type: string;
}

interface BucketDefinition {
  boundaries: number[];
  labels: string[];
}

interface SchemaDetail extends SchemaSummary {
  bucket_definitions: Record<string, BucketDefinition>;
  data_keys: string[];
  freshness_half_life: number;
  bucket_counts: Record<string, Record<string, number>>;
}

export async function schemasView(view: HTMLElement): Promise<void> {
  const schemas = await get<SchemaSummary[]>("/api/core/schemas");
  view.append(h("h1", {}, "Schemas"), h("p", { class: "lead" }, `${schemas.length} provider schema${schemas.length === 1 ? "" : "s"} registered in the rollup.`));
  if (schemas.length === 0) {
    view.append(card("No schemas yet", h("p", {}, "An admin registers one with POST /api/core/provider-schema.")));
    return;
  }
  view.append(
    card(
      "Registry",
      table(
        ["Schema", "Name", "Provider", "Description"],
        schemas.map((s) => [schemaLink(s.schema_id), s.name === "" ? h("span", { class: "muted" }, "—") : s.name, s.provider_type, s.description]),
      ),
    ),
  );
}

export async function schemaView(view: HTMLElement, schemaId: string): Promise<void> {
  if (!ID_RE.test(schemaId)) {
    view.append(problem("Not a schema id", `“${schemaId}” is not a schema id: a schema id is 0x followed by 64 hex digits.`));
    return;
  }
  const schema = await get<SchemaDetail>(`/api/core/schemas/${schemaId}`);
  view.append(
    h("h1", {}, schema.name === "" ? "Schema" : schema.name, " ", h("span", { class: "mono muted small" }, short(schema.schema_id))),
    card(
      "Overview",
      facts([
        ["Schema id", h("span", { class: "mono" }, schema.schema_id)],
        ["Provider", schema.provider_type],
        ["Description", schema.description === "" ? h("span", { class: "muted" }, "—") : schema.description],
        ["Bucketed fields", String(Object.keys(schema.bucket_definitions).length)],
        ["Data keys", schema.data_keys.length === 0 ? h("span", { class: "muted" }, "—") : h("span", { class: "mono" }, schema.data_keys.join(", "))],
        ["Freshness half-life", halfLife(schema.freshness_half_life)],
      ]),
    ),
  );
  for (const [field, definition] of Object.entries(schema.bucket_definitions)) {
    const counts = schema.bucket_counts[field] ?? {};
    view.append(card(`Buckets of ${field}`, bucketRanges(definition), bucketCounts(definition, counts), bucketTable(definition, counts)));
  }
}

function halfLife(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds.toLocaleString("en-US")} s`;
}

/** Attestations per bucket as horizontal bars, longest = the most attested bucket. */
function bucketCounts(definition: BucketDefinition, counts: Record<string, number>): SVGElement {
  const most = Math.max(1, ...definition.labels.map((label) => counts[label] ?? 0));
  const row = 26;
  const chart = svg("svg", { viewBox: `0 0 760 ${definition.labels.length * row + 8}`, class: "counts", role: "img", "aria-label": "attestations per bucket" });
  definition.labels.forEach((label, i) => {
    const n = counts[label] ?? 0;
    const y = 4 + i * row;
    chart.append(
      svg("text", { x: 110, y: y + 16, "text-anchor": "end", class: "band-label-dark" }, label),
      svg("rect", { x: 120, y, width: Math.max(2, (480 * n) / most), height: row - 8, rx: 3, fill: PALETTE[i % PALETTE.length] ?? "#888" }),
      svg("text", { x: 128 + (480 * n) / most, y: y + 16, class: "count-label" }, `${n.toLocaleString("en-US")} attestation${n === 1 ? "" : "s"}`),
    );
  });
  return chart;
}

const PALETTE = ["#4f6bed", "#2aa198", "#e6a23c", "#d9534f", "#8e6bd8", "#3aa655", "#c0568c", "#607d8b"];

/** Each bucket as a band between its boundaries; widths are even so narrow ranges stay readable. */
function bucketRanges(definition: BucketDefinition): SVGElement {
  const n = definition.labels.length;
  const width = 720;
  const band = width / Math.max(1, n);
  const chart = svg("svg", { viewBox: `0 0 ${width + 40} 70`, class: "ranges", role: "img", "aria-label": "bucket ranges" });
  definition.labels.forEach((label, i) => {
    const x = 20 + i * band;
    chart.append(
      svg("rect", { x, y: 8, width: band - 2, height: 30, rx: 4, fill: PALETTE[i % PALETTE.length] ?? "#888" }),
      svg("text", { x: x + band / 2, y: 28, "text-anchor": "middle", class: "band-label" }, label),
    );
  });
  definition.boundaries.forEach((boundary, i) => {
    const x = 20 + i * band;
    chart.append(
      svg("line", { x1: x, x2: x, y1: 40, y2: 48, class: "tick" }),
      svg("text", { x, y: 62, "text-anchor": "middle", class: "tick-label" }, formatNumber(boundary)),
    );
  });
  return chart;
}

function bucketTable(definition: BucketDefinition, counts: Record<string, number>): HTMLElement {
  return table(
    ["Label", "From (inclusive)", "To (exclusive)", "Attestations"],
    definition.labels.map((label, i) => [
      label,
      formatNumber(definition.boundaries[i] ?? NaN),
      formatNumber(definition.boundaries[i + 1] ?? NaN),
      (counts[label] ?? 0).toLocaleString("en-US"),
    ]),
  );
}

function formatNumber(value: number): string {
  return Number.isFinite(value) ? value.toLocaleString("en-US") : "—";
}
