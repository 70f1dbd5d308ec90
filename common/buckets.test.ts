import { describe, expect, it } from "vitest";
import { bucketDefinitionProblem, bucketOf, sameBucketDefinition, type BucketDefinition } from "./buckets.ts";

const closed: BucketDefinition = { boundaries: [0, 10, 20], labels: ["low", "high"] };
const open: BucketDefinition = { boundaries: [0, 10, 20], labels: ["low", "mid", "top"] };
const single: BucketDefinition = { boundaries: [5], labels: ["any"] };

describe("bucketOf", () => {
  const cases: [string, BucketDefinition, number, string | undefined][] = [
    ["below the first boundary", closed, -0.001, undefined],
    ["the first boundary belongs to the first bin", closed, 0, "low"],
    ["inside the first bin", closed, 9.999, "low"],
    ["a boundary value belongs to the upper bin", closed, 10, "high"],
    ["inside the last closed bin", closed, 15, "high"],
    ["the top boundary closes the last bin", closed, 20, "high"],
    ["above a closed last bin", closed, 20.0001, undefined],
    ["open-ended: boundary value belongs to the upper bin", open, 10, "mid"],
    ["open-ended: the top boundary starts the last bin", open, 20, "top"],
    ["open-ended: far above", open, 1e12, "top"],
    ["open-ended: below the first boundary", open, -1, undefined],
    ["single open bin: its lower edge", single, 5, "any"],
    ["single open bin: above", single, 1e6, "any"],
    ["single open bin: below", single, 4.9, undefined],
    ["NaN is in no bin", open, Number.NaN, undefined],
    ["Infinity is in no bin", open, Number.POSITIVE_INFINITY, undefined],
    ["negative boundaries", { boundaries: [-10, -5, 0], labels: ["a", "b"] }, -5, "b"],
  ];
  it.each(cases)("%s", (_name, def, value, expected) => {
    expect(bucketOf(value, def)).toBe(expected);
  });
});

describe("bucketDefinitionProblem", () => {
  const cases: [string, BucketDefinition, string | undefined][] = [
    ["closed definition is valid", closed, undefined],
    ["open-ended definition is valid", open, undefined],
    ["one boundary, one label is valid", single, undefined],
    ["empty boundaries", { boundaries: [], labels: ["a"] }, "boundaries must not be empty"],
    ["equal boundaries", { boundaries: [0, 0], labels: ["a"] }, "boundaries must be strictly ascending"],
    ["descending boundaries", { boundaries: [10, 0], labels: ["a"] }, "boundaries must be strictly ascending"],
    ["NaN boundary", { boundaries: [0, Number.NaN], labels: ["a"] }, "boundaries[1] is not a finite number"],
    ["infinite boundary", { boundaries: [0, Number.POSITIVE_INFINITY], labels: ["a"] }, "boundaries[1] is not a finite number"],
    ["no labels", { boundaries: [0, 1], labels: [] }, "labels must not be empty"],
    ["empty label", { boundaries: [0, 1], labels: [""] }, "labels[0] is empty"],
    ["repeated label", { boundaries: [0, 1, 2], labels: ["a", "a"] }, 'labels[1] repeats "a"'],
    [
      "too few labels",
      { boundaries: [0, 1, 2, 3], labels: ["a", "b"] },
      "labels must number boundaries or boundaries - 1 (got 2 labels for 4 boundaries)",
    ],
    [
      "too many labels",
      { boundaries: [0, 1], labels: ["a", "b", "c"] },
      "labels must number boundaries or boundaries - 1 (got 3 labels for 2 boundaries)",
    ],
  ];
  it.each(cases)("%s", (_name, def, expected) => {
    expect(bucketDefinitionProblem(def)).toBe(expected);
  });
});

describe("sameBucketDefinition", () => {
  it.each([
    ["identical", closed, { boundaries: [0, 10, 20], labels: ["low", "high"] }, true],
    ["another boundary", closed, { boundaries: [0, 10, 21], labels: ["low", "high"] }, false],
    ["another label", closed, { boundaries: [0, 10, 20], labels: ["low", "HIGH"] }, false],
    ["another count", closed, open, false],
  ] as const)("%s", (_name, a, b, expected) => {
    expect(sameBucketDefinition(a, { boundaries: [...b.boundaries], labels: [...b.labels] })).toBe(expected);
  });
});
