/**
 * The signer of a 32-byte digest from a 65-byte r ‖ s ‖ v signature (v 27/28 or 0/1), synchronously:
 * the dapp checks signatures inside an input's transaction, where viem's async recovery cannot run.
 * Pure JS (@noble/curves), as the riscv64 machine needs.
 */
import { secp256k1 } from "@noble/curves/secp256k1";
import { hexToBytes, type Address, type Hex } from "viem";
import { publicKeyToAddress } from "viem/accounts";

/** Lower-case address of the signer, or undefined when the bytes are no signature over this digest. */
export function recoverDigestSigner(digest: Hex, signature: Hex): Address | undefined {
  const bytes = hexToBytes(signature);
  if (bytes.length !== 65) return undefined;
  const v = bytes[64] as number;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  try {
    const point = secp256k1.Signature.fromCompact(bytes.subarray(0, 64)).addRecoveryBit(recovery).recoverPublicKey(hexToBytes(digest).slice());
    return publicKeyToAddress(`0x${point.toHex(false)}`).toLowerCase() as Address;
  } catch {
    return undefined;
  }
}
