/**
 * Who claims the application's epochs, as the devnode says it (`GET /consensus` on a v2 node,
 * devnode/v2/quorum-votes.ts): Cartesi's Authority or a Quorum, its members, each epoch's votes, the
 * epochs waiting for a quorum and the votes for a root the node did not compute (docs/quorum.md). Served
 * as `consensus` in `GET /api/core/status`; null on v1 (its Authority is all there is) and against a node
 * without the route, so a status is never refused for it.
 */
import { z } from "@hono/zod-openapi";
import { addressOut, id32 } from "./operations.ts";

// The same schema checks what the node said and documents what the api serves: addresses as the api
// serves every address, in lower case (readConsensus lowers them).
const hex32 = id32;
const address = addressOut;

export const consensusSchema = z.object({
  kind: z.enum(["authority", "quorum"]),
  address,
  epochLength: z.number().int().positive(),
  needed: z.number().int().positive(),
  members: z.array(z.object({ id: z.number().int().positive(), address, votes: z.number().int().nonnegative(), wrongVotes: z.number().int().nonnegative() })),
  epochs: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      lastBlock: z.number().int().nonnegative(),
      computed: hex32.nullable(),
      accepted: hex32.nullable(),
      votes: z.record(z.string(), hex32).describe("each member's vote (its address) for this epoch"),
    }),
  ),
  waiting: z.array(z.object({ index: z.number().int().nonnegative(), lastBlock: z.number().int().nonnegative(), votes: z.number().int().nonnegative(), needed: z.number().int().positive(), notVoted: z.array(address) })),
  wrongVotes: z.array(z.object({ member: address, epochIndex: z.number().int().nonnegative(), lastBlock: z.number().int().nonnegative(), voted: hex32, computed: hex32, transactionHash: hex32 })),
  reason: z.string().nullable().describe("why the oldest epoch waiting for a root is not accepted yet; null while none waits"),
});

export type ConsensusView = z.infer<typeof consensusSchema>;

/** The node's consensus (`<node>/consensus`), or null when it has none to say or does not answer within `maxMs`. */
export async function readConsensus(nodeUrl: string, maxMs: number): Promise<ConsensusView | null> {
  let body: unknown;
  try {
    const response = await fetch(`${nodeUrl}/consensus`, { signal: AbortSignal.timeout(maxMs) });
    if (!response.ok) return null;
    body = await response.json();
  } catch {
    return null;
  }
  const parsed = consensusSchema.safeParse(lowerAddresses(body));
  return parsed.success ? parsed.data : null;
}

/** Every 20-byte address in a JSON value, in lower case (keys too: the votes are keyed by member). */
function lowerAddresses(value: unknown): unknown {
  const lower = (text: string): string => (/^0x[0-9a-fA-F]{40}$/.test(text) ? text.toLowerCase() : text);
  if (typeof value === "string") return lower(value);
  if (Array.isArray(value)) return value.map(lowerAddresses);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [lower(k), lowerAddresses(v)]));
  return value;
}
