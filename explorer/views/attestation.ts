/** One attestation: what the rollup holds about it, and whether its epoch is claimed on the base layer (its proof). */
import { ApiFailure, get, send } from "../api.ts";
import { addressLink, attestationLink, badge, card, facts, freshnessText, h, ID_RE, problem, when, ago, schemaLink, statusBadge, type Child } from "../dom.ts";

interface Attestation {
  claimId: string;
  provider: string;
  bucket: string;
  timestamp: number;
  owner: string;
  schemaId: string;
  inputIndex: number;
  itemIndex: number | null;
  /** The first TLS attestor whose signed claim the rollup checked; null for a value only the api vouches for. */
  attestor: string | null;
  /** Every attestor whose signed claim the rollup checked (a schema's quorum), [] when unproven. */
  attestors: string[];
  /** Its schema binds one provider account to one owner (a nullifier the rollup checked; never the account). */
  uniquePerAccount: boolean;
  /** The account that sent it; null for attestations recorded before attesters were kept. */
  attester: string | null;
  expiresAt: number | null;
  /** At the api's clock (`at`). */
  status: "valid" | "revoked" | "expired";
  freshness: number;
  at: number;
  revocation: { revokedAt: number; revoker: string; reason: string; supersededBy: string | null; inputIndex: number } | null;
}

/** The api's proof: v1 (context and validity, for validateNotice) or v2 (output index and siblings, for validateOutput). */
interface Proof {
  claimId: string;
  applicationAddress: string;
  inputIndex: number;
  noticeIndex: number;
  notice: string;
  output?: string;
  proof: { context: string; validity: Record<string, unknown> } | { outputIndex: number; outputHashesSiblings: string[] };
}

export async function attestationView(view: HTMLElement, claimId: string): Promise<void> {
  if (!ID_RE.test(claimId)) {
    view.append(problem("Not an attestation id", `“${claimId}” is not an attestation id: it is 0x followed by 64 hex digits.`));
    return;
  }
  let attestation: Attestation;
  try {
    attestation = await get<Attestation>(`/api/core/attestation/${claimId}`);
  } catch (error) {
    if (error instanceof ApiFailure && error.code === "ATTESTATION_NOT_FOUND") {
      view.append(problem("Attestation not found", `No attestation ${claimId} is recorded in the rollup.`));
      return;
    }
    throw error;
  }
  const proofCard = card("On the base layer", h("p", { class: "muted" }, "Reading the proof…"));
  const onChainCard = card("On chain (registry and gate)", h("p", { class: "muted" }, "Reading the contracts…"));
  const receiptCard = card("Receipt (EAS off-chain attestation)", h("p", { class: "muted" }, "Reading the receipt…"));
  const transaction = h("span", { class: "muted" }, "reading the chain…");
  view.append(
    h("h1", {}, "Attestation ", badge(attestation.bucket, "info"), " ", statusBadge(attestation.status)),
    card(
      "Details",
      facts([
        ["Attestation id", h("span", { class: "mono", id: "claim-id" }, attestation.claimId)],
        ["Bucket", h("strong", {}, attestation.bucket)],
        ["Owner", addressLink(attestation.owner)],
        ["Provider", attestation.provider],
        [
          "Proven by",
          attestation.attestors.length === 0
            ? h("span", { class: "muted", id: "attestor" }, "not proven: the api's word")
            : h(
                "span",
                { id: "attestor" },
                attestation.attestors.length === 1 ? "TLS attestor " : `${attestation.attestors.length} TLS attestors `,
                ...attestation.attestors.flatMap((a, i) => (i === 0 ? [addressLink(a)] : [", ", addressLink(a)])),
                h("span", { class: "muted small" }, " (the bucket's range, never the value)"),
              ),
        ],
        [
          "Account",
          attestation.uniquePerAccount
            ? h("span", { id: "unique-per-account" }, badge("one owner per account", "info"), h("span", { class: "muted small" }, " the provider account backs no other owner under this schema; the account itself is never published"))
            : h("span", { class: "muted", id: "unique-per-account" }, "not unique: its schema lets one provider account back several owners"),
        ],
        ["Time", `${when(attestation.timestamp)} (${ago(attestation.timestamp)})`],
        ["Status", h("span", { id: "status" }, statusBadge(attestation.status), " ", validityText(attestation))],
        ["Freshness", h("span", { id: "freshness" }, freshnessText(attestation.freshness), h("span", { class: "muted small" }, " (halves every half-life of its schema)"))],
        ["Attester", attestation.attester === null ? h("span", { class: "muted" }, "not recorded") : addressLink(attestation.attester)],
        ["Schema", schemaLink(attestation.schemaId)],
        ["Input", attestation.itemIndex === null ? `#${attestation.inputIndex}` : `#${attestation.inputIndex}, item ${attestation.itemIndex} of a batch`],
        ["Transaction", transaction],
      ]),
    ),
    receiptCard,
    proofCard,
    onChainCard,
  );
  await Promise.all([showReceipt(receiptCard, claimId), showProof(proofCard, claimId), showTransaction(transaction, claimId), showOnChain(onChainCard, claimId)]);
}

