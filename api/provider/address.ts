/**
 * Which IP addresses a provider fetch may connect to (DECISIONS.md section 5). Only globally routable
 * unicast addresses pass; everything that reaches the host itself, a private network, a link (cloud
 * metadata at 169.254.169.254), a multicast group or a reserved range is refused. IPv6 forms that embed
 * an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the IPv4 address they carry, so
 * `::ffff:127.0.0.1` is as loopback as `127.0.0.1`.
 */
import { isIP } from "node:net";

/** Why an address is refused, or `undefined` when it is a public unicast address. */
export type AddressClass =
  | "unspecified"
  | "loopback"
  | "private"
  | "shared"
  | "link-local"
  | "unique-local"
  | "multicast"
  | "reserved"
  | "documentation"
  | "unparseable";

interface Range {
  prefix: Uint8Array;
  bits: number;
  kind: AddressClass;
}

function v4(text: string, bits: number, kind: AddressClass): Range {
  return { prefix: parseIPv4(text) as Uint8Array, bits, kind };
}

function v6(text: string, bits: number, kind: AddressClass): Range {
  return { prefix: parseIPv6(text) as Uint8Array, bits, kind };
}

// Ordered from the most to the least specific where ranges nest (0/8 holds 0.0.0.0).
const IPV4_REFUSED: Range[] = [
  v4("0.0.0.0", 32, "unspecified"),
  v4("0.0.0.0", 8, "reserved"),
  v4("10.0.0.0", 8, "private"),
  v4("100.64.0.0", 10, "shared"),
  v4("127.0.0.0", 8, "loopback"),
  v4("169.254.0.0", 16, "link-local"),
  v4("172.16.0.0", 12, "private"),
  v4("192.0.0.0", 24, "reserved"),
  v4("192.0.2.0", 24, "documentation"),
  v4("192.88.99.0", 24, "reserved"),
  v4("192.168.0.0", 16, "private"),
  v4("198.18.0.0", 15, "reserved"),
  v4("198.51.100.0", 24, "documentation"),
  v4("203.0.113.0", 24, "documentation"),
  v4("224.0.0.0", 4, "multicast"),
  v4("240.0.0.0", 4, "reserved"),
];

// Only 2000::/3 is global unicast; inside it these are not reachable destinations of their own.
const IPV6_GLOBAL = v6("2000::", 3, "reserved");
const IPV6_REFUSED_IN_GLOBAL: Range[] = [
  v6("2001::", 32, "reserved"), // Teredo: the real peer is hidden behind a relay
  v6("2001:2::", 48, "reserved"), // benchmarking
  v6("2001:10::", 28, "reserved"), // ORCHID
  v6("2001:20::", 28, "reserved"), // ORCHIDv2
  v6("2001:db8::", 32, "documentation"),
  v6("3fff::", 20, "documentation"),
];
// Outside 2000::/3, named for a useful error in logs; everything else there is "reserved".
const IPV6_NAMED: Range[] = [
  v6("::", 128, "unspecified"),
  v6("::1", 128, "loopback"),
  v6("fc00::", 7, "unique-local"),
  v6("fe80::", 10, "link-local"),
  v6("fec0::", 10, "link-local"), // deprecated site-local, still routed inside some networks
  v6("ff00::", 8, "multicast"),
];

function inRange(address: Uint8Array, range: Range): boolean {
  if (address.length !== range.prefix.length) return false;
  const whole = range.bits >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== range.prefix[i]) return false;
  const rest = range.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((address[whole] as number) & mask) === ((range.prefix[whole] as number) & mask);
}

/** Dotted-quad IPv4 (exactly four decimal parts) to 4 bytes, or `undefined`. */
export function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i] as string;
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    bytes[i] = n;
  }
  return bytes;
}

/** IPv6 text (with `::`, an optional trailing dotted quad and an optional `%zone`) to 16 bytes, or `undefined`. */
export function parseIPv6(text: string): Uint8Array | undefined {
  const bare = text.replace(/%.*$/, "");
  if (isIP(bare) !== 6) return undefined;
  let groups: string[];
  const halves = bare.split("::");
  if (halves.length > 2) return undefined;
  const split = (s: string): string[] => (s === "" ? [] : s.split(":"));
  const head = split(halves[0] as string);
  const tail = halves.length === 2 ? split(halves[1] as string) : [];
  // A trailing dotted quad stands for the last two groups.
  const expandQuad = (list: string[]): string[] | undefined => {
    const last = list[list.length - 1];
    if (last === undefined || !last.includes(".")) return list;
    const quad = parseIPv4(last);
    if (!quad) return undefined;
    const hi = (((quad[0] as number) << 8) | (quad[1] as number)).toString(16);
    const lo = (((quad[2] as number) << 8) | (quad[3] as number)).toString(16);
    return [...list.slice(0, -1), hi, lo];
  };
  const headX = halves.length === 2 ? head : expandQuad(head);
  const tailX = halves.length === 2 ? expandQuad(tail) : tail;
  if (!headX || !tailX) return undefined;
  if (halves.length === 2) {
    const missing = 8 - headX.length - tailX.length;
    if (missing < 1) return undefined;
    groups = [...headX, ...Array<string>(missing).fill("0"), ...tailX];
  } else {
    groups = headX;
  }
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = groups[i] as string;
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    const n = parseInt(g, 16);
    bytes[2 * i] = n >> 8;
    bytes[2 * i + 1] = n & 0xff;
  }
  return bytes;
}

function classifyIPv4(bytes: Uint8Array): AddressClass | undefined {
  for (const range of IPV4_REFUSED) if (inRange(bytes, range)) return range.kind;
  return undefined;
}

const V4_MAPPED = v6("::ffff:0:0", 96, "reserved");
const V4_COMPATIBLE = v6("::", 96, "reserved");
const V4_TRANSLATED = v6("::ffff:0:0:0", 96, "reserved"); // SIIT
const NAT64 = v6("64:ff9b::", 96, "reserved");
const NAT64_LOCAL = v6("64:ff9b:1::", 48, "private");
const SIX_TO_FOUR = v6("2002::", 16, "reserved");

function classifyIPv6(bytes: Uint8Array): AddressClass | undefined {
  for (const range of IPV6_NAMED) if (inRange(bytes, range)) return range.kind;
  // These carry an IPv4 destination; the packet ends up there, so judge that address.
  if (inRange(bytes, V4_MAPPED) || inRange(bytes, V4_TRANSLATED) || inRange(bytes, NAT64)) {
    return classifyIPv4(bytes.slice(12, 16));
  }
  if (inRange(bytes, V4_COMPATIBLE)) return classifyIPv4(bytes.slice(12, 16)) ?? "reserved";
  if (inRange(bytes, NAT64_LOCAL)) return "private";
  if (inRange(bytes, SIX_TO_FOUR)) return classifyIPv4(bytes.slice(2, 6));
  if (!inRange(bytes, IPV6_GLOBAL)) return "reserved";
  for (const range of IPV6_REFUSED_IN_GLOBAL) if (inRange(bytes, range)) return range.kind;
  return undefined;
}

/**
 * Why `address` (an IP literal as `dns.lookup` or a URL host gives it, IPv6 with or without brackets)
 * must not be connected to, or `undefined` when it is a public unicast address.
 */
export function refusedAddressClass(address: string): AddressClass | undefined {
  const text = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const four = parseIPv4(text);
  if (four) return classifyIPv4(four);
  const six = parseIPv6(text);
  if (six) return classifyIPv6(six);
  return "unparseable";
}

export function isPublicAddress(address: string): boolean {
  return refusedAddressClass(address) === undefined;
}
