/**
 * The private keys of the development mnemonic's accounts, the 30 devnode/hardhat.config.cjs funds.
 * Deriving one from the mnemonic (PBKDF2 of 2,048 rounds, then BIP-32) takes 150-300 ms of CPU in
 * JavaScript, and every process that signs as one (the devnode's claimer, the stack's deployer, the test
 * clients) paid it at start; the suites start hundreds (issue 51). test/devnode/hardhat-keys.test.ts
 * derives each one from the mnemonic and compares.
 */
import type { Hex } from "viem";
import { mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import keyTable from "./hardhat-keys.json" with { type: "json" };

export const DEV_MNEMONIC = "test test test test test test test test test test test junk";

/** Account n's key at m/44'/60'/0'/0/n, for n below 30: the table the chain funds too (devnode/hardhat.config.cjs reads it). */
export const HARDHAT_KEYS: readonly Hex[] = keyTable as Hex[];

/** The private key of a hardhat account of the development mnemonic (derived past the table). */
export function hardhatPrivateKey(index: number): Hex {
  const known = HARDHAT_KEYS[index];
  if (known !== undefined) return known;
  const key = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: index }).getHdKey().privateKey;
  if (key === null) throw new Error(`no private key for hardhat account #${index}`);
  return `0x${Buffer.from(key).toString("hex")}`;
}

/** Hardhat account `index` as a viem local account. */
export function hardhatAccount(index: number): PrivateKeyAccount {
  return privateKeyToAccount(hardhatPrivateKey(index));
}
