/**
 * Pure helpers of the real-stack hostile suite (stack-hostile.test.ts): the schema and claim bodies it
 * sends for a provider host or URL, the SSRF targets it tries (every spelling of loopback, private,
 * link-local and metadata addresses) and the DNS name resolving to loopback, and a lenient URI decoder.
 */

export const schemaFor = (domain: string) => ({
  provider: "http",
  flowType: "balance",
  domain,
  bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000], labels: ["low", "mid"] } },
  dataKeys: [],
  freshnessHalfLife: 60,
});
export const claimFor = (url: string, headers: Record<string, string> = {}) => ({
  provider: "http" as const,
  params: { url, method: "GET", headers },
  bucketDefinition: { field: "data.balance", boundaries: [0, 100, 1000], labels: ["low", "mid"] },
});

/** SSRF targets, as URL hosts: the host name the URL parser makes of each, and why it is refused. */
export const SSRF_HOSTS: [string, string][] = [
  ["127.0.0.1", "loopback"],
  ["127.0.0.2", "loopback /8"],
  ["2130706433", "loopback as a decimal number"],
  ["0x7f.1", "loopback in hex shorthand"],
  ["[::1]", "IPv6 loopback"],
  ["[::ffff:127.0.0.1]", "IPv4-mapped loopback"],
  ["0.0.0.0", "unspecified"],
  ["10.0.0.1", "private"],
  ["172.16.5.4", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "CGNAT"],
  ["169.254.169.254", "link-local cloud metadata"],
  ["[fe80::1]", "IPv6 link-local"],
  ["[fc00::1]", "IPv6 unique-local"],
  ["[::ffff:a9fe:a9fe]", "IPv4-mapped metadata"],
];
/**
 * `localhost` resolves to loopback through the hosts file: a DNS name that must be refused after
 * resolution. The stack's api trusts it (the provider is reached by that name), so a second api in this
 * process, trusting only 127.0.0.1, gets the DNS case.
 */
export const DNS_LOOPBACK = "localhost";

/** decodeURIComponent that leaves a text it cannot decode as it is (POST sends the raw text). */
export function decodeURIComponentLoose(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
