/**
 * The attestor's signed claim (DECISIONS.md sections 14 and 16): the shape a TLS attestor (Reclaim's
 * attestor-core) signs, and the one statement this project asks it to sign: "the JSON number at this
 * field of the provider's answer lies in this bucket's range". The range is the claim's regex; the value
 * itself is never extracted, so it is in no signed claim, no input and no notice.
 *
 * Pure functions only: the dapp checks claims with them deterministically, the provers build requests
 * with them and the attestor checks what it saw with them, so all three agree on every byte. Nothing
 * here imports attestor-core (AGPL-3.0): the format is re-implemented from its documented behaviour.
 */
import { keccak256, stringToBytes, type Address, type Hex } from "viem";
import { canonicalJson } from "./canonical.ts";
import { binRange, numberRangePattern, type DecimalRange } from "./range-pattern.ts";
import { documentOf, readRevealedField, type FieldToken, type Reading, type SeenRecord } from "./revealed-response.ts";
import { messageOf } from "./errors.ts";

/** How a schema's attestations are proven: `none` (the api's word) or `attestor` (signed TLS claims). */
export const PROOF_KINDS = ["none", "attestor"] as const;
export type ProofKind = (typeof PROOF_KINDS)[number];

/**
 * How much of the answer the attestor sees. `reveal`: the prover hands it the TLS keys of the server's
 * records and it reads the whole answer (fast). `zk`: it sees the body's skeleton and the proven value
 * only, and the prover proves in zero knowledge that the hidden bytes decrypt consistently (slower).
 * Both sign the same statement with the same parameters: the dapp cannot tell, and need not.
 */
export const PROOF_MODES = ["reveal", "zk"] as const;
export type ProofMode = (typeof PROOF_MODES)[number];

/** How many attestors a schema may require (`attestorQuorum`). */
export const MAX_QUORUM = 16;

/** The claim as the attestor signs it (attestor-core's ProviderClaimData). */
export interface TlsClaim {
  provider: string;
  /** Canonical JSON of the provider parameters (url, method, the range pattern, the field's path). */
  parameters: string;
  /** The address of the key that asked for the claim (a prover's key: not the attestation's owner). */
  owner: Address;
  timestampS: number;
  /** Canonical JSON: what the client bound the claim to (owner, schema, nonce), plus `providerHash`. */
  context: string;
  identifier: Hex;
  epoch: number;
}

/** One attestor's signature over one claim. */
export interface TlsProof {
  claim: TlsClaim;
  signature: Hex;
}

/**
 * `keccak256(provider \n parameters \n context)` with the context re-canonicalized, lower-case hex: the
 * claim's identifier as the attestor computes it.
 */
export function claimIdentifier(claim: Pick<TlsClaim, "provider" | "parameters" | "context">): Hex {
  return identifierOf(claim.provider, claim.parameters, claim.context.length > 0 ? canonicalJson(JSON.parse(claim.context) as unknown) : "");
}

/** `claimIdentifier` of a context that is canonical already (a compact batch rebuilds it so): no parse. */
export function identifierOf(provider: string, parameters: string, canonicalContext: string): Hex {
  return keccak256(stringToBytes(`${provider}\n${parameters}\n${canonicalContext}`));
}

/** The text the attestor signs with Ethereum's personal_sign: identifier, owner, timestamp, epoch. */
export function claimSignText(claim: Pick<TlsClaim, "owner" | "timestampS" | "epoch">, identifier: Hex): string {
  return `${identifier}\n${claim.owner.toLowerCase()}\n${claim.timestampS}\n${claim.epoch}`;
}

/**
 * A field path that a proof can name: dot-separated object keys of letters, digits, `_` and `-` (no
 * regex metacharacter, no dot). Array indexes are left out: the statement's path is a chain of keys.
 */
const PROOF_KEY_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** Why `field` cannot be proven, or undefined when it can. */
export function proofFieldProblem(field: string): string | undefined {
  const bad = field.split(".").find((segment) => !PROOF_KEY_RE.test(segment));
  return bad === undefined ? undefined : `"${field}" cannot be proven: each segment must be an object key of letters, digits, "_" or "-" (got "${bad}")`;
}

