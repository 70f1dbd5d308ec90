/** The address classifier behind the SSRF rules: which addresses a provider fetch may connect to. */
import { describe, expect, it } from "vitest";
import { isPublicAddress, parseIPv6, refusedAddressClass } from "../../api/provider/address.ts";

describe("refusedAddressClass", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "shared"],
    ["100.127.255.255", "shared"],
    ["169.254.169.254", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "reserved"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.18.0.1", "reserved"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd00:ec2::254", "unique-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link-local"],
    ["0:0:0:0:0:ffff:c0a8:0101", "private"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b:1::1", "private"],
    ["2002:7f00:1::", "loopback"],
    ["2001:db8::1", "documentation"],
    ["2001::1", "reserved"],
    ["100::1", "reserved"],
    ["not an address", "unparseable"],
    ["localhost", "unparseable"],
    ["1.2.3", "unparseable"],
  ])("%s is refused as %s", (address, kind) => {
    expect(refusedAddressClass(address)).toBe(kind);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    "8.8.8.8",
    "93.184.216.34",
    "1.1.1.1",
    "172.15.255.255",
    "172.32.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "169.253.255.255",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:81b::200e",
    "[2606:4700:4700::1111]",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:0808:0808::1",
  ])("%s is public", (address) => {
    expect(refusedAddressClass(address)).toBeUndefined();
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe("parseIPv6", () => {
  it("expands :: and a trailing dotted quad", () => {
    expect(Buffer.from(parseIPv6("::ffff:1.2.3.4") as Uint8Array).toString("hex")).toBe("00000000000000000000ffff01020304");
    expect(Buffer.from(parseIPv6("2001:db8::8:800:200c:417a") as Uint8Array).toString("hex")).toBe("20010db80000000000080800200c417a");
    expect(Buffer.from(parseIPv6("1:2:3:4:5:6:7:8") as Uint8Array).toString("hex")).toBe("00010002000300040005000600070008");
  });

  it.each(["1:2:3", "1::2::3", "12345::", "::g", "1.2.3.4"])("refuses %s", (text) => {
    expect(parseIPv6(text)).toBeUndefined();
  });
});
