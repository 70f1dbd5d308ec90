/**
 * The owner's own consent from the address view: connect a browser wallet, and, when it is the address
 * on screen, sign a grant (or, in the grants-given table, a revoke) that the api relays and the rollup
 * checks. Without a wallet the card only says that one is needed.
 */
import type { Address, Hex } from "viem";
import { ApiFailure, get } from "../api.ts";
import { addressLink, ADDRESS_RE, card, h, short } from "../dom.ts";
import { WalletError, type OwnerWallet } from "../wallet.ts";

interface SchemaSummary {
  schema_id: string;
  name: string;
}

const DEFAULT_DAYS = 30;

/** What went wrong, as the api or the wallet said it: the code first, so it can be looked up. */
export function outcomeError(error: unknown): HTMLElement {
  let text: string;
  if (error instanceof ApiFailure) {
    const reason = error.details.reason;
    text = `${error.code}: ${error.message}${typeof reason === "string" ? ` (${reason})` : ""}`;
  } else if (error instanceof WalletError) {
    text = error.message;
  } else {
    text = error instanceof Error ? error.message : String(error);
  }
  return h("p", { class: "error", role: "alert" }, text);
}

/**
 * The "Grant access" card for `owner`. `changed` re-reads the grants after a grant, and after the wallet
 * connects or switches accounts (the grants-given table offers revokes to the connected owner only).
 */
export function grantCard(owner: string, wallet: OwnerWallet | undefined, changed: () => Promise<void>): HTMLElement {
  const body = h("div", { id: "grant-access" });
  const out = card("Grant access", body);
  if (wallet === undefined) {
    body.append(
      h(
        "p",
        { class: "muted", id: "wallet-needed" },
        "Granting access from this page needs an Ethereum wallet in this browser (an EIP-1193 wallet such as MetaMask): the owner signs the grant with it. Without one, grant through the API (POST /api/core/grant) or sign with npm run consent.",
      ),
    );
    return out;
  }
  const lower = owner.toLowerCase();
  // What the last action came to (a grant id, or the api's or the wallet's error): kept across redraws.
  const outcome = h("div", { class: "outcome" });
  const show = (element: HTMLElement | null): void => outcome.replaceChildren(...(element === null ? [] : [element]));
  const connectButton = (label: string) => h("button", { type: "button", id: "wallet-connect", onclick: () => void connect() }, label);

  const draw = async (): Promise<void> => {
    const account = wallet.account;
    if (account === undefined) {
      body.replaceChildren(
        h("p", { class: "muted" }, "The owner of this address can grant another address access to its data here, signing the consent with its own wallet: the rollup checks the signature, the api only relays it."),
        connectButton("Connect wallet"),
        outcome,
      );
      return;
    }
    if (account !== lower) {
      body.replaceChildren(
        h(
          "p",
          { class: "error", role: "alert", id: "wallet-status" },
          "Your wallet is connected as ",
          addressLink(account),
          ", which is not this address: only its owner can grant access to its data. Switch accounts in your wallet, or open your own address.",
        ),
        connectButton("Connect again"),
        outcome,
      );
      return;
    }
    const schemas = await get<SchemaSummary[]>("/api/core/schemas");
    body.replaceChildren(
      h(
        "p",
        { id: "wallet-status" },
        "Connected as ",
        addressLink(account),
        " (this address). Your first signature in this page signs you in; the token stays in the page's memory, and your wallet signs each grant and revoke.",
      ),
      schemas.length === 0 ? h("p", { class: "muted" }, "No schema is registered yet: there is nothing to grant.") : grantForm(schemas),
      outcome,
    );
  };

  // Every change of state ends here; a failure to draw (the schema list unreadable) is shown, never thrown.
  const render = async (): Promise<void> => {
    try {
      await draw();
    } catch (error) {
      body.replaceChildren(outcomeError(error));
    }
  };

  const grantForm = (schemas: SchemaSummary[]): HTMLElement => {
    const requester = h("input", { name: "grant-requester", placeholder: "Requester address (0x…)", "aria-label": "Requester address" }) as HTMLInputElement;
    const schema = h("select", { name: "grant-schema", "aria-label": "Schema" }, ...schemas.map((s) => h("option", { value: s.schema_id }, `${s.name} (${short(s.schema_id)})`))) as HTMLSelectElement;
    const days = h("input", { name: "grant-days", type: "number", min: 1, step: 1, value: DEFAULT_DAYS, "aria-label": "Expiry in days", class: "days" }) as HTMLInputElement;
    const submit = h("button", { type: "submit" }, "Sign and grant") as HTMLButtonElement;
    return h(
      "form",
      {
        class: "inline",
        id: "grant-form",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void grant(requester.value.trim(), schema.value, Number(days.value), submit);
        },
      },
      requester,
      schema,
      h("label", { class: "muted" }, days, " days"),
      submit,
    );
  };

  const connect = async (): Promise<void> => {
    show(null);
    try {
      await wallet.connect();
      await changed();
    } catch (error) {
      show(outcomeError(error));
    }
    await render();
  };

  const grant = async (requester: string, schemaId: string, days: number, submit: HTMLButtonElement): Promise<void> => {
    const invalid = !ADDRESS_RE.test(requester)
      ? `“${requester}” is not an address: 0x followed by 40 hex digits.`
      : !Number.isInteger(days) || days < 1
        ? "The expiry is a whole number of days, 1 or more."
        : undefined;
    if (invalid !== undefined) {
      show(h("p", { class: "error", role: "alert" }, invalid));
      return;
    }
    show(h("p", { class: "muted" }, "Waiting for your wallet, then for the rollup…"));
    submit.disabled = true;
    try {
      const granted = await wallet.grant({ requester: requester as Address, schemaId: schemaId as Hex, expiresAt: Math.floor(Date.now() / 1000) + days * 86400 });
      show(h("p", { id: "grant-result" }, "Granted with your signature: grant ", h("span", { class: "mono wrap", id: "grant-id" }, granted.grantId), "."));
      await changed();
    } catch (error) {
      show(outcomeError(error));
    } finally {
      submit.disabled = false;
    }
  };

  // The wallet switched accounts under this view: say who is connected now, and re-read the revokes offered.
  wallet.onChange = () => {
    if (!out.isConnected) return;
    show(null);
    void changed().then(render);
  };
  void render();
  return out;
}
