/**
 * An address: its attestations (paged), the grants it gave and received, its owner's own consent through a
 * browser wallet (views/grant.ts), and whether another address may read its data (an access check).
 */
import type { Hex } from "viem";
import { get } from "../api.ts";
import { addressLink, ADDRESS_RE, ago, attestationLink, badge, card, consentBadge, freshnessText, h, problem, schemaLink, statusBadge, table, when, type ConsentKind } from "../dom.ts";
import type { OwnerWallet } from "../wallet.ts";
import { grantCard, outcomeError } from "./grant.ts";

interface OwnedAttestation {
  claimId: string;
  provider: string;
  bucket: string;
  timestamp: number;
  status: "valid" | "revoked" | "expired";
  freshness: number;
}

interface Access {
  hasAccess: boolean;
  grants: { grantId: string; schemaId: string; expiresAt: number; consent: ConsentKind }[];
}

const PAGE = 10;

export async function addressView(view: HTMLElement, address: string, query: URLSearchParams, wallet: OwnerWallet | undefined): Promise<void> {
  if (!ADDRESS_RE.test(address)) {
    view.append(problem("Not an address", `“${address}” is not an address: an address is 0x followed by 40 hex digits.`));
    return;
  }
  const [attestations, grants] = await Promise.all([get<OwnedAttestation[]>(`/api/core/attestations/${address}`), get<GrantsOf>(`/api/core/grants/${address}`)]);
  const page = Math.max(1, Number.parseInt(query.get("page") ?? "1", 10) || 1);
  const pages = Math.max(1, Math.ceil(attestations.length / PAGE));
  // Newest first, as an explorer lists them.
  const shown = [...attestations].reverse().slice((page - 1) * PAGE, page * PAGE);
  let given = givenCard(address, grants.given, wallet, revoke);
  // After a grant, a revoke or a change of wallet: the table re-read, with the revokes the connected owner may sign.
  async function refreshGiven(note: HTMLElement | null = null): Promise<void> {
    let next: HTMLElement;
    try {
      next = givenCard(address, (await get<GrantsOf>(`/api/core/grants/${address}`)).given, wallet, revoke, note);
    } catch (error) {
      next = givenCard(address, grants.given, wallet, revoke, outcomeError(error));
    }
    given.replaceWith(next);
    given = next;
  }
  async function revoke(grantId: Hex, button: HTMLButtonElement): Promise<void> {
    if (wallet === undefined) return;
    button.disabled = true;
    button.textContent = "Waiting for your wallet…";
    try {
      await wallet.revoke(grantId);
    } catch (error) {
      return refreshGiven(outcomeError(error));
    }
    await refreshGiven(h("p", { id: "revoke-result" }, "Revoked with your signature: grant ", h("span", { class: "mono wrap" }, grantId), "."));
  }
  view.append(
    h("h1", {}, "Address ", h("span", { class: "mono small" }, address)),
    card(
      `Attestations (${attestations.length})`,
      attestations.length === 0
        ? h("p", { class: "muted" }, "No attestations are owned by this address.")
        : table(
            ["Attestation", "Bucket", "Status", "Freshness", "Provider", "Time"],
            shown.map((a) => [
              attestationLink(a.claimId),
              badge(a.bucket, "info"),
              statusBadge(a.status),
              freshnessText(a.freshness),
              a.provider,
              h("span", { title: when(a.timestamp) }, ago(a.timestamp)),
            ]),
          ),
      pages > 1 ? pager(address, page, pages) : null,
    ),
    given,
    grantCard(address, wallet, refreshGiven),
    card(
      `Grants received (${grants.received.length})`,
      grants.received.length === 0
        ? h("p", { class: "muted" }, "No live grant lets this address read anyone's data.")
        : table(
            ["Owner", "Schema", "Consent", "Expires"],
            grants.received.map((g) => [addressLink(g.owner), schemaLink(g.schemaId), consentBadge(g.consent), expiry(g.expiresAt)]),
          ),
    ),
    await accessCard(address, query.get("check") ?? ""),
  );
}

