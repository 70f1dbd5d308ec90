/**
 * The archive view of toolkit/debian-archive.ts against a real HTTP mirror on loopback whose InRelease
 * is signed with gpg by a throwaway key: the signature is checked, an index out of step with its signed
 * Release is served (and said) rather than failing, the Release served names exactly the bytes served,
 * packages are checked against the index.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openArchiveView, type ArchiveView } from "../../toolkit/debian-archive.ts";

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");
const INDEX_PATH = "main/binary-riscv64/Packages.gz";

let home: string;
let keyring: string;
let otherKeyring: string;

function gpg(args: readonly string[], input?: string): string {
  const result = spawnSync("gpg", ["--homedir", home, "--batch", "--yes", "--pinentry-mode", "loopback", "--passphrase", "", ...args], { input, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`gpg ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** A key made in `home` and exported, binary, to `file`; returns its fingerprint. */
function makeKey(name: string, file: string): string {
  gpg(["--quick-gen-key", `${name} <${name}@archive.test>`, "ed25519", "sign", "never"]);
  const fingerprint = /^fpr:+([0-9A-F]+):/m.exec(gpg(["--with-colons", "--list-keys", `${name}@archive.test`]))?.[1];
  if (fingerprint === undefined) throw new Error("no fingerprint");
  writeFileSync(file, spawnSync("gpg", ["--homedir", home, "--export", fingerprint]).stdout);
  return fingerprint;
}

const debs = {
  old: Buffer.from("hello 1.0 riscv64 package bytes"),
  new: Buffer.from("hello 1.10 riscv64 package bytes"),
};

function packagesIndex(): string {
  return [
    ["Package: hello", "Version: 1.10-1", `Filename: pool/main/h/hello/hello_1.10-1_riscv64.deb`, `SHA256: ${sha256(debs.new)}`],
    ["Package: hello-doc", "Version: 9.0", "Filename: pool/main/h/hello/hello-doc_9.0_all.deb", `SHA256: ${sha256("doc")}`],
    ["Package: hello", "Version: 1.9-1", `Filename: pool/main/h/hello/hello_1.9-1_riscv64.deb`, `SHA256: ${sha256(debs.old)}`],
  ]
    .map((lines) => lines.join("\n"))
    .join("\n\n")
    .concat("\n");
}

interface Mirror {
  url: string;
  /** What the mirror serves, by path; tests change it. */
  files: Map<string, Buffer>;
  server: Server;
}

/** An InRelease signed by `key`, naming `indexBytes` as the riscv64 index. */
function inRelease(key: string, indexBytes: Buffer): Buffer {
  const release = [
    "Origin: Debian",
    "Suite: stable",
    "Version: 13.8",
    "Codename: trixie",
    "Acquire-By-Hash: yes",
    "Architectures: amd64 riscv64",
    "Components: main",
    "SHA256:",
    ` ${sha256(indexBytes)} ${indexBytes.length} ${INDEX_PATH}`,
    ` ${sha256("other")} 5 main/binary-amd64/Packages.gz`,
    "",
  ].join("\n");
  return Buffer.from(gpg(["--local-user", key, "--clearsign", "--output", "-"], release));
}

