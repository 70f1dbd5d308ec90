/** The conformance checker the end-to-end suite relies on catches what does not match the document. */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConformanceRecorder, type OpenApiDoc } from "../support/conformance.ts";

let server: Server;
let base: string;
beforeAll(async () => {
  // Answers every request with the same body: {data: {n: "x"}}.
  server = createServer((_request, response) => {
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ data: { n: "x" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const documentWhere = (n: object): OpenApiDoc => ({
  paths: {
    "/a/{id}": {
      get: {
        parameters: [{ name: "id", in: "path", schema: { type: "string", pattern: "^0x" } }],
        responses: { "200": { content: { "application/json": { schema: { $ref: "#/components/schemas/R" } } } } },
      },
    },
  },
  components: { schemas: { R: { type: "object", properties: { data: { type: "object", properties: { n } } } } } },
});

describe("ConformanceRecorder", () => {
  it("records a conforming exchange as its operation", async () => {
    const recorder = new ConformanceRecorder(documentWhere({ type: "string" }));
    await recorder.fetch(new Request(`${base}/a/0x12`));
    expect(recorder.problems).toEqual([]);
    expect([...recorder.exercised]).toEqual(["get /a/{id}"]);
  });

  it("names a response body, a path parameter and an operation that do not match", async () => {
    const recorder = new ConformanceRecorder(documentWhere({ type: "integer" }));
    await recorder.fetch(new Request(`${base}/a/zz`));
    await recorder.fetch(new Request(`${base}/b`));
    expect(recorder.problems).toEqual([
      expect.stringMatching(/^GET \/a\/zz -> 200 response: .*must be integer/),
      expect.stringMatching(/^GET \/a\/zz -> 200 parameter id: .*must match pattern/),
      "GET /b -> 200: no such operation in the document",
    ]);
    expect(recorder.exercised.size).toBe(0);
  });
});
