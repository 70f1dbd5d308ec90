/**
 * Bucket rules (DECISIONS.md section 4). A bin holds its lower edge: a boundary value belongs to the
 * upper range. With one label fewer than boundaries the last bin is closed on both ends; with as many
 * labels as boundaries the last label is open-ended upwards.
 */
export interface BucketDefinition {
  boundaries: number[];
  labels: string[];
}

/** Returns why a definition is invalid, or `undefined` when it is valid. */
export function bucketDefinitionProblem(def: BucketDefinition): string | undefined {
  const { boundaries, labels } = def;
  if (boundaries.length === 0) return "boundaries must not be empty";
  for (let i = 0; i < boundaries.length; i++) {
    const b = boundaries[i] as number;
    if (!Number.isFinite(b)) return `boundaries[${i}] is not a finite number`;
    if (i > 0 && !(b > (boundaries[i - 1] as number))) return "boundaries must be strictly ascending";
  }
  if (labels.length === 0) return "labels must not be empty";
  const seen = new Set<string>();
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] as string;
    if (label.length === 0) return `labels[${i}] is empty`;
    if (seen.has(label)) return `labels[${i}] repeats "${label}"`;
    seen.add(label);
  }
  if (labels.length !== boundaries.length && labels.length !== boundaries.length - 1) {
    return `labels must number boundaries or boundaries - 1 (got ${labels.length} labels for ${boundaries.length} boundaries)`;
  }
  return undefined;
}

/** The label whose bin holds `value`, or `undefined` when it falls outside every bin. */
export function bucketOf(value: number, def: BucketDefinition): string | undefined {
  const { boundaries, labels } = def;
  if (!Number.isFinite(value) || boundaries.length === 0 || value < (boundaries[0] as number)) return undefined;
  // Binary search for the last boundary <= value.
  let lo = 0;
  let hi = boundaries.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((boundaries[mid] as number) <= value) lo = mid;
    else hi = mid - 1;
  }
  if (lo < labels.length) {
    if (labels.length === boundaries.length || lo < boundaries.length - 1) return labels[lo];
  }
  // Closed last bin: the top boundary itself belongs to the last label when labels = boundaries - 1.
  if (labels.length === boundaries.length - 1 && value === boundaries[boundaries.length - 1]) {
    return labels[labels.length - 1];
  }
  return undefined;
}

export function sameBucketDefinition(a: BucketDefinition, b: BucketDefinition): boolean {
  return (
    a.boundaries.length === b.boundaries.length &&
    a.labels.length === b.labels.length &&
    a.boundaries.every((v, i) => v === b.boundaries[i]) &&
    a.labels.every((v, i) => v === b.labels[i])
  );
}