/** Patterns already built: one costs ~0.3 ms, and every proven claim needs its bucket's (api, dapp, compact batch). */
const fieldPatterns = new Map<string, string>();
const FIELD_PATTERN_MEMO = 1_024;

/**
 * The regex the attestor runs over what it saw: the field's key chain, then a JSON number (or numeric
 * string) whose value lies in `range`, then a delimiter. No named group, so attestor-core extracts
 * nothing into the claim. The attestor process (attestor/server.ts) checks it against the field's own
 * token as well, read with a JSON parser, so the chain's `.*?` is only a reader's aid.
 */
export function fieldPattern(field: string, range: DecimalRange): string {
  const key = JSON.stringify([field, range.lo, range.hi, range.hiInclusive]);
  let pattern = fieldPatterns.get(key);
  if (pattern === undefined) {
    const chain = field.split(".").map((segment) => `"${segment}"\\s*:\\s*`).join("\\{.*?");
    const number = numberRangePattern(range);
    pattern = `${chain}(?:${number}|"(?:${number})")[,}\\]\\s]`;
    // Bounded: fields and ranges come from inputs and requests (any registered bin, any stated range), so an
    // unbounded memo would grow with whatever is sent; a schema's few bins fit many times over.
    if (fieldPatterns.size >= FIELD_PATTERN_MEMO) fieldPatterns.clear();
    fieldPatterns.set(key, pattern);
  }
  return pattern;
}

/** The JSON path that names the field (attestor-core's response redaction by JSON path). */
export function jsonPathOf(field: string): string {
  return `$.${field}`;
}

export interface ClaimRequest {
  url: string;
  method: "GET" | "POST";
  field: string;
  range: DecimalRange;
}

/** Public provider parameters (secret headers travel apart and are never signed). */
export interface ProviderParameters {
  url: string;
  method: "GET" | "POST";
  responseMatches: { type: "regex"; value: string }[];
  responseRedactions: { jsonPath: string }[];
}

/** The parameters of the statement "the number at `field` of `url`'s answer lies in `range`". */
export function claimParameters({ url, method, field, range }: ClaimRequest): ProviderParameters {
  return {
    url,
    method,
    responseMatches: [{ type: "regex", value: fieldPattern(field, range) }],
    responseRedactions: [{ jsonPath: jsonPathOf(field) }],
  };
}

/**
 * The statement a claim asks the attestor to sign, in words rather than a regex: the number at `field`
 * lies in `range`. It travels in the claim's context, so the signed claim says it plainly, and our
 * attestor signs only the response match that `fieldPattern(field, range)` makes for it.
 */
export interface RangeStatement {
  field: string;
  range: DecimalRange;
}

/**
 * The blind of a claim's nullifier (docs/nullifiers.md): B = r·P and R = r·G, and the field of the provider's
 * answer the account id was read at. In the signed context, so a nullifier is bound to the claim it was made
 * in: copied into another claim (a replay, or a front-run of its owner's input), it no longer matches what
 * that claim's attestors signed. The field is the one the attestors read the account at, so the dapp can
 * hold it to the schema's `accountIdField`: a prover that named another field (one whose value it
 * chooses) would get a fresh nullifier for the same account.
 */
export interface NullifierBinding {
  blinded: Hex;
  blindCommitment: Hex;
  accountField: string;
}

/** The context's key that carries the nullifier's binding. */
export const NULLIFIER_CONTEXT_KEY = "nullifier";

/**
 * The client's part of the context: the attestation's owner and schema, so a claim made for one
 * attestation cannot be replayed for another owner or schema; a nonce, so two claims in the same second
 * are two claims (the dapp refuses a signed claim it has seen); the range statement the claim asks
 * our attestor to sign; and, for a schema unique per account, the nullifier's blind B and R, which each
 * attestor checks against the account it saw before it evaluates its share and signs.
 */
