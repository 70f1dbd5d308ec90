/**
 * The specification's query interface as both versions' node servers serve it (DECISIONS.md sections 9,
 * 12 and 15): the payload of `GET /inspect/<percent-encoded payload>` decoded from its path, and the
 * Accepted/Rejected envelope written out. The v1 node answers its own inspects in it (v1/node-server.ts);
 * on v2 it is the adapter over the node's inspect (v2/spec-inspect.ts).
 */
import type { Hex } from "viem";
import type { InspectEnvelope } from "../common/wire.ts";

function isHexDigit(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}

function hexValue(byte: number): number {
  return byte <= 0x39 ? byte - 0x30 : (byte | 0x20) - 0x61 + 10;
}

/**
 * Percent-decodes the path after `/inspect/` into the payload bytes, slashes included, as the v1 node
 * does. A `%` not followed by two hex digits stays as it is (the decoding never fails), and `+` is not a
 * space (this is a path, not a form). A query string is handed on after it as sent: `?` and the raw query,
 * not decoded, as the v1 inspect-server does (DECISIONS.md section 12).
 */
export function decodeInspectPath(rawPath: string): Buffer {
  const query = rawPath.indexOf("?");
  if (query !== -1) {
    return Buffer.concat([decodeInspectPath(rawPath.slice(0, query)), Buffer.from(rawPath.slice(query), "latin1")]);
  }
  const path = rawPath;
  // latin1 keeps each byte of a raw (non-ASCII) request line as it arrived.
  const bytes = Buffer.from(path, "latin1");
  if (!bytes.includes(0x25)) return bytes;
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    const hi = bytes[i + 1];
    const lo = bytes[i + 2];
    if (byte === 0x25 && hi !== undefined && lo !== undefined && isHexDigit(hi) && isHexDigit(lo)) {
      out[n++] = hexValue(hi) * 16 + hexValue(lo);
      i += 2;
    } else {
      out[n++] = byte;
    }
  }
  return out.subarray(0, n);
}

/**
 * The v1 envelope as JSON, byte for byte what JSON.stringify gives for an InspectEnvelope, written out:
 * the payloads were checked to be 0x-hex when the dapp sent them (rollup-server.ts), and hex never needs
 * escaping, so the reports (an owner's page is 11 KiB of hex) are not scanned again on the hot path.
 */
export function envelopeJson(status: InspectEnvelope["status"], exceptionPayload: Hex | null, reports: readonly Hex[], processedInputCount: number): string {
  const exception = exceptionPayload === null ? "null" : `"${exceptionPayload}"`;
  const items = reports.map((payload) => `{"payload":"${payload}"}`).join(",");
  return `{"status":"${status}","exception_payload":${exception},"reports":[${items}],"processed_input_count":${processedInputCount}}`;
}
