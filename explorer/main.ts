/**
 * The explorer: hash routes (shareable URLs) to one view each. Every view reads only the api's public
 * endpoints and WebSocket; a failure is shown on the page, never a blank one. The only writes are an
 * owner's grants and revokes, signed by the owner's own browser wallet (wallet.ts).
 */
import { ApiFailure } from "./api.ts";
import { ADDRESS_RE, h, ID_RE, problem } from "./dom.ts";
import { addressView } from "./views/address.ts";
import { attestationView } from "./views/attestation.ts";
import { liveView } from "./views/live.ts";
import { nodeView } from "./views/node.ts";
import { schemasView, schemaView } from "./views/schemas.ts";
import { OwnerWallet } from "./wallet.ts";

let cleanup: (() => void) | undefined;
let generation = 0;
let wallet: OwnerWallet | undefined;

/**
 * The browser's wallet, once one is there: some inject `window.ethereum` after the page's scripts run.
 * One per page, so a connection and its token last across views, and in this page's memory only.
 */
function ownerWallet(): OwnerWallet | undefined {
  if (wallet === undefined && window.ethereum !== undefined) wallet = new OwnerWallet(window.ethereum);
  return wallet;
}

async function render(): Promise<void> {
  cleanup?.();
  cleanup = undefined;
  const mine = ++generation;
  const root = document.getElementById("view");
  if (root === null) return;
  const [path = "", search = ""] = location.hash.replace(/^#/, "").split("?");
  const query = new URLSearchParams(search);
  const parts = path.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p));
  const view = h("div", { class: "view", "data-view": parts[0] ?? "schemas" });
  root.replaceChildren(h("p", { class: "muted loading" }, "Loading…"));
  for (const link of document.querySelectorAll<HTMLElement>("[data-nav]")) {
    link.classList.toggle("active", link.dataset.nav === (parts[0] === "schema" ? "schemas" : (parts[0] ?? "schemas")));
  }
  try {
    const [name, arg] = parts;
    if (name === undefined || name === "schemas") await schemasView(view);
    else if (name === "schema" && arg !== undefined) await schemaView(view, arg);
    else if (name === "address" && arg !== undefined) await addressView(view, arg, query, ownerWallet());
    else if (name === "attestation" && arg !== undefined) await attestationView(view, arg);
    else if (name === "live") cleanup = liveView(view, query);
    else if (name === "node") await nodeView(view);
    else if (name === "search") view.append(problem("Nothing to look up", `“${arg ?? ""}” is neither an address (0x and 40 hex digits) nor an attestation id (0x and 64 hex digits).`));
    else view.append(problem("No such page", `“#${path}” is not a page of the explorer. Try Schemas, Live or Node above, or search for an address or attestation id.`));
  } catch (error) {
    view.replaceChildren(failure(error));
  }
  // A newer navigation started while this one was loading: it owns the page now.
  if (mine !== generation) return;
  root.replaceChildren(view);
  document.title = `${view.querySelector("h1, h2")?.textContent ?? "Explorer"} · Attestation explorer`;
}

function failure(error: unknown): HTMLElement {
  if (error instanceof ApiFailure) {
    const titles: Record<string, string> = {
      SCHEMA_NOT_FOUND: "Schema not found",
      ATTESTATION_NOT_FOUND: "Attestation not found",
      INVALID_PARAMETER: "Bad input in the URL",
      ROLLUP_UNAVAILABLE: "The rollup is not answering",
      RATE_LIMITED: "Too many requests",
    };
    return problem(titles[error.code] ?? `The api answered ${error.code}`, error.message);
  }
  return problem("Could not load this page", error instanceof Error ? error.message : String(error));
}

function search(event: Event): void {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const value = new FormData(form).get("q");
  const q = typeof value === "string" ? value.trim() : "";
  if (ADDRESS_RE.test(q)) location.hash = `#/address/${q}`;
  else if (ID_RE.test(q)) location.hash = `#/attestation/${q}`;
  else location.hash = `#/search/${encodeURIComponent(q)}`;
}

document.getElementById("search")?.addEventListener("submit", search);
window.addEventListener("hashchange", () => void render());
void render();
