/**
 * A consistent view of Debian's archive for debootstrap and apt, served on 127.0.0.1 while a root file
 * system is built (toolkit/riscv64.ts, bench/sections/machine.ts).
 *
 * Why: a mirror can serve an architecture's package index from another moment than the suite's signed
 * Release (seen here on 23 November 2026: trixie's Release was 13.8 while deb.debian.org still served the
 * 13.7 riscv64 index, and its by-hash copy answered 404). debootstrap and apt then stop with "Packages was
 * corrupt" / "Hash Sum mismatch" however often they retry, and CI with them. The view checks the suite's
 * InRelease with gpgv against Debian's archive keyring itself, fetches the architecture's index once,
 * compares it with the signed hashes, and serves a Release that names exactly the bytes it serves: the
 * signed ones when they agree, the served ones (said aloud) when they do not. Every package is still
 * checked by debootstrap and apt against that index; pool files are passed through from the mirror.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";

export const DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg";

export interface ArchiveViewOptions {
  mirror: string;
  suite: string;
  arch: string;
  component?: string;
  /** The keyring the suite's InRelease must verify against (Debian's archive keyring unless a test says). */
  keyring?: string;
  log: (line: string) => void;
}

export interface ArchiveView {
  /** The mirror URL to give debootstrap (with --no-check-gpg: the view checked the signature) and apt. */
  url: string;
  /** Whether the index served is the one the signed Release names. */
  indexSigned: boolean;
  /** Downloads the newest version of a package into `dir`, checked against the index; returns the file's path. */
  fetchPackage(name: string, dir: string): Promise<string>;
  close(): Promise<void>;
}

interface PackageEntry {
  version: string;
  filename: string;
  sha256: string;
}

/** Every version of `name` the index lists. */
function packageEntries(index: string, name: string): PackageEntry[] {
  const entries: PackageEntry[] = [];
  for (const stanza of index.split("\n\n")) {
    if (!stanza.startsWith(`Package: ${name}\n`)) continue;
    const field = (key: string) => new RegExp(`^${key}: (.*)$`, "m").exec(stanza)?.[1];
    const version = field("Version");
    const filename = field("Filename");
    const sha256 = field("SHA256");
    if (version !== undefined && filename !== undefined && sha256 !== undefined) entries.push({ version, filename, sha256 });
  }
  return entries;
}

/** Debian's version order (dpkg --compare-versions). */
function newer(a: string, b: string): boolean {
  return spawnSync("dpkg", ["--compare-versions", a, "gt", b]).status === 0;
}

interface IndexFile {
  path: string;
  bytes: Buffer;
}