interface GivenGrant {
  grantId: Hex;
  requester: string;
  schemaId: string;
  createdAt: number;
  expiresAt: number;
  consent: ConsentKind;
}

interface GrantsOf {
  given: GivenGrant[];
  received: { grantId: string; owner: string; schemaId: string; expiresAt: number; consent: ConsentKind }[];
}

/** The grants `owner` gave; when its owner is the connected wallet, each with a revoke that wallet signs. */
function givenCard(
  owner: string,
  given: GivenGrant[],
  wallet: OwnerWallet | undefined,
  revoke: (grantId: Hex, button: HTMLButtonElement) => Promise<void>,
  note: HTMLElement | null = null,
): HTMLElement {
  const mine = wallet !== undefined && wallet.account === owner.toLowerCase();
  const revokeButton = (grantId: Hex): HTMLElement => {
    const button = h("button", { type: "button", class: "small-button", "data-revoke": grantId }, "Revoke (signed)") as HTMLButtonElement;
    button.addEventListener("click", () => void revoke(grantId, button));
    return button;
  };
  const out = card(
    `Grants given (${given.length})`,
    given.length === 0
      ? h("p", { class: "muted" }, "This address has granted no one access.")
      : table(
          ["Requester", "Schema", "Consent", "Granted", "Expires", ...(mine ? [""] : [])],
          given.map((g) => [
            addressLink(g.requester),
            schemaLink(g.schemaId),
            consentBadge(g.consent),
            ago(g.createdAt),
            expiry(g.expiresAt),
            ...(mine ? [revokeButton(g.grantId)] : []),
          ]),
        ),
    note,
  );
  out.id = "grants-given";
  return out;
}

function expiry(unixSeconds: number): HTMLElement {
  const expired = unixSeconds * 1000 <= Date.now();
  return h("span", { title: when(unixSeconds) }, expired ? badge("expired", "warn") : when(unixSeconds));
}

function pager(address: string, page: number, pages: number): HTMLElement {
  return h(
    "nav",
    { class: "pager" },
    page > 1 ? h("a", { href: `#/address/${address}?page=${page - 1}` }, "← Newer") : h("span", {}, ""),
    h("span", {}, `Page ${page} of ${pages}`),
    page < pages ? h("a", { href: `#/address/${address}?page=${page + 1}` }, "Older →") : h("span", {}, ""),
  );
}

async function accessCard(owner: string, requester: string): Promise<HTMLElement> {
  const input = h("input", { name: "requester", placeholder: "Requester address (0x…)", value: requester, "aria-label": "Requester address" }) as HTMLInputElement;
  const form = h(
    "form",
    {
      class: "inline",
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = `#/address/${owner}?check=${encodeURIComponent(input.value.trim())}`;
      },
    },
    input,
    h("button", { type: "submit" }, "Check access"),
  );
  const out = card("Access check", h("p", { class: "muted" }, "May another address read this address's sealed data? (live grants, by schema)"), form);
  if (requester === "") return out;
  if (!ADDRESS_RE.test(requester)) {
    out.append(h("p", { class: "error", role: "alert" }, `“${requester}” is not an address: 0x followed by 40 hex digits.`));
    return out;
  }
  const access = await get<Access>(`/api/core/access/${owner}/${requester}`);
  out.append(
    h("p", { id: "access-result" }, access.hasAccess ? badge("access granted", "ok") : badge("no access", "bad"), " ", addressLink(requester), access.hasAccess ? " holds live grants:" : " holds no live grant from this address."),
  );
  if (access.grants.length > 0) {
    out.append(
      table(
        ["Grant", "Schema", "Consent", "Expires"],
        access.grants.map((g) => [h("span", { class: "mono", title: g.grantId }, g.grantId.slice(0, 10) + "…"), schemaLink(g.schemaId), consentBadge(g.consent), when(g.expiresAt)]),
      ),
    );
  }
  return out;
}