export function claimContext(
  owner: Address,
  schemaId: Hex,
  nonce?: Hex,
  statement?: RangeStatement,
  nullifier?: NullifierBinding,
): { contextAddress: Address; contextMessage: Hex; nonce?: Hex; statement?: RangeStatement; nullifier?: NullifierBinding } {
  const context = { contextAddress: owner.toLowerCase() as Address, contextMessage: schemaId.toLowerCase() as Hex };
  return {
    ...context,
    ...(nonce === undefined ? {} : { nonce }),
    ...(statement === undefined ? {} : { statement: { field: statement.field, range: { ...statement.range } } }),
    ...(nullifier === undefined
      ? {}
      : { [NULLIFIER_CONTEXT_KEY]: { blinded: nullifier.blinded.toLowerCase() as Hex, blindCommitment: nullifier.blindCommitment.toLowerCase() as Hex, accountField: nullifier.accountField } }),
  };
}

/**
 * The nullifier binding a claim's context text names, or why it names none. Exactly `{blinded,
 * blindCommitment, accountField}`: two elements as 0x and 64 hex digits, and a field a proof can name
 * (`proofFieldProblem`): anything else is no binding.
 */
export function contextNullifierBinding(contextText: string): Reading<NullifierBinding> {
  let context: unknown;
  try {
    context = JSON.parse(contextText);
  } catch {
    return { ok: false, reason: "the claim's context is not JSON" };
  }
  const binding = context !== null && typeof context === "object" && !Array.isArray(context) ? (context as Record<string, unknown>)[NULLIFIER_CONTEXT_KEY] : undefined;
  if (binding === undefined) return { ok: false, reason: "the claim's signed context binds no nullifier blind (B and R)" };
  const element = /^0x[0-9a-fA-F]{64}$/;
  if (binding === null || typeof binding !== "object" || Array.isArray(binding)) return { ok: false, reason: "the claim's nullifier binding is not an object" };
  const { blinded, blindCommitment, accountField, ...extra } = binding as Record<string, unknown>;
  if (
    Object.keys(extra).length > 0 ||
    typeof blinded !== "string" ||
    typeof blindCommitment !== "string" ||
    !element.test(blinded) ||
    !element.test(blindCommitment) ||
    typeof accountField !== "string" ||
    proofFieldProblem(accountField) !== undefined
  ) {
    return { ok: false, reason: 'the claim\'s nullifier binding must be {"blinded": <element>, "blindCommitment": <element>, "accountField": <a chain of object keys>}' };
  }
  return { ok: true, value: { blinded: blinded.toLowerCase() as Hex, blindCommitment: blindCommitment.toLowerCase() as Hex, accountField } };
}

/**
 * Why a claim's signed context does not bind a nullifier's blind (B, R) and the schema's account field, or
 * undefined when it does: the one judgement of the dapp (dapp/nullifier.ts) and of the api before it sends
 * (api/claims/relay.ts).
 */
export function nullifierBindingProblem(contextText: string, blind: { blinded: Hex; blindCommitment: Hex }, accountIdField: string): string | undefined {
  const binding = contextNullifierBinding(contextText);
  if (!binding.ok) return binding.reason;
  if (binding.value.blinded !== blind.blinded.toLowerCase() || binding.value.blindCommitment !== blind.blindCommitment.toLowerCase()) {
    return "it was signed for another blind (B, R) than the nullifier's: a nullifier counts only in the claim it was made in";
  }
  if (binding.value.accountField !== accountIdField) return `it read the account at ${binding.value.accountField}; the schema names its accounts by ${accountIdField}`;
  return undefined;
}

