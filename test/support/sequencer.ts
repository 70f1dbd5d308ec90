/**
 * The order vitest starts test files in (vitest.config.ts): the longest first, so that the two workers end
 * together instead of one running a long suite alone at the end. vitest orders by its own cache of the
 * last run's durations, and without one (a fresh clone: CI) by file size, larger first, which put the
 * longest suite (the bench's, a short file) last. The durations come from vitest's cache when it has
 * them, else from test/support/file-weights.json (a CI run's, refreshed with `npm run test:times --
 * REPORT --weights test/support/file-weights.json`); a file in neither goes first, as vitest does with
 * files it does not know.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { fileWeightsSchema } from "../../scripts/lib/test-budget.ts";

const WEIGHTS_FILE = new URL("./file-weights.json", import.meta.url);

function recordedSeconds(): Record<string, number> {
  try {
    return fileWeightsSchema.parse(JSON.parse(readFileSync(WEIGHTS_FILE, "utf8"))).seconds;
  } catch {
    // A table that cannot be read orders nothing: vitest's own order applies.
    return {};
  }
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = recordedSeconds();
    const seconds = (spec: TestSpecification): number | undefined => {
      const file = relative(this.ctx.config.root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      return cached !== undefined ? cached.duration / 1000 : recorded[file];
    };
    const known = await super.sort(files);
    const weighted = known.map((spec, order) => ({ spec, order, s: seconds(spec) }));
    weighted.sort((a, b) => (a.s === undefined ? -1 : 0) - (b.s === undefined ? -1 : 0) || (b.s ?? 0) - (a.s ?? 0) || a.order - b.order);
    return weighted.map((w) => w.spec);
  }
}
