/**
 * The riscv64 root file system the dapp runs in here, as in the Cartesi machine: Debian trixie from
 * Debian's archive with its node, and better-sqlite3 at the lock file's version cross-compiled for it on
 * the host (Debian's g++-riscv64-linux-gnu, against the root file system's own node headers), run under
 * qemu-user through binfmt_misc in a chroot. Used by `npm run riscv64` and by
 * `npm run bench -- --riscv64`. Cached outside the clone (RISCV64_CACHE), keyed by what it is made of;
 * the cache speeds later runs and is never needed. Needs root (debootstrap, chroot, mounts).
 */
import { spawn, spawnSync, type SpawnOptions, type SpawnSyncOptions } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { imageNodeFlags, imageNodeMajor } from "./dapp-build.ts";
import { DEBIAN_KEYRING, openArchiveView, type ArchiveView } from "./debian-archive.ts";
import { UsageError } from "./usage-error.ts";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const DEFAULT_RISCV64_CACHE = "/var/cache/rollup-attestation-riscv64";

const started = Date.now();
export function step(text: string): void {
  process.stderr.write(`[riscv64 ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${text}\n`);
}

/** Runs a command with its output shown; throws with the command line when it fails. */
function sh(file: string, args: readonly string[], options: SpawnSyncOptions = {}): void {
  const result = spawnSync(file, args, { stdio: "inherit", ...options });
  if (result.status !== 0) throw new Error(`${file} ${args.join(" ")} failed (${result.error?.message ?? `exit ${String(result.status ?? result.signal)}`})`);
}