/** The statement a context names, or why it names none an attestor could sign. */
function contextStatement(context: Record<string, unknown> | undefined): Reading<RangeStatement> {
  const statement = context?.statement;
  if (statement === undefined) {
    return { ok: false, reason: 'name the statement to sign in the context: "statement": {"field": ..., "range": {"lo", "hi", "hiInclusive"}}' };
  }
  if (statement === null || typeof statement !== "object" || Array.isArray(statement)) return { ok: false, reason: "the context's statement is not an object" };
  const { field, range, ...extra } = statement as Record<string, unknown>;
  if (Object.keys(extra).length > 0) return { ok: false, reason: `the context's statement holds "${Object.keys(extra)[0]}": it names a field and a range only` };
  if (typeof field !== "string" || proofFieldProblem(field) !== undefined) return { ok: false, reason: `the statement's field ${JSON.stringify(field)} is not a chain of object keys` };
  const bounds = range !== null && typeof range === "object" && !Array.isArray(range) ? (range as Record<string, unknown>) : undefined;
  const keys = bounds === undefined ? [] : Object.keys(bounds).sort();
  if (bounds === undefined || keys.join() !== "hi,hiInclusive,lo" || typeof bounds.lo !== "string" || (bounds.hi !== null && typeof bounds.hi !== "string") || typeof bounds.hiInclusive !== "boolean") {
    return { ok: false, reason: 'the statement\'s range must be {"lo": "<decimal>", "hi": "<decimal>" or null, "hiInclusive": true or false}' };
  }
  const decimal: DecimalRange = { lo: bounds.lo, hi: bounds.hi as string | null, hiInclusive: bounds.hiInclusive };
  try {
    numberRangePattern(decimal);
  } catch (error) {
    return { ok: false, reason: `the statement's range is not a range: ${messageOf(error)}` };
  }
  return { ok: true, value: { field, range: decimal } };
}

/** A range as a reader writes it: `[100, 1000)`, `[10000, +inf)`. */
function rangeText(range: DecimalRange): string {
  return `[${range.lo}, ${range.hi ?? "+inf"}${range.hiInclusive ? "]" : ")"}`;
}

const JSON_PATH_RE = /^\$\.((?:[A-Za-z_][A-Za-z0-9_-]{0,63})(?:\.[A-Za-z_][A-Za-z0-9_-]{0,63})*)$/;

/** The provider parameters a range statement needs: nothing else may change what is signed. */
const STATEMENT_PARAMETERS = ["method", "responseMatches", "responseRedactions", "url"];

/**
 * What the attestor process signs, checked against what it saw (records as attestor-core has them,
 * hidden bytes as `*`): the context names a range statement (field and range); the parameters name that
 * field by JSON path and hold exactly the regex `fieldPattern` makes for it, byte for byte, so a pattern
 * cut short, widened or made up is refused before anything is read; and the field's token, read with a
 * JSON parser that refuses hidden structure (common/revealed-response.ts), makes that regex match the
 * smallest document holding it: the number lies in the range. A signature of this attestor always means
 * one of these statements and nothing else.
 */
export function checkSeenStatement(parameters: Record<string, unknown>, records: readonly SeenRecord[], context: Record<string, unknown> | undefined): Reading<FieldToken> {
  const extra = Object.keys(parameters).find((key) => !STATEMENT_PARAMETERS.includes(key));
  if (extra !== undefined) return { ok: false, reason: `this attestor signs range statements only: the parameters may hold ${STATEMENT_PARAMETERS.join(", ")} (got "${extra}")` };
  const redactions: unknown = parameters.responseRedactions;
  const matches: unknown = parameters.responseMatches;
  const redaction: unknown = Array.isArray(redactions) && redactions.length === 1 ? redactions[0] : undefined;
  const path = redaction !== null && typeof redaction === "object" && Object.keys(redaction).length === 1 && "jsonPath" in redaction ? JSON_PATH_RE.exec(String(redaction.jsonPath)) : null;
  if (path === null) {
    return { ok: false, reason: "this attestor signs range statements only: name the field with exactly one jsonPath redaction" };
  }
  const match = Array.isArray(matches) && matches.length === 1 ? (matches[0] as Record<string, unknown>) : undefined;
  if (match === undefined || match.type !== "regex" || typeof match.value !== "string" || Object.keys(match).length !== 2) {
    return { ok: false, reason: "this attestor signs range statements only: give exactly one regex response match" };
  }
  const statement = contextStatement(context);
  if (!statement.ok) return { ok: false, reason: `this attestor signs range statements only: ${statement.reason}` };
  const { field: stated, range } = statement.value;
  if (path[1] !== stated) return { ok: false, reason: `the jsonPath redaction names ${path[1] as string}, the statement names ${stated}` };
  if (match.value !== fieldPattern(stated, range)) {
    return { ok: false, reason: `the response match is not the canonical range statement for ${stated} in ${rangeText(range)} (common/tls-claim.ts fieldPattern)` };
  }
  const field = path[1] as string;
  const seen = readRevealedField(records, field);
  if (!seen.ok) return seen;
  // The canonical pattern always compiles; it is run rather than trusted so that the reading and the
  // signed regex are one judgement.
  const holds = new RegExp(match.value, "su").test(documentOf(field, seen.value.raw));
  return holds ? seen : { ok: false, reason: `the value at ${field} is not in ${rangeText(range)}` };
}

