/** What the queries need to weigh an attestation at a time: its schema's half-life (schemas are cached). */
import type { Hex } from "viem";
import type { Store } from "./db/store.ts";
import { hexToBuffer } from "./db/bytes.ts";

/** The half-life of the schema an attestation was made under (every attestation's schema exists). */
export function halfLifeOf(store: Store, schemaId: Hex): number {
  const schema = store.schemaById(hexToBuffer(schemaId));
  if (schema === undefined) throw new Error(`schema ${schemaId} of a stored attestation is missing`);
  return schema.freshnessHalfLife;
}
