/**
 * A local certificate authority and a `localhost` server certificate it signs, made with the `openssl`
 * command line into a directory and reused while they stay valid. The demo provider serves HTTPS with
 * them, so the TLS attestor (which needs https and a host name) has something real to prove.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface LocalCa {
  /** The CA certificate: what clients add to their roots (ATTESTOR_CA_FILES, NODE_EXTRA_CA_CERTS). */
  caPath: string;
  keyPath: string;
  certPath: string;
}

// P-256: quick to make, and offered by every TLS 1.2/1.3 client involved (node, attestor-core's TLS).
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** True while `certPath` is valid for at least another day. */
function stillValid(certPath: string, dir: string): boolean {
  try {
    openssl(dir, ["x509", "-checkend", "86400", "-noout", "-in", certPath]);
    return true;
  } catch {
    return false;
  }
}

export function ensureLocalCa(dir: string, days = 30): LocalCa {
  const ca: LocalCa = { caPath: join(dir, "ca.pem"), keyPath: join(dir, "localhost.key"), certPath: join(dir, "localhost.pem") };
  if (existsSync(ca.caPath) && existsSync(ca.certPath) && existsSync(ca.keyPath) && stillValid(ca.certPath, dir)) return ca;
  mkdirSync(dir, { recursive: true });
  openssl(dir, [
    "req", "-x509", ...EC_KEY, "-keyout", "ca.key", "-out", "ca.pem", "-days", String(days), "-subj", "/CN=rollup-attestation local CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  openssl(dir, ["req", "-new", ...EC_KEY, "-keyout", "localhost.key", "-out", "localhost.csr", "-subj", "/CN=localhost"]);
  writeFileSync(
    join(dir, "localhost.ext"),
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
  );
  openssl(dir, [
    "x509", "-req", "-in", "localhost.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
    "-days", String(days), "-sha256", "-extfile", "localhost.ext", "-out", "localhost.pem",
  ]);
  return ca;
}

export function readPem(path: string): string {
  return readFileSync(path, "utf8");
}
