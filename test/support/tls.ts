/**
 * A throwaway certificate authority for tests, made with the `openssl` CLI in a temp directory: a CA,
 * a server certificate it signs for `localhost`, 127.0.0.1 and ::1, one it signs for another name
 * (host-name mismatch), and a self-signed one no CA vouches for.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface KeyAndCert {
  key: string;
  cert: string;
  keyPath: string;
  certPath: string;
}

export interface TestPki {
  dir: string;
  /** The CA certificate (PEM) and where it is on disk, for NODE_EXTRA_CA_CERTS. */
  ca: KeyAndCert;
  /** Signed by the CA for DNS:localhost, IP:127.0.0.1, IP:::1. */
  localhost: KeyAndCert;
  /** Signed by the CA for DNS:other.invalid only. */
  wrongName: KeyAndCert;
  /** Self-signed for localhost: valid names, untrusted issuer. */
  selfSigned: KeyAndCert;
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("/usr/bin/openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

function read(dir: string, name: string): KeyAndCert {
  const keyPath = join(dir, `${name}.key`);
  const certPath = join(dir, `${name}.pem`);
  return { key: readFileSync(keyPath, "utf8"), cert: readFileSync(certPath, "utf8"), keyPath, certPath };
}

// P-256 keys: fast to make and accepted at every OpenSSL security level used in the tests.
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

function leafSignedByCa(dir: string, name: string, san: string): KeyAndCert {
  openssl(dir, ["req", "-new", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`]);
  writeFileSync(
    join(dir, `${name}.ext`),
    `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(dir, [
    "x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
    "-days", "2", "-sha256", "-extfile", `${name}.ext`, "-out", `${name}.pem`,
  ]);
  return read(dir, name);
}

export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "provider-pki-"));
  openssl(dir, [
    "req", "-x509", ...EC_KEY, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=provider test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const localhost = leafSignedByCa(dir, "localhost", "DNS:localhost,IP:127.0.0.1,IP:::1");
  const wrongName = leafSignedByCa(dir, "wrong-name", "DNS:other.invalid");
  openssl(dir, [
    "req", "-x509", ...EC_KEY, "-keyout", "self-signed.key", "-out", "self-signed.pem", "-days", "2",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
  ]);
  return {
    dir,
    ca: read(dir, "ca"),
    localhost,
    wrongName,
    selfSigned: read(dir, "self-signed"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