/** The longest range pattern a proven schema may need (the claim's parameters travel in calldata). */
export const MAX_PATTERN_LENGTH = 8192;

/**
 * Why a schema registration cannot be proven, field by field (the dapp and the api refuse it alike):
 * proven fields must be key chains, each bin's pattern must stay short, and a quorum needs proof.
 */
export function proofSchemaIssues(p: {
  proof?: ProofKind | undefined;
  attestorQuorum?: number | undefined;
  bucketDefinitions: Record<string, { boundaries: number[]; labels: string[] }>;
  dataKeys?: readonly string[] | undefined;
  accountIdField?: string | undefined;
}): { path: string[]; message: string }[] {
  const account = accountIdFieldIssues(p);
  if (p.proof !== "attestor") {
    return [...(p.attestorQuorum !== undefined && p.attestorQuorum !== 1 ? [{ path: ["attestorQuorum"], message: 'a quorum of attestors needs proof "attestor"' }] : []), ...account];
  }
  const fields = Object.keys(p.bucketDefinitions);
  if (fields.length === 0) return [{ path: ["bucketDefinitions"], message: 'a schema with proof "attestor" needs a bucket definition' }];
  const issues: { path: string[]; message: string }[] = [...account];
  for (const field of fields) {
    const problem = proofFieldProblem(field);
    if (problem !== undefined) {
      issues.push({ path: ["bucketDefinitions", field], message: problem });
      continue;
    }
    const definition = p.bucketDefinitions[field] as { boundaries: number[]; labels: string[] };
    for (const label of definition.labels) {
      const range = binRange(definition, label);
      const length = range === undefined ? 0 : fieldPattern(field, range).length;
      if (length > MAX_PATTERN_LENGTH) {
        issues.push({ path: ["bucketDefinitions", field], message: `bin "${label}" needs a range pattern of ${length} characters (at most ${MAX_PATTERN_LENGTH}): use boundaries with fewer digits` });
      }
    }
  }
  return issues;
}

/**
 * Why a schema cannot be unique per account with this `accountIdField`: only attestors see the account id
 * (the api's word alone would let it name any account), so proof "attestor" is needed; the path is a key
 * chain like a proven field; and it may not be a data key, which would seal the account id into every
 * attestation's data for the admin and each grantee to read.
 */
function accountIdFieldIssues(p: { proof?: ProofKind | undefined; dataKeys?: readonly string[] | undefined; accountIdField?: string | undefined }): { path: string[]; message: string }[] {
  const field = p.accountIdField;
  if (field === undefined) return [];
  if (p.proof !== "attestor") return [{ path: ["accountIdField"], message: 'a schema unique per account needs proof "attestor": only the attestors see the account id' }];
  const problem = proofFieldProblem(field);
  if (problem !== undefined) return [{ path: ["accountIdField"], message: problem }];
  if (p.dataKeys?.includes(field) === true) return [{ path: ["accountIdField"], message: `"${field}" is a data key: the account id would be sealed into every attestation's data` }];
  return [];
}
