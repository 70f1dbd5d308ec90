import type { InputParams } from "../../common/wire.ts";

export const SCHEMA: InputParams["register_schema"] = {
  provider: "http",
  flowType: "web",
  domain: "bank.example",
  bucketDefinitions: { balance: { boundaries: [0, 100, 1000], labels: ["low", "mid"] } },
  dataKeys: ["balance"],
  freshnessHalfLife: 3600,
};

export const SCHEMA_2: InputParams["register_schema"] = {
  provider: "http",
  flowType: "api",
  domain: "score.example",
  bucketDefinitions: {
    score: { boundaries: [0, 500, 700], labels: ["poor", "fair", "good"] },
    age: { boundaries: [18, 65], labels: ["adult"] },
  },
  dataKeys: ["score", "age"],
  freshnessHalfLife: 86400,
  name: "Credit score",
  description: "A credit bureau's score",
};

/** base64 of 32 bytes 0x01..0x20 */
export const PUBLIC_KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => i + 1)).toString("base64");

export const UNKNOWN_ID = `0x${"ab".repeat(32)}` as const;
