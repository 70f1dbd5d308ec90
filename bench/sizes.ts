/** The sizes `npm run bench` knows, apart from the rig so that argument parsing loads nothing heavy. */
export const SIZES = ["full", "ci"] as const;
export type BenchSize = (typeof SIZES)[number];