/** What its status rests on: its revocation (when, by whom, why, what replaces it) or its expiry. */
function validityText(a: Attestation): Child {
  const r = a.revocation;
  if (r !== null) {
    return h(
      "span",
      { class: "small" },
      `revoked ${when(r.revokedAt)} by `,
      addressLink(r.revoker),
      r.reason === "" ? "" : `: “${r.reason}”`,
      ...(r.supersededBy === null ? [] : [" · superseded by ", attestationLink(r.supersededBy)]),
    );
  }
  if (a.expiresAt === null) return h("span", { class: "muted small" }, "never expires");
  return h("span", { class: "muted small" }, `${a.status === "expired" ? "expired" : "expires"} ${when(a.expiresAt)}`);
}

/** The InputBox transaction that carried the attestation's input (read from the chain by the api). */
async function showTransaction(target: HTMLElement, claimId: string): Promise<void> {
  try {
    const input = await get<{ txHash: string; blockNumber: number }>(`/api/core/attestation/${claimId}/input`);
    target.replaceChildren(h("span", { class: "mono", id: "tx-hash" }, input.txHash), h("span", { class: "muted small" }, ` in block ${input.blockNumber.toLocaleString("en-US")}`));
  } catch (error) {
    target.replaceChildren(h("span", { class: "muted" }, error instanceof ApiFailure ? `unavailable (${error.code})` : "unavailable"));
  }
}

/** What a proof is made of: v1's claim context and machine state, or v2's output index and siblings. */
function proofFacts(proof: Proof["proof"]): [string, Child][] {
  if ("context" in proof) {
    return [
      ["Proof context", h("span", { class: "mono wrap" }, proof.context)],
      ["Machine state", h("span", { class: "mono wrap" }, String(proof.validity.machineStateHash ?? ""))],
    ];
  }
  return [
    ["Output index (Rollups v2)", String(proof.outputIndex)],
    ["Siblings", `${proof.outputHashesSiblings.length} hashes, for Application.validateOutput`],
  ];
}

async function showProof(target: HTMLElement, claimId: string): Promise<void> {
  const title = target.querySelector("h2");
  target.replaceChildren(...(title === null ? [] : [title]));
  const proofUrl = `/api/core/attestation/${claimId}/proof`;
  try {
    const proof = await get<Proof>(proofUrl);
    target.append(
      h("p", {}, badge("epoch claimed", "ok"), " Its epoch is claimed on the base layer: the notice is provable there."),
      facts([
        ["Input index", String(proof.inputIndex)],
        ["Notice index", String(proof.noticeIndex)],
        ["Application", h("span", { class: "mono" }, proof.applicationAddress)],
        ...proofFacts(proof.proof),
      ]),
      h(
        "p",
        {},
        h("a", { href: proofUrl, target: "_blank", rel: "noopener" }, "Proof (JSON)"),
        " · verify it on chain: ",
        h("code", {}, `npm run verify -- ${claimId}`),
      ),
    );
  } catch (error) {
    if (error instanceof ApiFailure && error.code === "PROOF_NOT_READY") {
      target.append(
        h("p", {}, badge("epoch open", "warn"), " Its epoch is not claimed yet; the proof appears once it is (epochs close every few seconds)."),
        h("button", { type: "button", onclick: () => void showProof(target, claimId) }, "Check again"),
      );
      return;
    }
    target.append(h("p", { class: "error" }, error instanceof Error ? error.message : String(error)));
  }
}

interface OnChain {
  registry: { address: string; recorded: boolean; valid: boolean; revokedAt: number | null };
  gate: { address: string; recorded: boolean; attestorCount: number; revokedAt: number | null };
}

