/** An address: its attestations (paged), and whether another address may read its data (an access check). */
import { get } from "../api.ts";
import { addressLink, ADDRESS_RE, ago, attestationLink, badge, card, freshnessText, h, problem, schemaLink, statusBadge, table, when } from "../dom.ts";

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
  grants: { grantId: string; schemaId: string; expiresAt: number }[];
}

const PAGE = 10;

export async function addressView(view: HTMLElement, address: string, query: URLSearchParams): Promise<void> {
  if (!ADDRESS_RE.test(address)) {
    view.append(problem("Not an address", `“${address}” is not an address: an address is 0x followed by 40 hex digits.`));
    return;
  }
  const [attestations, grants] = await Promise.all([get<OwnedAttestation[]>(`/api/core/attestations/${address}`), get<GrantsOf>(`/api/core/grants/${address}`)]);
  const page = Math.max(1, Number.parseInt(query.get("page") ?? "1", 10) || 1);
  const pages = Math.max(1, Math.ceil(attestations.length / PAGE));
  // Newest first, as an explorer lists them.
  const shown = [...attestations].reverse().slice((page - 1) * PAGE, page * PAGE);
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
    card(
      `Grants given (${grants.given.length})`,
      grants.given.length === 0
        ? h("p", { class: "muted" }, "This address has granted no one access.")
        : table(
            ["Requester", "Schema", "Granted", "Expires"],
            grants.given.map((g) => [addressLink(g.requester), schemaLink(g.schemaId), ago(g.createdAt), expiry(g.expiresAt)]),
          ),
    ),
    card(
      `Grants received (${grants.received.length})`,
      grants.received.length === 0
        ? h("p", { class: "muted" }, "No live grant lets this address read anyone's data.")
        : table(
            ["Owner", "Schema", "Expires"],
            grants.received.map((g) => [addressLink(g.owner), schemaLink(g.schemaId), expiry(g.expiresAt)]),
          ),
    ),
    await accessCard(address, query.get("check") ?? ""),
  );
}

interface GrantsOf {
  given: { grantId: string; requester: string; schemaId: string; createdAt: number; expiresAt: number }[];
  received: { grantId: string; owner: string; schemaId: string; expiresAt: number }[];
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
    out.append(table(["Grant", "Schema", "Expires"], access.grants.map((g) => [h("span", { class: "mono", title: g.grantId }, g.grantId.slice(0, 10) + "…"), schemaLink(g.schemaId), when(g.expiresAt)])));
  }
  return out;
}
