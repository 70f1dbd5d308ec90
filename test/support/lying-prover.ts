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
 *
 * The others show what an honest prover shows and ask for a statement that is not the canonical one for
 * the bucket they name ("mid", `[100, 1000)`), each of which attestor-core alone signs for 4321.987:
 *
 * - `cut`: the bucket's pattern cut before its closing delimiter, which `432`, a prefix of the value, satisfies;
 * - `widened`: the pattern of `[100, 10000)` under the statement `[100, 1000)`;
 * - `arbitrary`: a pattern of its own (the key alone);
 * - `unnamed`: the canonical pattern of the true bucket with no statement in the context.
 *
 * And one about a nullifier (test/attestor/nullifier.e2e.test.ts): `other-account` blinds `ACC-9999`
 * whatever account the answer names, to get a fresh nullifier for an account already bound.
 */
import { createRequire } from "node:module";
import type { Span } from "../../common/revealed-response.ts";
import { claimParameters, fieldPattern } from "../../common/tls-claim.ts";
import { honestPlan, serveProver, type ProverPlan } from "../../attestor/prover-core.ts";

// A liar skips its own client's check of the receipt (which would see the hidden bytes and stop): only the
// attestor's judgement is under test.
const http = (createRequire(import.meta.url)("@reclaimprotocol/attestor-core/lib/providers") as { providers: { http: { assertValidProviderReceipt(): unknown } } }).providers.http;
http.assertValidProviderReceipt = () => ({ extractedParameters: {} });

type Lie = { hide?(answer: string): Span[]; label?: string; ask?: NonNullable<ProverPlan["ask"]>; account?: string };

/** Asks for `pattern` under the honest statement: the parameters say one thing, the context another. */
const askWith =
  (pattern: (field: string) => string): NonNullable<ProverPlan["ask"]> =>
  (claim) => ({
    parameters: { ...claimParameters(claim), responseMatches: [{ type: "regex", value: pattern(claim.field) }] },
    statement: { field: claim.field, range: claim.range },
  });
const MID = { lo: "100", hi: "1000", hiInclusive: false };

const LIES: Record<string, Lie> = {
  truncate: { hide: (a) => at(a, "1.987", 0, 5), label: "mid" },
  middle: { hide: (a) => at(a, "4321.987", 1, 3), label: "low" },
  key: { hide: (a) => [{ from: a.indexOf("4321.987"), to: a.indexOf("450,") }], label: "mid" },
  nested: { hide: (a) => [{ from: a.indexOf('{"data":{') + 9, to: a.indexOf('"balance":450') }], label: "mid" },
  cut: { label: "mid", ask: askWith((field) => fieldPattern(field, MID).replace(/\[,\}\\\]\\s\]$/, "")) },
  widened: { label: "mid", ask: askWith((field) => fieldPattern(field, { ...MID, hi: "10000" })) },
  arbitrary: { label: "mid", ask: askWith(() => '"balance"\\s*:') },
  unnamed: { ask: (claim) => ({ parameters: claimParameters(claim), statement: undefined }) },
  "other-account": { account: "ACC-9999" },
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

/** The honest plan, with the lie's hidden spans (in the body), label and statement in its place. */
const lyingPlan: ProverPlan = {
  hide(answer, field, _mode, accountField) {
    const honest = honestPlan.hide(answer, field, "zk", accountField);
    if (lie.hide === undefined) return honest;
    const body = answer.indexOf("\r\n\r\n");
    return [...honest.filter((s) => s.to <= body), ...lie.hide(answer)].sort((a, b) => a.from - b.from);
  },
  label: (token, definition) => lie.label ?? honestPlan.label(token, definition),
  ...(lie.ask === undefined ? {} : { ask: lie.ask }),
  ...(lie.account === undefined ? {} : { account: () => lie.account as string }),
};

serveProver(lyingPlan);
