/** The committed client types are exactly what the routes' declarations generate today. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLIENT_SCHEMA_PATH, generateClientSchema } from "../../scripts/lib/client-schema.ts";

describe("client/schema.d.ts", () => {
  it("is up to date with the api's OpenAPI document (else: npm run client:generate)", async () => {
    expect(readFileSync(CLIENT_SCHEMA_PATH, "utf8")).toBe(await generateClientSchema());
  });
});
