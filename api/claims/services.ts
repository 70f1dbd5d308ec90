/** What the claim paths need of the api's services: the composition root (api/services.ts) passes itself. */
import type { ApiServices } from "../services.ts";

export type ClaimServices = Pick<
  ApiServices,
  "config" | "now" | "reader" | "catalog" | "follower" | "attestor" | "registeredAttestors" | "nullifierKeys" | "write" | "logger"
>;