/** Whether the attestation and its revocation were brought to the registry (EAS's read interface) and the gate. */
async function showOnChain(target: HTMLElement, claimId: string): Promise<void> {
  const title = target.querySelector("h2");
  target.replaceChildren(...(title === null ? [] : [title]));
  try {
    const state = await get<OnChain>(`/api/core/attestation/${claimId}/onchain`);
    const where = (recorded: boolean, revokedAt: number | null): Child =>
      revokedAt !== null
        ? h("span", {}, badge(recorded ? "recorded, revoked" : "revocation recorded", "warn"), ` revoked ${when(revokedAt)}`)
        : recorded
          ? badge("recorded", "ok")
          : h("span", {}, badge("not yet", "info"), h("span", { class: "muted small" }, " the publisher brings it once its epoch is claimed (npm start -- --publish)"));
    target.append(
      facts([
        ["Registry", h("span", { id: "onchain-registry" }, where(state.registry.recorded, state.registry.revokedAt), state.registry.valid ? h("span", { class: "muted small" }, " · isAttestationValid: true") : "")],
        ["Registry address", h("span", { class: "mono" }, state.registry.address)],
        ["Gate", h("span", { id: "onchain-gate" }, where(state.gate.recorded, state.gate.revokedAt), state.gate.recorded ? h("span", { class: "muted small" }, ` · ${state.gate.attestorCount} attestor(s)`) : "")],
        ["Gate address", h("span", { class: "mono" }, state.gate.address)],
      ]),
    );
  } catch (error) {
    const text = error instanceof ApiFailure && error.code === "NOT_FOUND" ? "This api knows of no registry (REGISTRY_ADDRESS)." : error instanceof Error ? error.message : String(error);
    target.append(h("p", { class: "muted" }, text));
  }
}

interface SignedReceipt {
  signer: string;
  receipt: { uid: string; domain: { chainId: number; verifyingContract: string }; message: { refUID: string; time: number } };
}

interface ReceiptVerdict {
  verdict: "VALID" | "REVOKED" | "SIGNED" | "MISMATCH" | "INVALID" | "REFUSED";
  reason: string;
}

/** The api's verdict on a receipt, in the card's words: signed (not yet provable), proven, or against it. */
function verdictState(judged: ReceiptVerdict): HTMLElement {
  const [text, tone, note] =
    judged.verdict === "VALID"
      ? (["proven", "ok", " equal, field for field, to the notice the chain proves"] as const)
      : judged.verdict === "SIGNED"
        ? (["signed", "ok", " by the operator, verifiable at once with eas-sdk's verifyOffchainAttestationSignature; its epoch is not claimed yet"] as const)
        : judged.verdict === "REVOKED"
          ? (["revoked", "bad", " proven, and revoked by the rollup since"] as const)
          : ([judged.verdict === "MISMATCH" ? "contradicted" : judged.verdict.toLowerCase(), "bad", ` ${judged.reason}`] as const);
  return h("span", { id: "receipt-state", "data-verdict": judged.verdict }, badge(text, tone), h("span", { class: "muted small" }, note));
}

/**
 * The receipt the operator signed once the rollup accepted it (docs/receipts.md): usable at once, checked
 * against the proven notice by `npm run verify -- --receipt` (the cards below say whether it is proven
 * and on chain yet).
 */
async function showReceipt(target: HTMLElement, claimId: string): Promise<void> {
  const title = target.querySelector("h2");
  target.replaceChildren(...(title === null ? [] : [title]));
  const url = `/api/core/attestation/${claimId}/receipt`;
  try {
    const signed = await get<SignedReceipt>(url);
    target.append(
      facts([
        ["State", h("span", { id: "receipt-state" }, badge("signed", "ok"), h("span", { class: "muted small" }, " by the operator, verifiable at once with eas-sdk's verifyOffchainAttestationSignature"))],
        ["Signer", h("span", { class: "mono", id: "receipt-signer" }, signed.signer)],
        ["Receipt uid", h("span", { class: "mono wrap" }, signed.receipt.uid)],
        ["Domain", h("span", { class: "small" }, `chain ${signed.receipt.domain.chainId}, registry `, h("span", { class: "mono" }, signed.receipt.domain.verifyingContract))],
      ]),
      h("p", {}, h("a", { href: url, target: "_blank", rel: "noopener" }, "Receipt (JSON)"), h("span", { class: "muted small" }, " · once its epoch is claimed: "), h("code", {}, "npm run verify -- --receipt <file>")),
    );
    // The api's verdict (POST /api/core/verify/receipt) replaces "signed" once the rollup backs the receipt.
    const judged = await send<ReceiptVerdict>("POST", "/api/core/verify/receipt", { body: signed });
    if (judged !== undefined) target.querySelector("#receipt-state")?.replaceWith(verdictState(judged));
    if (judged?.verdict === "REVOKED") {
      const revocation = `/api/core/attestation/${claimId}/revocation/receipt`;
      target.append(h("p", {}, h("a", { href: revocation, target: "_blank", rel: "noopener" }, "Revocation receipt (JSON)"), h("span", { class: "muted small" }, " · the same signer's off-chain attestation that this receipt is revoked")));
    }
  } catch (error) {
    target.append(h("p", { class: "muted" }, error instanceof ApiFailure ? `No receipt: ${error.message}` : error instanceof Error ? error.message : String(error)));
  }
}
