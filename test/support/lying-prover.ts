// SPDX-License-Identifier: AGPL-3.0-only
/**
 * A dishonest prover for tests: attestor/prover-core.ts with a plan that hides part of what the attestor
 * must see and claims the bucket of what is left. `LIE` picks the lie, for an answer whose body holds
 * `"balance":4321.987,"limit":450` (test/attestor/statement.e2e.test.ts):
 *
 * - `truncate`: hides `1.987`, so attestor-core alone would read 432 and sign "mid";
 * - `middle`: hides the digits `321`, so it would read 4.987 and sign "low";
 * - `key`: hides `4321.987,"limit":`, so it would read `"balance":450` and sign "mid";
 * - `nested`: hides everything between `{"data":{` and another object's `"balance":450`, so attestor-core
 *   alone would read `"data":{"balance":450` and sign "mid".
 */
import { createRequire } from "node:module";
import type { Span } from "../../common/revealed-response.ts";
import { honestPlan, serveProver, type ProverPlan } from "../../attestor/prover-core.ts";

// A liar skips its own client's check of the receipt (which would see the hidden bytes and stop): only the
// attestor's judgement is under test.
const http = (createRequire(import.meta.url)("@reclaimprotocol/attestor-core/lib/providers") as { providers: { http: { assertValidProviderReceipt(): unknown } } }).providers.http;
http.assertValidProviderReceipt = () => ({ extractedParameters: {} });

const LIES: Record<string, { hide(answer: string): Span[]; label: string }> = {
  truncate: { hide: (a) => at(a, "1.987", 0, 5), label: "mid" },
  middle: { hide: (a) => at(a, "4321.987", 1, 3), label: "low" },
  key: { hide: (a) => [{ from: a.indexOf("4321.987"), to: a.indexOf("450,") }], label: "mid" },
  nested: { hide: (a) => [{ from: a.indexOf('{"data":{') + 9, to: a.indexOf('"balance":450') }], label: "mid" },
};

function at(answer: string, text: string, offset: number, length: number): Span[] {
  const from = answer.indexOf(text) + offset;
  return [{ from, to: from + length }];
}

const lie = LIES[process.env.LIE ?? ""];
if (lie === undefined) {
  console.error(`LIE must be one of ${Object.keys(LIES).join(", ")}`);
  process.exit(2);
}

/** The honest plan's hidden spans outside the lie's region of interest, plus the lie. */
const lyingPlan: ProverPlan = {
  hide(answer, field) {
    const region = { from: answer.indexOf("\r\n\r\n"), to: answer.length };
    const honest = honestPlan.hide(answer, field, "zk").filter((s) => s.to <= region.from);
    return [...honest, ...lie.hide(answer)].sort((a, b) => a.from - b.from);
  },
  label: () => lie.label,
};

serveProver(lyingPlan);
