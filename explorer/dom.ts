/** A tiny element builder: the explorer's views are plain DOM, no framework. */

export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === "object" ? child : String(child));
  }
}

const SVG_NS = "http://www.w3.org/2000/svg";
export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: (SVGElement | string)[]): SVGElement {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
export const ID_RE = /^0x[0-9a-fA-F]{64}$/;

export function short(hex: string): string {
  return hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-6)}` : hex;
}

export function when(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function ago(unixSeconds: number): string {
  const s = Math.round(Date.now() / 1000 - unixSeconds);
  if (s < 60) return `${Math.max(0, s)} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function addressLink(address: string): HTMLElement {
  return h("a", { href: `#/address/${address}`, class: "mono", title: address }, short(address));
}

export function attestationLink(id: string): HTMLElement {
  return h("a", { href: `#/attestation/${id}`, class: "mono", title: id }, short(id));
}

export function schemaLink(id: string, label?: string): HTMLElement {
  return h("a", { href: `#/schema/${id}`, class: label === undefined ? "mono" : "", title: id }, label ?? short(id));
}

/** A page-level message: bad input in the URL, an unknown id, an api that cannot answer. */
export function problem(title: string, detail: string): HTMLElement {
  return h("div", { class: "problem", role: "alert" }, h("h2", {}, title), h("p", {}, detail));
}

export function card(title: string, ...children: Child[]): HTMLElement {
  return h("section", { class: "card" }, h("h2", {}, title), ...children);
}

export function table(headers: string[], rows: Child[][]): HTMLElement {
  return h(
    "table",
    {},
    h("thead", {}, h("tr", {}, ...headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, ...rows.map((row) => h("tr", {}, ...row.map((cell) => h("td", {}, cell))))),
  );
}

export function facts(pairs: [string, Child][]): HTMLElement {
  const list = h("dl", { class: "facts" });
  for (const [name, value] of pairs) append(list, [h("dt", {}, name), h("dd", {}, value)]);
  return list;
}

export function badge(text: string, tone: "ok" | "warn" | "bad" | "info"): HTMLElement {
  return h("span", { class: `badge ${tone}` }, text);
}

/** An attestation's state as a badge: valid, revoked or expired (DECISIONS.md section 17). */
export function statusBadge(status: "valid" | "revoked" | "expired"): HTMLElement {
  return badge(status, status === "valid" ? "ok" : status === "revoked" ? "bad" : "warn");
}

/** Whose word made a grant: the owner's EIP-712 signature, the owner's own transaction, or the api's relay on a token. */
export type ConsentKind = "signed" | "owner" | "relayed";

const CONSENT_TITLES: Record<ConsentKind, string> = {
  signed: "the owner signed this consent (EIP-712); the rollup checked the signature",
  owner: "the owner's own wallet sent it to the rollup",
  relayed: "the api relayed it on the word of the owner's token",
};

export function consentBadge(kind: ConsentKind): HTMLElement {
  const element = badge(kind, kind === "signed" ? "ok" : kind === "owner" ? "info" : "warn");
  element.title = CONSENT_TITLES[kind] ?? kind;
  element.dataset.consent = kind;
  return element;
}

/** Freshness as a percentage: 1 is made just now, 0.5 one half-life ago. */
export function freshnessText(freshness: number): string {
  return `${(freshness * 100).toFixed(freshness >= 0.995 || freshness < 0.01 ? 0 : 1)}%`;
}