/** A command with only its errors shown (apt, tar, make: their output would bury the bench's); throws when it fails. */
export function runQuietly(file: string, args: readonly string[], cwd?: string): void {
  sh(file, args, { cwd, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

/** `sh` for steps during which this process must keep serving (the archive view answers debootstrap and apt). */
function shAsync(file: string, args: readonly string[], options: SpawnOptions = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: "inherit", ...options });
    child.on("error", (error) => reject(new Error(`${file} ${args.join(" ")} failed (${error.message})`)));
    child.on("exit", (code, signal) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(" ")} failed (exit ${String(code ?? signal)})`))));
  });
}

/** A command's stdout, or undefined when it fails. */
function output(file: string, args: readonly string[]): string | undefined {
  const result = spawnSync(file, args, { encoding: "utf8" });
  return result.status === 0 ? result.stdout : undefined;
}

/** What the root file system is made of: any change makes a new cache entry. */
const SUITE = "trixie";
const MIRROR = "http://deb.debian.org/debian";
/** Inside: node, and its headers for the cross build (no compiler: compiling under qemu took ~8 minutes, on the host ~1.5). */
const PACKAGES = ["nodejs", "libnode-dev", "ca-certificates"];
/** The host's cross toolchain for riscv64, and what node-gyp drives it with. */
const CROSS = { CC: "riscv64-linux-gnu-gcc", CXX: "riscv64-linux-gnu-g++", LINK: "riscv64-linux-gnu-g++", AR: "riscv64-linux-gnu-ar" };
/** Pure-JS packages better-sqlite3 needs at run time, copied from the host's node_modules. */
const RUNTIME_JS = ["bindings", "file-uri-to-path"];
/** Network steps are retried: a mirror or the registry failing once must not fail CI. */
async function withRetries(what: string, attempt: () => void | Promise<void>, tries = 3): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (i >= tries) throw error;
      step(`${what} failed (${error instanceof Error ? error.message : String(error)}); retrying (${i + 1}/${tries}) in ${10 * i} s`);
      await new Promise((resolve) => setTimeout(resolve, 10_000 * i));
    }
  }
}

/** Runs `use` with a consistent view of Debian's archive for riscv64 (toolkit/debian-archive.ts). */
export async function withArchiveView<T>(use: (view: ArchiveView) => Promise<T>): Promise<T> {
  let view: ArchiveView | undefined;
  await withRetries("reading Debian's archive", async () => {
    view = await openArchiveView({ mirror: MIRROR, suite: SUITE, arch: "riscv64", log: step });
  });
  if (view === undefined) throw new Error("no view of Debian's archive");
  try {
    return await use(view);
  } finally {
    await view.close();
  }
}

/**
 * apt-get install inside a riscv64 root file system, from the archive view; the root file system's
 * sources.list names Debian's mirror again afterwards.
 */
export async function aptInstall(dir: string, packages: readonly string[]): Promise<void> {
  await withArchiveView(async (view) => {
    const sources = join(dir, "etc", "apt", "sources.list");
    const conf = join(dir, "etc", "apt", "apt.conf.d", "90archive-view");
    // trusted=yes: the view has checked the suite's signature itself and serves an unsigned Release.
    writeFileSync(sources, `deb [trusted=yes] ${view.url} ${SUITE} main\n`);
    writeFileSync(conf, 'Acquire::Languages "none";\n');
    const unmount = mountAll({ dir }, ["proc", "dev"]);
    try {
      await withRetries("apt-get install", () =>
        shAsync("chroot", [dir, "/bin/sh", "-c", `apt-get update -q && apt-get install -y -q --no-install-recommends ${packages.join(" ")} && apt-get clean && rm -rf /var/lib/apt/lists/*`], {
          env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
          stdio: ["ignore", "ignore", "inherit"],
        }),
      );
    } finally {
      unmount();
      writeFileSync(sources, `deb ${MIRROR} ${SUITE} main\n`);
      rmSync(conf, { force: true });
    }
  });
}

function lockedVersion(name: string): string {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (version === undefined) throw new Error(`package-lock.json has no ${name}`);
  return version;
}

/** The node-gyp npm ships with (npm's own install scripts use it): no download, the version npm trusts. */
function npmNodeGyp(): string {
  const npmCli = output("sh", ["-c", "readlink -f \"$(command -v npm)\""])?.trim();
  const candidates = [
    ...(npmCli === undefined ? [] : [resolve(npmCli, "..", "..", "node_modules", "node-gyp", "bin", "node-gyp.js")]),
    resolve(process.execPath, "..", "..", "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js"),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error(`npm's node-gyp is not where npm keeps it (looked in ${candidates.join(", ")})`);
  return found;
}

/**
 * qemu-user for riscv64 registered with binfmt_misc, debootstrap, gpgv and the riscv64 cross compiler;
 * installed from Debian when missing.
 */
export async function prepareHost(): Promise<void> {
  if (process.getuid?.() !== 0) throw new UsageError("needs root (debootstrap, chroot and mounts)");
  const tools = ["qemu-riscv64-static", "debootstrap", "update-binfmts", "gpgv", CROSS.CXX];
  const missing = tools.filter((tool) => output("sh", ["-c", `command -v ${tool}`]) === undefined);
  if (missing.length > 0 || !existsSync(DEBIAN_KEYRING)) {
    step(`installing qemu-user-static binfmt-support debootstrap gpgv debian-archive-keyring g++-riscv64-linux-gnu (missing: ${[...missing, ...(existsSync(DEBIAN_KEYRING) ? [] : [DEBIAN_KEYRING])].join(", ")})`);
    await withRetries("apt-get", () => {
      sh("apt-get", ["update"]);
      sh("apt-get", ["install", "-y", "--no-install-recommends", "qemu-user-static", "binfmt-support", "debootstrap", "gpgv", "debian-archive-keyring", "g++-riscv64-linux-gnu", "make", "python3"], {
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      });
    });
  }
  if (!existsSync("/proc/sys/fs/binfmt_misc/register")) sh("mount", ["-t", "binfmt_misc", "binfmt_misc", "/proc/sys/fs/binfmt_misc"]);
  if (!existsSync("/proc/sys/fs/binfmt_misc/qemu-riscv64")) sh("update-binfmts", ["--enable", "qemu-riscv64"]);
  if (!existsSync("/proc/sys/fs/binfmt_misc/qemu-riscv64")) throw new Error("qemu-riscv64 is not registered with binfmt_misc (update-binfmts --enable qemu-riscv64)");
}

export interface Rootfs {
  dir: string;
  key: string;
}

/** Builds the root file system into the cache unless a complete one with the same key is there. */
export async function ensureRootfs(cache: string): Promise<Rootfs> {
  const sqliteVersion = lockedVersion("better-sqlite3");
  const key = createHash("sha256")
    .update(JSON.stringify({ SUITE, MIRROR, PACKAGES, sqliteVersion, RUNTIME_JS, recipe: 2 }))
    .digest("hex")
    .slice(0, 16);
  const dir = join(cache, key, "rootfs");
  const complete = join(cache, key, "complete");
  if (existsSync(complete)) {
    step(`root file system ${dir} (cached)`);
    return { dir, key };
  }
  const building = join(cache, key, "rootfs.building");
  // debootstrap resolves only the base system's dependencies well: it brings a minimal trixie (its second
  // stage runs under qemu), and apt inside installs node and the toolchain with their dependencies. Both
  // read Debian's archive through a view that checked the suite's signature (--no-check-gpg: the view's
  // Release is unsigned).
  step(`debootstrap ${SUITE} riscv64, minimal (second stage under qemu; ~1 min cold)`);
  await withArchiveView((view) =>
    withRetries("debootstrap", async () => {
      rmSync(building, { recursive: true, force: true });
      mkdirSync(building, { recursive: true });
      await shAsync("debootstrap", ["--arch=riscv64", "--variant=minbase", "--no-check-gpg", SUITE, building, view.url], { stdio: ["ignore", "ignore", "inherit"] });
    }),
  );
  cpSync("/etc/resolv.conf", join(building, "etc", "resolv.conf"), { dereference: true });
  step(`apt-get install ${PACKAGES.join(" ")} (inside, under qemu; ~2 min cold)`);
  await aptInstall(building, PACKAGES);

  // better-sqlite3 from the registry (npm pack on the host; npm's own install scripts die under emulation),
  // cross-compiled on the host by npm's own node-gyp against the root file system's node headers (its
  // NODE_MODULE_VERSION), then loaded inside as the check.
  const native = join(building, "opt", "native", "node_modules");
  mkdirSync(native, { recursive: true });
  step(`better-sqlite3 ${sqliteVersion}: fetched with npm pack, cross-compiled on the host with node-gyp (~1.5 min)`);
  await withRetries("npm pack", () => sh("npm", ["pack", `better-sqlite3@${sqliteVersion}`, "--pack-destination", native, "--silent"], { stdio: ["ignore", "ignore", "inherit"] }));
  sh("tar", ["-xzf", join(native, `better-sqlite3-${sqliteVersion}.tgz`), "-C", native]);
  renameSync(join(native, "package"), join(native, "better-sqlite3"));
  rmSync(join(native, `better-sqlite3-${sqliteVersion}.tgz`));
  const log = join(building, "opt", "native", "build.log");
  const built = spawnSync(process.execPath, [npmNodeGyp(), "rebuild", "--release", "--arch=riscv64", `--nodedir=${join(building, "usr")}`, "-j", "2"], {
    cwd: join(native, "better-sqlite3"),
    env: { ...process.env, ...CROSS },
    encoding: "utf8",
  });
  writeFileSync(log, `${built.stdout ?? ""}${built.stderr ?? ""}`);
  if (built.status !== 0) throw new Error(`node-gyp's cross build of better-sqlite3 failed (its log: ${log}):\n${(built.stderr ?? "").split("\n").slice(-40).join("\n")}`);
  for (const name of RUNTIME_JS) cpSync(join(root, "node_modules", name), join(native, name), { recursive: true, dereference: true });
  rmSync(join(native, "better-sqlite3", "build", "Release", "obj.target"), { recursive: true, force: true });
  sh("chroot", [building, "/usr/bin/node", "-e", "const D=require('/opt/native/node_modules/better-sqlite3');const db=new D(':memory:');console.log('better-sqlite3 on '+process.arch+': sqlite '+db.prepare('select sqlite_version() v').get().v)"]);
  rmSync(dir, { recursive: true, force: true });
  renameSync(building, dir);
  writeFileSync(complete, `${new Date().toISOString()}\n`);
  step(`root file system ready: ${dir}`);
  return { dir, key };
}

/**
 * A bundle at /opt/dapp in the root file system, with the riscv64 better-sqlite3 beside it: `bundleDir`
 * (the bench's own build), or `npm run build`'s dist/ built now.
 */
export function installBundle(rootfs: Rootfs, bundleDir?: string): void {
  if (bundleDir === undefined) {
    step("npm run build, bundle copied to /opt/dapp");
    sh("npm", ["run", "-s", "build"], { cwd: root });
  }
  const target = join(rootfs.dir, "opt", "dapp");
  rmSync(target, { recursive: true, force: true });
  cpSync(bundleDir ?? join(root, "dist"), target, { recursive: true });
  symlinkSync("/opt/native/node_modules", join(target, "node_modules"));
}

function isMounted(path: string): boolean {
  return readFileSync("/proc/self/mounts", "utf8").split("\n").some((line) => line.split(" ")[1] === path);
}

/**
 * /proc and /dev for node, and the host's /tmp: the stacks the suites start keep their DATA_DIR (and the
 * dapp's database, which the suites read) under /tmp, the same path inside and out.
 */
export function mountAll(rootfs: Pick<Rootfs, "dir">, only?: readonly string[]): () => void {
  const mounts = ([
    ["proc", ["-t", "proc", "proc"]],
    ["dev", ["--rbind", "/dev"]],
    ["tmp", ["--bind", "/tmp"]],
  ] as [string, string[]][]).filter(([name]) => only === undefined || only.includes(name));
  const done: string[] = [];
  for (const [name, args] of mounts) {
    const at = join(rootfs.dir, name);
    if (!isMounted(at)) {
      sh("mount", [...args, at]);
      done.push(at);
    }
  }
  return () => {
    for (const at of done.reverse()) spawnSync("umount", ["-l", at]);
  };
}

/** The dapp as an argv: node in the chroot with the image's NODE_OPTIONS; the caller's env passes through. */
export function dappArgv(rootfs: Rootfs): string[] {
  return ["chroot", rootfs.dir, "/usr/bin/node", ...imageNodeFlags(root), "/opt/dapp/dapp/main.js"];
}

/** The same as a shell command (DAPP_COMMAND, TEST_DAPP_COMMAND). */
export function dappCommand(rootfs: Rootfs): string {
  return `exec ${dappArgv(rootfs).join(" ")}`;
}

/**
 * The recipe and Dockerfile.cartesi stay one recipe (issue 12): the same node major and the same
 * better-sqlite3 version (NODE_OPTIONS are read from the Dockerfile by dappArgv). Throws naming the
 * difference, so a Debian node upgrade or a lock file change cannot drift silently.
 */
export function checkSameRecipe(rootfs: Rootfs): string {
  const nodeVersion = output("chroot", [rootfs.dir, "/usr/bin/node", "-p", "process.versions.node"])?.trim();
  if (nodeVersion === undefined) throw new Error(`node does not run in ${rootfs.dir}`);
  const major = Number(nodeVersion.split(".")[0]);
  if (major !== imageNodeMajor(root)) {
    throw new Error(`the riscv64 root file system has node ${nodeVersion}, Dockerfile.cartesi node ${imageNodeMajor(root)}.x: the majors must match`);
  }
  const pkg = JSON.parse(readFileSync(join(rootfs.dir, "opt", "native", "node_modules", "better-sqlite3", "package.json"), "utf8")) as { version: string };
  if (pkg.version !== lockedVersion("better-sqlite3")) {
    throw new Error(`the riscv64 root file system has better-sqlite3 ${pkg.version}, package-lock.json ${lockedVersion("better-sqlite3")}`);
  }
  return `node ${nodeVersion} (image: ${major}.x), better-sqlite3 ${pkg.version} (lock file), NODE_OPTIONS from Dockerfile.cartesi`;
}

/** node's arch and version inside the root file system, e.g. "riscv64 node v20.19.2". */
export function describeRootfs(rootfs: Rootfs): string {
  return output("chroot", [rootfs.dir, "/usr/bin/node", "-p", "`${process.arch} node ${process.version}`"])?.trim() ?? "?";
}

