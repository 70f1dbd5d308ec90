/** Node: health of the api, the rollup and the chain, as any client can read it, and this client's rate-limit state. */
import { get, getPlain, rateStates } from "../api.ts";
import { badge, card, facts, h, svg, table } from "../dom.ts";

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
  processedInputs: number | null;
  inputsPerMinute: number[];
  latestClaim: { epochHash: string; firstIndex: number; lastIndex: number; blockNumber: number } | null;
  contracts: { registry: string; gate: string } | null;
  readers: { url: string; health: string; processedInputCount: number; reason: string | null }[];
  consensus: Consensus | null;
}
/** Who claims the epochs (v2): the Authority, or a Quorum and its members' votes (docs/quorum.md). */
interface Consensus {
  kind: "authority" | "quorum";
  address: string;
  needed: number;
  members: { id: number; address: string; votes: number; wrongVotes: number }[];
  epochs: { index: number; lastBlock: number; computed: string | null; accepted: string | null; votes: Record<string, string> }[];
  waiting: { index: number }[];
  reason: string | null;
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
    card(
      "Application",
      facts([
        ["DApp address", h("span", { class: "mono" }, status.dappAddress)],
        ["Core enabled", String(check.core_enabled)],
        ["Processed inputs", h("span", { id: "processed-inputs" }, status.processedInputs === null ? "—" : status.processedInputs.toLocaleString("en-US"))],
        [
          "Latest claimed epoch",
          h(
            "span",
            { id: "latest-claim" },
            status.latestClaim === null
              ? "none yet"
              : `inputs ${status.latestClaim.firstIndex}–${status.latestClaim.lastIndex}, claimed in block ${status.latestClaim.blockNumber.toLocaleString("en-US")}`,
          ),
        ],
      ]),
    ),
    card(
      "On chain",
      facts([
        ["Attestation registry (EAS's IEAS)", h("span", { class: "mono", id: "registry-address" }, status.contracts?.registry ?? "none known")],
        ["Gate", h("span", { class: "mono", id: "gate-address" }, status.contracts?.gate ?? "none known")],
      ]),
    ),
    ...(status.readers.length === 0
      ? []
      : [
          card(
            "Readers",
            table(
              ["Reader", "Health", "Processed inputs"],
              status.readers.map((r) => [h("span", { class: "mono" }, r.url), badge(r.health, r.health === "serving" ? "ok" : "warn"), r.processedInputCount.toLocaleString("en-US")]),
            ),
          ),
        ]),
    ...(status.consensus === null ? [] : [consensusCard(status.consensus)]),
    card("Inputs per minute, last hour", perMinuteChart(status.inputsPerMinute)),
    rateCard(),
  );
}

/** The consensus, its members, and each recent epoch's votes: agreed (the accepted root), another root, or none. */
function consensusCard(c: Consensus): HTMLElement {
  const short = (root: string): string => `${root.slice(0, 10)}…`;
  const vote = (epoch: Consensus["epochs"][number], member: string): HTMLElement => {
    const root = epoch.votes[member];
    if (root === undefined) return h("span", { class: "muted" }, "—");
    const agreed = epoch.accepted === null ? root === epoch.computed : root === epoch.accepted;
    return badge(short(root), agreed ? "ok" : "bad");
  };
  const title = c.kind === "quorum" ? `Quorum: ${c.needed} of ${c.members.length} members accept a root` : "Authority: one key claims";
  return card(
    "Consensus",
    h(
      "div",
      { id: "consensus" },
      facts([
        ["Kind", title],
        ["Contract", h("span", { class: "mono" }, c.address)],
        ["Waiting", c.reason === null ? "nothing: every computed epoch is accepted" : badge(c.reason, "warn")],
      ]),
      table(
        ["Member", "Votes", "Wrong votes"],
        c.members.map((m) => [h("span", { class: "mono" }, m.address), String(m.votes), m.wrongVotes === 0 ? "0" : badge(String(m.wrongVotes), "bad")]),
      ),
      table(
        ["Epoch", "Accepted root", ...c.members.map((m) => `member ${m.id}`)],
        c.epochs.map((e) => [String(e.index), e.accepted === null ? h("span", { class: "muted" }, "not yet") : h("span", { class: "mono" }, short(e.accepted)), ...c.members.map((m) => vote(e, m.address))]),
      ),
    ),
  );
}

/** Sixty bars, oldest on the left; the tallest is the busiest minute. */
function perMinuteChart(counts: number[]): SVGElement | HTMLElement {
  if (counts.length === 0) return h("p", { class: "muted" }, "The node's GraphQL does not answer.");
  const most = Math.max(1, ...counts);
  const total = counts.reduce((a, b) => a + b, 0);
  const chart = svg("svg", { viewBox: "0 0 760 150", class: "per-minute", role: "img", "aria-label": `${total} inputs in the last hour` });
  counts.forEach((n, i) => {
    const height = (100 * n) / most;
    chart.append(svg("rect", { x: 30 + i * 12, y: 110 - height, width: 9, height: Math.max(n > 0 ? 2 : 0, height), rx: 1, fill: "#4f6bed" }));
  });
  chart.append(
    svg("line", { x1: 28, x2: 752, y1: 111, y2: 111, class: "tick" }),
    svg("text", { x: 30, y: 130, class: "tick-label" }, "60 min ago"),
    svg("text", { x: 752, y: 130, "text-anchor": "end", class: "tick-label" }, "now"),
    svg("text", { x: 30, y: 12, class: "tick-label" }, `busiest minute: ${most}; ${total} in the hour`),
  );
  return chart;
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
