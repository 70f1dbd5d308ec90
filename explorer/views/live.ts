/** Live: the api's WebSocket events as they arrive, narrowed by event and owner (the server filters). */
import { addressLink, ADDRESS_RE, attestationLink, badge, card, h, schemaLink } from "../dom.ts";

const EVENTS = ["attestation:created", "attestation:revoked", "grant:created", "grant:revoked", "schema:registered"] as const;
const KEEP = 200;

interface LiveEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Returns the cleanup that closes the socket when the view is left. */
export function liveView(view: HTMLElement, query: URLSearchParams): () => void {
  const wanted = query.get("event") ?? "";
  const owner = query.get("owner") ?? "";
  const eventSelect = h("select", { name: "event", "aria-label": "Event" }, h("option", { value: "" }, "All events"), ...EVENTS.map((e) => h("option", { value: e, selected: e === wanted }, e))) as HTMLSelectElement;
  const ownerInput = h("input", { name: "owner", placeholder: "Owner address (optional)", value: owner, "aria-label": "Owner" }) as HTMLInputElement;
  const status = h("span", { id: "live-status" }, badge("connecting", "warn"));
  const list = h("ol", { class: "feed", id: "feed" });
  const empty = h("p", { class: "muted", id: "feed-empty" }, "Waiting for events…");
  view.append(
    h("h1", {}, "Live ", status),
    card(
      "Filter",
      h(
        "form",
        {
          class: "inline",
          onsubmit: (event: Event) => {
            event.preventDefault();
            const params = new URLSearchParams();
            if (eventSelect.value !== "") params.set("event", eventSelect.value);
            if (ownerInput.value.trim() !== "") params.set("owner", ownerInput.value.trim());
            location.hash = `#/live${params.size > 0 ? `?${params}` : ""}`;
          },
        },
        eventSelect,
        ownerInput,
        h("button", { type: "submit" }, "Apply"),
      ),
    ),
    card("Events", empty, list),
  );
  if (owner !== "" && !ADDRESS_RE.test(owner)) {
    status.replaceChildren(badge("not connected", "bad"));
    empty.replaceWith(h("p", { class: "error", role: "alert" }, `“${owner}” is not an address: 0x followed by 40 hex digits.`));
    return () => undefined;
  }
  if (wanted !== "" && !(EVENTS as readonly string[]).includes(wanted)) {
    status.replaceChildren(badge("not connected", "bad"));
    empty.replaceWith(h("p", { class: "error", role: "alert" }, `“${wanted}” is not an event; one of ${EVENTS.join(", ")}.`));
    return () => undefined;
  }
  let closedByUs = false;
  let socket: WebSocket;
  let retryMs = RETRY_FIRST_MS;
  let retry: ReturnType<typeof setTimeout> | undefined;
  // A dropped connection (an api replica restarted, the balancer back) is opened again with backoff, and the
  // same subscription sent again; events sent meanwhile are not replayed (the rollup is the record).
  const connect = (): void => {
    socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify({ ...(wanted === "" ? {} : { subscribe: [wanted] }), owner: owner === "" ? null : owner.toLowerCase() }));
    });
    socket.addEventListener("message", (message: MessageEvent) => {
      const parsed = JSON.parse(String(message.data)) as LiveEvent;
      if (parsed.event === "subscribed") {
        retryMs = RETRY_FIRST_MS;
        status.replaceChildren(badge("connected", "ok"));
        return;
      }
      if (parsed.event === "error") {
        status.replaceChildren(badge(String(parsed.data.message ?? "error"), "bad"));
        return;
      }
      empty.remove();
      list.prepend(eventRow(parsed));
      while (list.children.length > KEEP) list.lastElementChild?.remove();
    });
    socket.addEventListener("close", () => {
      if (closedByUs) return;
      status.replaceChildren(badge("disconnected — reconnecting", "bad"));
      retry = setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    });
  };
  connect();
  return () => {
    closedByUs = true;
    if (retry !== undefined) clearTimeout(retry);
    socket.close();
  };
}

/** The live view's waits before it opens a dropped connection again. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;

function eventRow(event: LiveEvent): HTMLElement {
  const d = event.data;
  const text = (key: string): string => (typeof d[key] === "string" ? (d[key] as string) : "");
  const parts: (HTMLElement | string)[] = [];
  if (text("claimId") !== "") parts.push(attestationLink(text("claimId")));
  if (text("owner") !== "") parts.push("owner ", addressLink(text("owner")));
  if (text("requester") !== "") parts.push("requester ", addressLink(text("requester")));
  if (text("schema_id") !== "") parts.push("schema ", schemaLink(text("schema_id")));
  if (text("schemaId") !== "") parts.push("schema ", schemaLink(text("schemaId")));
  if (text("bucket") !== "") parts.push(badge(text("bucket"), "info"));
  if (text("provider") !== "") parts.push(h("span", { class: "muted small" }, `via ${text("provider")}`));
  if (text("reason") !== "") parts.push(h("span", { class: "muted small" }, `“${text("reason")}”`));
  const tone = event.event === "grant:revoked" || event.event === "attestation:revoked" ? "bad" : event.event === "attestation:created" ? "ok" : "info";
  return h("li", { class: "event", "data-event": event.event }, h("time", {}, new Date().toLocaleTimeString()), badge(event.event, tone), h("span", { class: "parts" }, ...parts.flatMap((p) => [p, " "])));
}
