/**
 * The store's reads and writes of nullifiers (docs/nullifiers.md), prepared once like the rest of
 * store.ts: the registered key set and its shares, the nullifiers bound to owners, and the schemas that
 * depend on the key set's threshold.
 */
import { and, asc, eq, isNotNull, min, sql } from "drizzle-orm";
import type { DappDatabase } from "./open.ts";
import { nullifierKeySet, nullifierKeyShares, nullifiers, schemas } from "./schema.ts";

export type NullifierKeySetRow = typeof nullifierKeySet.$inferSelect;
export type NullifierKeyShareRow = typeof nullifierKeyShares.$inferSelect;
export type NullifierRow = typeof nullifiers.$inferSelect;
/** The registered nullifier key set with its shares, by index. */
export type StoredNullifierKeys = NullifierKeySetRow & { shares: NullifierKeyShareRow[] };

/** The key set is one row: a new one replaces it (set_nullifier_keys). */
const KEY_SET_ID = 1;

export function createNullifierStore(db: DappDatabase) {
  const ph = sql.placeholder;
  const q = {
    minUniqueQuorum: db.select({ quorum: min(schemas.attestorQuorum) }).from(schemas).where(isNotNull(schemas.accountIdField)).prepare(),
    keySet: db.select().from(nullifierKeySet).where(eq(nullifierKeySet.id, KEY_SET_ID)).prepare(),
    keyShares: db.select().from(nullifierKeyShares).orderBy(asc(nullifierKeyShares.shareIndex)).prepare(),
    putKeySet: db
      .insert(nullifierKeySet)
      .values({ id: KEY_SET_ID, inputIndex: ph("inputIndex"), itemIndex: ph("itemIndex"), threshold: ph("threshold"), groupKey: ph("groupKey"), registeredAt: ph("registeredAt") })
      .onConflictDoUpdate({
        target: nullifierKeySet.id,
        set: {
          inputIndex: sql`excluded.input_index`,
          itemIndex: sql`excluded.item_index`,
          threshold: sql`excluded.threshold`,
          groupKey: sql`excluded.group_key`,
          registeredAt: sql`excluded.registered_at`,
        },
      })
      .prepare(),
    clearKeyShares: db.delete(nullifierKeyShares).prepare(),
    insertKeyShare: db.insert(nullifierKeyShares).values({ shareIndex: ph("shareIndex"), commitment: ph("commitment"), attestor: ph("attestor") }).prepare(),
    owner: db
      .select({ owner: nullifiers.owner })
      .from(nullifiers)
      .where(and(eq(nullifiers.schemaId, ph("schemaId")), eq(nullifiers.nullifier, ph("nullifier"))))
      .prepare(),
    bind: db
      .insert(nullifiers)
      .values({ schemaId: ph("schemaId"), nullifier: ph("nullifier"), owner: ph("owner"), attestationId: ph("attestationId"), inputIndex: ph("inputIndex") })
      .prepare(),
  };

  return {
    /** The smallest attestor quorum among the schemas unique per account, or undefined when there is none. */
    minUniqueQuorum: (): number | undefined => q.minUniqueQuorum.get()?.quorum ?? undefined,
    /** The registered nullifier key set with its shares, or undefined before set_nullifier_keys. */
    nullifierKeys(): StoredNullifierKeys | undefined {
      const set = q.keySet.get();
      return set === undefined ? undefined : { ...set, shares: q.keyShares.all() };
    },
    /** Registers the key set, replacing the previous one and all its shares. */
    setNullifierKeys(set: Omit<NullifierKeySetRow, "id">, shares: readonly NullifierKeyShareRow[]): void {
      q.putKeySet.run(set);
      q.clearKeyShares.run();
      for (const share of shares) q.insertKeyShare.run(share);
    },
    /** The owner a nullifier of the schema is bound to, if any. */
    nullifierOwner: (schemaId: Buffer, nullifier: Buffer): Buffer | undefined => q.owner.get({ schemaId, nullifier })?.owner,
    bindNullifier: (row: NullifierRow): void => void q.bind.run(row),
  };
}
