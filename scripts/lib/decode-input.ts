/**
 * `npm run input -- decode <hex>`: the JSON an advance payload means. JSON text is itself; a compact
 * batch (common/compact-batch.ts) is the JSON `batch` of the same items, its schemas looked up by their
 * short index (`fetchSchema`, the rollup's `provider_schema` by `schema_index`). An item that cannot be
 * read is shown as `{"unreadable": {code, message}}`, as the dapp would report it.
 */
import { CompactProblem, compactItemToJson, isCompactPayload, parseCompactBatch, type CompactContainer, type CompactSchema } from "../../common/compact-batch.ts";
import { hexToBytes } from "../../common/hex.ts";

export interface DecodedInput {
  /** What the payload means: the JSON input, or the JSON batch of a compact batch's items. */
  json: unknown;
  /** Why (part of) it cannot be read, as the dapp would say; empty when every byte was understood. */
  problems: string[];
}

export async function decodeInputPayload(payload: string, fetchSchema: (index: number) => Promise<CompactSchema | undefined>): Promise<DecodedInput> {
  let bytes: Uint8Array;
  try {
    bytes = hexToBytes(payload);
  } catch {
    return { json: null, problems: ["not 0x-prefixed hex"] };
  }
  if (!isCompactPayload(bytes)) {
    try {
      return { json: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as unknown, problems: [] };
    } catch {
      return { json: null, problems: ["neither a compact batch nor UTF-8 JSON"] };
    }
  }
  let container: CompactContainer;
  try {
    container = parseCompactBatch(bytes);
  } catch (error) {
    if (error instanceof CompactProblem) return { json: null, problems: [error.message] };
    throw error;
  }
  // First pass: which schema indexes the items name; then each is asked for once.
  const wanted = new Set<number>();
  for (let i = 0; i < container.items.length; i++) {
    try {
      compactItemToJson(container, i, (index) => {
        wanted.add(index);
        return undefined;
      });
    } catch {
      // Read again below, with the schemas.
    }
  }
  const schemas = new Map<number, CompactSchema | undefined>();
  for (const index of wanted) schemas.set(index, await fetchSchema(index));
  const problems: string[] = [];
  const items = container.items.map((_, i) => {
    try {
      return compactItemToJson(container, i, (index) => schemas.get(index));
    } catch (error) {
      if (!(error instanceof CompactProblem)) throw error;
      problems.push(error.message);
      return { unreadable: { code: error.code, message: error.message } };
    }
  });
  return { json: { type: "batch", params: { items } }, problems };
}