/** The signed text of an InRelease, checked by gpgv against Debian's keyring; throws when it does not verify. */
function verifiedRelease(inRelease: Buffer, keyring: string): string {
  const dir = mkdtempSync(join(tmpdir(), "inrelease-"));
  try {
    const file = join(dir, "InRelease");
    writeFileSync(file, inRelease);
    const result = spawnSync("gpgv", ["--keyring", keyring, "--output", "-", file], { encoding: "buffer" });
    if (result.status !== 0) {
      throw new Error(`the suite's InRelease does not verify against ${keyring}: ${result.stderr.toString("utf8").trim()}`);
    }
    return result.stdout.toString("utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `{path: {sha256, size}}` from a Release's SHA256 section. */
function signedHashes(release: string): Map<string, { sha256: string; size: number }> {
  const hashes = new Map<string, { sha256: string; size: number }>();
  let inSection = false;
  for (const line of release.split("\n")) {
    if (!line.startsWith(" ")) {
      inSection = line.trim() === "SHA256:";
      continue;
    }
    if (!inSection) continue;
    const [sha256, size, path] = line.trim().split(/\s+/);
    if (sha256 !== undefined && size !== undefined && path !== undefined) hashes.set(path, { sha256, size: Number(size) });
  }
  return hashes;
}

async function download(url: string, timeoutMs = 120_000): Promise<Buffer> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

const digest = (algorithm: "md5" | "sha256", bytes: Buffer) => createHash(algorithm).update(bytes).digest("hex");

/**
 * The Release the view serves: the signed header (without Acquire-By-Hash, so clients ask for the plain
 * paths the view serves) and checksums of exactly the index files served, nothing else.
 */
function viewRelease(signed: string, files: readonly IndexFile[]): string {
  const header = signed
    .split("\n")
    .filter((line) => /^[A-Za-z-]+:/.test(line) && !/^(MD5Sum|SHA1|SHA256|SHA512|Acquire-By-Hash|Signed-By):/.test(line));
  const section = (name: string, algorithm: "md5" | "sha256") => [
    `${name}:`,
    ...files.map((file) => ` ${digest(algorithm, file.bytes)} ${String(file.bytes.length).padStart(16)} ${file.path}`),
  ];
  return [...header, ...section("MD5Sum", "md5"), ...section("SHA256", "sha256"), ""].join("\n");
}

export async function openArchiveView(options: ArchiveViewOptions): Promise<ArchiveView> {
  const mirror = options.mirror.replace(/\/+$/, "");
  const component = options.component ?? "main";
  const dists = `${mirror}/dists/${options.suite}`;
  const keyring = options.keyring ?? DEBIAN_KEYRING;
  const signed = verifiedRelease(await download(`${dists}/InRelease`), keyring);
  const hashes = signedHashes(signed);
  const version = /^Version: (.*)$/m.exec(signed)?.[1] ?? "?";
  // One index, gzip (debootstrap and apt both read it), served with its uncompressed form: apt looks the
  // index up in the Release by its uncompressed name.
  const path = `${component}/binary-${options.arch}/Packages.gz`;
  const gz = await download(`${dists}/${path}`);
  const plain = gunzipSync(gz);
  const files: IndexFile[] = [
    { path, bytes: gz },
    { path: path.replace(/\.gz$/, ""), bytes: plain },
  ];
  // The uncompressed form follows from the gzip one, so the gzip one is what is compared.
  const expected = hashes.get(path);
  const sha256 = digest("sha256", gz);
  const indexSigned = expected !== undefined && expected.sha256 === sha256 && expected.size === gz.length;
  if (indexSigned) {
    options.log(`Debian archive: ${options.suite} ${version} InRelease verified (${keyring}); the ${options.arch} index is the signed one`);
  } else {
    options.log(
      `Debian archive: ${options.suite}/${path} as served (${gz.length} bytes, sha256 ${sha256.slice(0, 16)}) is not the one its signed Release ` +
        `${version} names (${expected === undefined ? "none" : `${expected.size} bytes, sha256 ${expected.sha256.slice(0, 16)}`}): the mirror is out of step; ` +
        `the served index is used, and every package is checked against it`,
    );
  }
  const release = viewRelease(signed, files);
  const served = new Map(files.map((file) => [`/dists/${options.suite}/${file.path}`, file.bytes]));
  served.set(`/dists/${options.suite}/Release`, Buffer.from(release));

  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://view").pathname;
    const local = served.get(path);
    if (local !== undefined) {
      response.writeHead(200, { "Content-Length": local.length, "Content-Type": "application/octet-stream" });
      response.end(request.method === "HEAD" ? undefined : local);
      return;
    }
    // The view names only its own index files: InRelease, Release.gpg, by-hash and other indexes are absent,
    // so clients fall back to what the view serves.
    if (!path.startsWith("/pool/")) {
      response.writeHead(404).end();
      return;
    }
    fetch(`${mirror}${path}`, { method: request.method === "HEAD" ? "HEAD" : "GET", signal: AbortSignal.timeout(300_000) })
      .then((upstream) => {
        const length = upstream.headers.get("content-length");
        response.writeHead(upstream.status, length === null ? {} : { "Content-Length": length });
        if (upstream.body === null || request.method === "HEAD") {
          response.end();
          return;
        }
        Readable.fromWeb(upstream.body).on("error", (error) => response.destroy(error)).pipe(response);
      })
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(502);
        response.end(error instanceof Error ? error.message : String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const index = plain.toString("utf8");
  return {
    url: `http://127.0.0.1:${port}`,
    indexSigned,
    async fetchPackage(name, dir) {
      const entry = packageEntries(index, name).reduce<PackageEntry | undefined>((best, e) => (best === undefined || newer(e.version, best.version) ? e : best), undefined);
      if (entry === undefined) throw new Error(`Debian archive: ${options.suite} has no package ${name} for ${options.arch}`);
      // A package may be large (the kernel source is 150 MB): ten minutes, as for a pool file.
      const bytes = await download(`${mirror}/${entry.filename}`, 600_000);
      const sha256 = digest("sha256", bytes);
      if (sha256 !== entry.sha256) throw new Error(`Debian archive: ${entry.filename} has sha256 ${sha256}, its index says ${entry.sha256}`);
      const file = join(dir, basename(entry.filename));
      writeFileSync(file, bytes);
      return file;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
