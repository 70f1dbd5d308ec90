/** Node: health of the api, the rollup and the chain, as any client can read it, and this client's rate-limit state. */
import { get, getPlain, rateStates } from "../api.ts";
import { badge, card, facts, h, table } from "../dom.ts";

interface Healthcheck {
  status: string;
  version: string;
  core_enabled: boolean;
}
interface Health {
  attestor: string;
  rollup: string;
  blockchain: string;
}
interface Status {
  enabled: boolean;
  rollupConnected: boolean;
  dappAddress: string;
}

function tone(status: string): "ok" | "warn" | "bad" {
  return status === "ok" ? "ok" : status === "degraded" ? "warn" : "bad";
}

export async function nodeView(view: HTMLElement): Promise<void> {
  const [check, health, status] = await Promise.all([
    getPlain<Healthcheck>("/healthcheck"),
    get<Health>("/api/core/health"),
    get<Status>("/api/core/status"),
  ]);
  view.append(
    h("h1", {}, "Node"),
    h(
      "div",
      { class: "tiles" },
      tile("API", check.status, `version ${check.version}`),
      tile("Attestor", health.attestor, "reads and writes"),
      tile("Rollup", health.rollup, status.rollupConnected ? "inspect answering" : "not answering"),
      tile("Chain", health.blockchain, "JSON-RPC and the api's wallet"),
    ),
    card("Application", facts([["DApp address", h("span", { class: "mono" }, status.dappAddress)], ["Core enabled", String(check.core_enabled)]])),
    rateCard(),
  );
}

function tile(name: string, status: string, note: string): HTMLElement {
  return h("div", { class: `tile ${tone(status)}` }, h("div", { class: "tile-name" }, name), badge(status, tone(status)), h("div", { class: "muted small" }, note));
}

function rateCard(): HTMLElement {
  const rows = [...rateStates.values()].map((s) => [h("code", {}, s.path), `${s.remaining} of ${s.limit}`, new Date(s.resetAt * 1000).toLocaleTimeString()]);
  return card(
    "Your rate limits",
    rows.length === 0
      ? h("p", { class: "muted", id: "rate-state" }, "Rate limits are off on this api (no X-RateLimit headers).")
      : table(["Last request", "Remaining this window", "Window resets"], rows),
  );
}
