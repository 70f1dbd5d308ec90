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
      ]),
    ),
  );
  for (const [field, definition] of Object.entries(schema.bucket_definitions)) {
    view.append(card(`Buckets of ${field}`, bucketRanges(definition), bucketTable(definition)));
  }
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

function bucketTable(definition: BucketDefinition): HTMLElement {
  return table(
    ["Label", "From (inclusive)", "To (exclusive)"],
    definition.labels.map((label, i) => [label, formatNumber(definition.boundaries[i] ?? NaN), formatNumber(definition.boundaries[i + 1] ?? NaN)]),
  );
}

function formatNumber(value: number): string {
  return Number.isFinite(value) ? value.toLocaleString("en-US") : "—";
}
