/**
 * What the api must know that no query returns: the schemas' registration content (the `domain` a claim
 * is matched on is not in any query result) and the latest encryption public key (the dapp has no key
 * query). Both are learned from the payloads of the inputs behind `schema:registered` and
 * `key:registered` notices, and from the api's own accepted registrations.
 */
import type { Hex } from "viem";
import { hexToUtf8 } from "../../common/hex.ts";
import { keyIdOf, schemaIdOf, type SchemaContent } from "../../common/ids.ts";
import type { InputParams, NoticeEvent } from "../../common/wire.ts";

export interface KnownKey {
  keyId: Hex;
  publicKey: string;
  inputIndex: number;
}

export class RegistryCatalog {
  private readonly schemas = new Map<string, SchemaContent>();
  private key: KnownKey | undefined;

  get latestKey(): KnownKey | undefined {
    return this.key;
  }

  schemaContent(schemaId: string): SchemaContent | undefined {
    return this.schemas.get(schemaId.toLowerCase());
  }

  /** Schemas whose provider and domain match, in registration order. */
  schemasFor(provider: string, domain: string): { schemaId: Hex; content: SchemaContent }[] {
    const out: { schemaId: Hex; content: SchemaContent }[] = [];
    for (const [schemaId, content] of this.schemas) {
      if (content.provider === provider && content.domain.toLowerCase() === domain.toLowerCase()) {
        out.push({ schemaId: schemaId as Hex, content });
      }
    }
    return out;
  }

  learnSchema(content: SchemaContent): Hex {
    const schemaId = schemaIdOf(content);
    if (!this.schemas.has(schemaId)) this.schemas.set(schemaId, content);
    return schemaId;
  }

  /** Keys arrive in input order; a later input's key replaces an earlier one, never the reverse. */
  learnKey(publicKeyBase64: string, inputIndex: number): Hex {
    const keyId = keyIdOf(new Uint8Array(Buffer.from(publicKeyBase64, "base64")));
    if (this.key === undefined || inputIndex >= this.key.inputIndex) {
      this.key = { keyId, publicKey: publicKeyBase64, inputIndex };
    }
    return keyId;
  }

  /** Applies one notice; the input payload is only trusted when it hashes to the id the dapp announced. */
  learnFromNotice(event: NoticeEvent, inputIndex: number, inputPayload: Hex): void {
    if (event.event !== "schema:registered" && event.event !== "key:registered") return;
    let envelope: { type?: unknown; params?: unknown };
    try {
      envelope = JSON.parse(hexToUtf8(inputPayload)) as { type?: unknown; params?: unknown };
    } catch {
      return;
    }
    if (typeof envelope.params !== "object" || envelope.params === null) return;
    if (event.event === "schema:registered" && envelope.type === "register_schema") {
      const p = envelope.params as InputParams["register_schema"];
      const content: SchemaContent = {
        provider: p.provider,
        flowType: p.flowType,
        domain: p.domain,
        bucketDefinitions: p.bucketDefinitions,
        dataKeys: p.dataKeys,
        freshnessHalfLife: p.freshnessHalfLife,
      };
      try {
        if (schemaIdOf(content) === event.data.schema_id.toLowerCase()) this.learnSchema(content);
      } catch {
        // Content that cannot be hashed canonically was not what the dapp registered.
      }
    }
    if (event.event === "key:registered" && envelope.type === "register_encryption_key") {
      const p = envelope.params as InputParams["register_encryption_key"];
      if (typeof p.publicKey !== "string") return;
      const bytes = Buffer.from(p.publicKey, "base64");
      if (bytes.length === 32 && keyIdOf(new Uint8Array(bytes)) === event.data.keyId.toLowerCase()) {
        this.learnKey(p.publicKey, inputIndex);
      }
    }
  }
}
