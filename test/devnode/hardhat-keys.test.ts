/**
 * The table of the development mnemonic's keys (devnode/hardhat-keys.ts) is what the mnemonic derives:
 * BIP-39's seed computed once here, each account at m/44'/60'/0'/0/n from it, and account 0 also through
 * viem's own mnemonicToAccount; and they are the accounts the chain (hardhat) funds.
 */
import { createRequire } from "node:module";
import { pbkdf2 } from "@noble/hashes/pbkdf2";
import { sha512 } from "@noble/hashes/sha2";
import { describe, expect, it } from "vitest";
import { HDKey, hdKeyToAccount, mnemonicToAccount } from "viem/accounts";
import { DEV_MNEMONIC, HARDHAT_KEYS, hardhatAccount, hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";

describe("the development mnemonic's keys", () => {
  it("are the 30 accounts hardhat funds, each derived from the mnemonic", () => {
    const seed = pbkdf2(sha512, DEV_MNEMONIC.normalize("NFKD"), "mnemonic", { c: 2048, dkLen: 64 });
    const master = HDKey.fromMasterSeed(seed);
    expect(HARDHAT_KEYS).toHaveLength(30);
    HARDHAT_KEYS.forEach((key, n) => {
      const derived = hdKeyToAccount(master, { addressIndex: n }).getHdKey().privateKey;
      expect(`0x${Buffer.from(derived ?? new Uint8Array()).toString("hex")}`, `account ${n}`).toBe(key);
      expect(hardhatAccount(n).address).toBe(hdKeyToAccount(master, { addressIndex: n }).address);
    });
    expect(hardhatAccount(0).address).toBe(mnemonicToAccount(DEV_MNEMONIC).address);
    // The first is hardhat's well-known account #0.
    expect(hardhatAccount(0).address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
  });

  it("are what the chain funds, 10,000 ETH each, as hardhat funds its mnemonic's accounts (the chain derives none)", () => {
    const config = createRequire(import.meta.url)("../../devnode/hardhat.config.cjs") as { networks: { hardhat: { accounts: { privateKey: string; balance: string }[] } } };
    const { accounts } = config.networks.hardhat;
    expect(accounts.map((account) => account.privateKey)).toEqual(HARDHAT_KEYS);
    expect(new Set(accounts.map((account) => BigInt(account.balance)))).toEqual(new Set([10_000n * 10n ** 18n]));
  });

  it("past the table, derives the key from the mnemonic", () => {
    expect(hardhatAccount(30).address).toBe(mnemonicToAccount(DEV_MNEMONIC, { addressIndex: 30 }).address);
    expect(hardhatPrivateKey(30)).not.toBe(hardhatPrivateKey(29));
  });
});