async function startMirror(): Promise<Mirror> {
  const files = new Map<string, Buffer>();
  const server = createServer((request, response) => {
    const body = files.get(new URL(request.url ?? "/", "http://mirror").pathname);
    if (body === undefined) response.writeHead(404).end();
    else response.writeHead(200, { "Content-Length": body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/debian`, files, server };
}

let mirror: Mirror;
let archiveKey: string;
let otherKey: string;
const index = gzipSync(packagesIndex());

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "archive-test-"));
  keyring = join(home, "archive.gpg");
  otherKeyring = join(home, "other.gpg");
  archiveKey = makeKey("archive", keyring);
  otherKey = makeKey("other", otherKeyring);
  mirror = await startMirror();
  mirror.files.set("/debian/pool/main/h/hello/hello_1.10-1_riscv64.deb", debs.new);
  mirror.files.set("/debian/pool/main/h/hello/hello_1.9-1_riscv64.deb", debs.old);
  mirror.files.set(`/debian/dists/trixie/${INDEX_PATH}`, index);
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => mirror.server.close(resolve));
  // gpg started an agent for the throwaway home; it goes with it.
  spawnSync("gpgconf", ["--homedir", home, "--kill", "gpg-agent"]);
  rmSync(home, { recursive: true, force: true });
});

async function withView<T>(use: (view: ArchiveView, log: string[]) => Promise<T>, key = keyring): Promise<T> {
  const log: string[] = [];
  const view = await openArchiveView({ mirror: mirror.url, suite: "trixie", arch: "riscv64", keyring: key, log: (line) => log.push(line) });
  try {
    return await use(view, log);
  } finally {
    await view.close();
  }
}

async function get(url: string): Promise<{ status: number; body: Buffer }> {
  const response = await fetch(url);
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

describe("the archive view", () => {
  it("serves the signed index when the mirror agrees with its signed Release, and a Release naming exactly what it serves", async () => {
    mirror.files.set("/debian/dists/trixie/InRelease", inRelease(archiveKey, index));
    await withView(async (view, log) => {
      expect(view.indexSigned).toBe(true);
      expect(log.join("\n")).toMatch(/InRelease verified .*the riscv64 index is the signed one/);
      const release = (await get(`${view.url}/dists/trixie/Release`)).body.toString("utf8");
      expect(release).toContain("Codename: trixie");
      expect(release).not.toContain("Acquire-By-Hash");
      expect(release).not.toContain("binary-amd64");
      expect(release).toContain(` ${sha256(index)} ${String(index.length).padStart(16)} ${INDEX_PATH}`);
      const plain = Buffer.from(packagesIndex());
      expect(release).toContain(` ${sha256(plain)} ${String(plain.length).padStart(16)} main/binary-riscv64/Packages\n`);
      expect((await get(`${view.url}/dists/trixie/${INDEX_PATH}`)).body.equals(index)).toBe(true);
      // The view names only its own files; clients fall back to the plain Release it serves.
      expect((await get(`${view.url}/dists/trixie/InRelease`)).status).toBe(404);
      expect((await get(`${view.url}/dists/trixie/main/binary-riscv64/by-hash/SHA256/${sha256(index)}`)).status).toBe(404);
      // Pool files pass through from the mirror, as they are.
      const deb = await get(`${view.url}/pool/main/h/hello/hello_1.9-1_riscv64.deb`);
      expect(deb.status).toBe(200);
      expect(deb.body.equals(debs.old)).toBe(true);
      expect((await get(`${view.url}/pool/main/n/nothing.deb`)).status).toBe(404);
    });
  });

  it("serves the mirror's index when it is out of step with the signed Release, and says so", async () => {
    // The Release signs other bytes than the mirror serves (as deb.debian.org did for riscv64 on 23 November).
    mirror.files.set("/debian/dists/trixie/InRelease", inRelease(archiveKey, gzipSync("Package: older\n")));
    await withView(async (view, log) => {
      expect(view.indexSigned).toBe(false);
      expect(log.join("\n")).toMatch(/trixie\/main\/binary-riscv64\/Packages\.gz as served \(\d+ bytes, sha256 [0-9a-f]{16}\) is not the one its signed Release 13\.8 names .*out of step/);
      const release = (await get(`${view.url}/dists/trixie/Release`)).body.toString("utf8");
      expect(release).toContain(sha256(index));
      expect((await get(`${view.url}/dists/trixie/${INDEX_PATH}`)).body.equals(index)).toBe(true);
    });
  });

  it("refuses an InRelease that does not verify against the keyring", async () => {
    mirror.files.set("/debian/dists/trixie/InRelease", inRelease(otherKey, index));
    await expect(withView(async () => undefined)).rejects.toThrow(/InRelease does not verify against .*archive\.gpg/);
    mirror.files.set("/debian/dists/trixie/InRelease", Buffer.from(inRelease(archiveKey, index).toString("utf8").replace("Version: 13.8", "Version: 13.9")));
    await expect(withView(async () => undefined)).rejects.toThrow(/does not verify/);
    mirror.files.set("/debian/dists/trixie/InRelease", inRelease(otherKey, index));
    await expect(withView(async (view) => view.indexSigned, otherKeyring)).resolves.toBe(true);
  });

  it("fetches a package's newest version, checked against the index", async () => {
    mirror.files.set("/debian/dists/trixie/InRelease", inRelease(archiveKey, index));
    await withView(async (view) => {
      const dir = mkdtempSync(join(tmpdir(), "archive-deb-"));
      try {
        // 1.10 is newer than 1.9 in Debian's order, though not as text.
        const file = await view.fetchPackage("hello", dir);
        expect(file).toBe(join(dir, "hello_1.10-1_riscv64.deb"));
        expect(readFileSync(file).equals(debs.new)).toBe(true);
        await expect(view.fetchPackage("absent", dir)).rejects.toThrow("trixie has no package absent for riscv64");
        mirror.files.set("/debian/pool/main/h/hello/hello_1.10-1_riscv64.deb", Buffer.from("tampered"));
        await expect(view.fetchPackage("hello", dir)).rejects.toThrow(/hello_1\.10-1_riscv64\.deb has sha256 [0-9a-f]{64}, its index says/);
      } finally {
        mirror.files.set("/debian/pool/main/h/hello/hello_1.10-1_riscv64.deb", debs.new);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
