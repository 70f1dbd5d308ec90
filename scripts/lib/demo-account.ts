/**
 * The demo provider's accounts (scripts/demo-provider.ts): each bearer token opens its own account, as a
 * bank's credentials do, named by a digest of the token so that no two tokens share one and the name
 * says nothing of the token.
 */
import { createHash } from "node:crypto";

/** The account id the demo provider answers (`data.accountId`) for a request's Authorization header. */
export function demoAccountOf(authorization: string | undefined): string {
  const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1] ?? "";
  return `DEMO-${createHash("sha256").update(token).digest("hex").slice(0, 12).toUpperCase()}`;
}
