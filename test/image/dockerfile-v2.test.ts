/**
 * Dockerfile.cartesi-v2 and cartesi.toml, the image Cartesi CLI 2 builds for Rollups v2, cannot be built
 * here (no Docker engine), so this suite checks statically what `cartesi build` would rely on: stages and
 * platforms, the guest tools, entrypoint and command (the dapp on libcmt, no rollup HTTP server), what
 * reaches the machine's init as ENV, the @cartesi/rollup addon the machine loads, every copied path, and a
 * configuration that names the Dockerfile and a writable drive for the database.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { imageNodeFlags, imageNodeMajor, lockedVersion, NATIVE_EXTERNALS } from "../../toolkit/dapp-build.ts";
import { argDefaults, envValues, lastStage, namedStage, parseDockerfile, parseToml, stageCopyProblems, type TomlTable } from "./static.ts";

const root = join(import.meta.dirname, "../..");
const text = readFileSync(join(root, "Dockerfile.cartesi-v2"), "utf8");
const instructions = parseDockerfile(text);
const froms = instructions.filter((i) => i.keyword === "FROM");
const finalStage = lastStage(instructions);
const args = argDefaults(instructions);
const env = envValues(finalStage);
const runs = instructions.filter((i) => i.keyword === "RUN").map((i) => i.args);

const config = parseToml(readFileSync(join(root, "cartesi.toml"), "utf8"));
const table = (value: unknown): TomlTable => {
  expect(typeof value === "object" && value !== null && !Array.isArray(value), JSON.stringify(value)).toBe(true);
  return value as TomlTable;
};
const drives = table(config.drives);

describe("Dockerfile.cartesi-v2", () => {
  it("has a host-platform bundle stage, a riscv64 native stage and a riscv64 runtime stage on Ubuntu 24.04", () => {
    expect(froms.map((f) => f.args)).toEqual([
      "--platform=$BUILDPLATFORM node:20-bookworm-slim AS bundle",
      "--platform=linux/riscv64 cartesi/node:${NODE_VERSION}-noble AS native",
      "--platform=linux/riscv64 cartesi/node:${NODE_VERSION}-noble-slim",
    ]);
    // The same node line as the v1 image, which CI's riscv64 pass and the bench's 128 MiB machine measure.
    expect(args.get("NODE_VERSION")).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Number(args.get("NODE_VERSION")?.split(".")[0])).toBe(imageNodeMajor(root));
  });

  it("installs machine-guest-tools 0.18.0 from its release, checked, and nothing of the v1 tools", () => {
    // The release and the sha256 of its machine-guest-tools_riscv64.deb as Cartesi's TypeScript template
    // pins them (docs/image.md): the two change together or not at all.
    expect(args.get("MACHINE_GUEST_TOOLS_VERSION")).toBe("0.18.0");
    expect(args.get("MACHINE_GUEST_TOOLS_SHA256SUM")).toBe("204d4260defd68e11b957ae1f1b511b6c2c74345c918748be06f592733b72dcd");
    const add = finalStage.find((i) => i.keyword === "ADD")?.args;
    expect(add).toBe(
      "--checksum=sha256:${MACHINE_GUEST_TOOLS_SHA256SUM} " +
        "https://github.com/cartesi/machine-guest-tools/releases/download/v${MACHINE_GUEST_TOOLS_VERSION}/machine-guest-tools_riscv64.deb " +
        "/tmp/machine-guest-tools_riscv64.deb",
    );
    // apt resolves the package's dependency (busybox-static); its postinst makes the `dapp` user.
    const install = finalStage.filter((i) => i.keyword === "RUN").map((i) => i.args.replace(/\s*\\\n\s*/g, " "));
    expect(install.some((r) => /busybox-static \/tmp\/machine-guest-tools_riscv64\.deb/.test(r))).toBe(true);
    expect(instructions.map((i) => i.args).join("\n")).not.toMatch(/machine-emulator-tools|useradd|\/opt\/cartesi\/bin/);
  });

  it("reads Ubuntu's archive at one fixed time in every riscv64 stage", () => {
    expect(args.get("APT_UPDATE_SNAPSHOT")).toMatch(/^\d{8}T\d{6}Z$/);
    const installs = runs.flatMap((r) => r.split("\n")).filter((line) => /apt-get install/.test(line) && !/ca-certificates$/.test(line.trim()));
    expect(installs.length).toBe(2);
    for (const line of installs) expect(line).toContain("--snapshot=${APT_UPDATE_SNAPSHOT}");
    expect(runs.filter((r) => r.includes("apt-get update --snapshot=${APT_UPDATE_SNAPSHOT}")).length).toBe(2);
  });

  it("runs node as the entrypoint, with the V8 flags of the v1 image and the dapp as its arguments", () => {
    expect(finalStage.find((i) => i.keyword === "ENTRYPOINT")?.args).toBe('["node"]');
    expect(finalStage.find((i) => i.keyword === "WORKDIR")?.args).toBe("/opt/cartesi/dapp");
    const cmd = JSON.parse(finalStage.find((i) => i.keyword === "CMD")?.args ?? "null") as string[];
    expect(cmd).toEqual([...imageNodeFlags(root), "dapp/main.js"]);
    expect(cmd).toContain("--max-old-space-size=32");
  });

  it("runs the dapp on libcmt, with no rollup HTTP server anywhere in the image", () => {
    expect(env.get("DAPP_TRANSPORT")).toBe("libcmt");
    // dapp/config.ts refuses ROLLUP_HTTP_SERVER_URL beside libcmt.
    expect(env.has("ROLLUP_HTTP_SERVER_URL")).toBe(false);
    expect(instructions.map((i) => i.args).join("\n")).not.toMatch(/rollup-init|rollup-http-server|ROLLUP_HTTP_SERVER_URL|:5004\b/);
  });

  it("sets only ENV values CLI 2 hands to the machine's init intact", () => {
    expect(env.get("DAPP_DB_PATH")).toBe("/var/opt/attestation/dapp.sqlite");
    expect(env.has("NODE_OPTIONS")).toBe(false);
    // 2.0.0-alpha.2 writes `export NAME=value` unquoted; later releases keep what precedes a second `=`.
    for (const [name, value] of env) expect(value, name).toMatch(/^[^\s"'=]*$/);
  });

  it("carries no io.cartesi.rollups labels: CLI 2 reads cartesi.toml", () => {
    expect(finalStage.filter((i) => i.keyword === "LABEL")).toEqual([]);
  });

  it("takes the initial admins as a required build argument without a default, addresses and commas only", () => {
    const adminArg = instructions.find((i) => i.keyword === "ARG" && i.args.startsWith("DAPP_ADMINS"));
    expect(adminArg?.args).toBe("DAPP_ADMINS");
    expect(text).toMatch(/test -n "\$\{DAPP_ADMINS:-\}"/);
    expect(text).toContain("*[!0-9A-Fa-fx,]*)");
    expect(env.get("DAPP_ADMINS")).toBe("${DAPP_ADMINS}");
  });

  it("copies only paths that exist in the repository or that the build produces", () => {
    const fromContext = instructions
      .filter((i) => i.keyword === "COPY" && !i.args.includes("--from="))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(fromContext.length).toBeGreaterThan(0);
    for (const path of fromContext) expect(existsSync(join(root, path)), path).toBe(true);

    const fromStages = instructions
      .filter((i) => i.keyword === "COPY" && i.args.includes("--from="))
      .map((i) => i.args.split(/\s+/)[1] as string);
    expect(fromStages).toEqual([
      "/src/dist/package.json",
      "/src/dist/package.json",
      "/src/dist/dapp",
      "/src/dist/migrations",
      "/opt/build/node_modules",
    ]);
    expect(stageCopyProblems(instructions)).toEqual([]);
    // The bundle stage is v1's, line for line: one recipe for the JavaScript both images run.
    const v1 = parseDockerfile(readFileSync(join(root, "Dockerfile.cartesi"), "utf8"));
    const bundleStage = (list: typeof v1) => list.slice(list.findIndex((i) => i.keyword === "FROM"), list.findIndex((i) => i.args.endsWith("AS native")));
    expect(bundleStage(instructions)).toEqual(bundleStage(v1));
  });

  it("compiles better-sqlite3 from source and takes @cartesi/rollup's prebuild, checking it is the ioctl flavour", () => {
    const native = namedStage(instructions, "native");
    const commands = native
      .filter((i) => i.keyword === "RUN")
      .flatMap((i) => i.args.split("\n"))
      .map((line) => line.trim())
      .filter((line) => /^(npm|node) /.test(line));
    // --build-from-source on the install would make @cartesi/rollup's node-gyp-build compile it too.
    expect(commands.slice(0, 2)).toEqual([
      "npm install --omit=dev --ignore-scripts --no-audit --no-fund",
      "npm rebuild better-sqlite3 --build-from-source",
    ]);
    expect(commands[2]).toMatch(/^node -e '.*require\("@cartesi\/rollup"\).*driver !== "ioctl"\) throw/);
    expect(commands).toHaveLength(3);
  });

  it("keeps nothing host-specific and no development secret", () => {
    expect(text).not.toMatch(/\/work\/|\/root\/|\/home\//);
    expect(text.toLowerCase()).not.toContain("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
    expect(text).not.toContain("jwt-secret");
    const ignored = readFileSync(join(root, ".dockerignore"), "utf8").split("\n");
    for (const entry of ["node_modules", ".data", "dist", ".cartesi"]) expect(ignored).toContain(entry);
  });
});

describe("the @cartesi/rollup addon the last stage copies", () => {
  const packageDir = join(root, "node_modules/@cartesi/rollup");
  const riscv64Addon = join(packageDir, "prebuilds/linux-riscv64/@cartesi+rollup.node");

  it("reaches the machine: pinned in the bundle's manifest at the lock file's version, in the node_modules copied", () => {
    expect(NATIVE_EXTERNALS).toContain("@cartesi/rollup");
    // This checkout's copy is the one the image installs: the same version, from the same registry tarball.
    const installed = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string };
    expect(installed.version).toBe(lockedVersion("@cartesi/rollup"));
    expect(finalStage.find((i) => i.keyword === "COPY" && i.args.startsWith("--from=native "))?.args).toBe(
      "--from=native /opt/build/node_modules ./node_modules",
    );
  });

  it("ships a 64-bit RISC-V prebuild, the one node-gyp-build picks on linux/riscv64", () => {
    const header = readFileSync(riscv64Addon).subarray(0, 20);
    expect(header.subarray(0, 4).toString("latin1")).toBe("\x7fELF");
    expect(header[4]).toBe(2); // ELFCLASS64
    expect(header.readUInt16LE(18)).toBe(243); // EM_RISCV
    // node-gyp-build reads the target from npm_config_platform/arch; prebuilds only, as in the image, whose
    // install compiled nothing (no build/ directory).
    const picked = execFileSync(
      process.execPath,
      ["-e", "const r = require('node:module').createRequire(process.argv[1] + '/package.json'); process.stdout.write(r('node-gyp-build').path(process.argv[1]))", packageDir],
      { env: { ...process.env, npm_config_platform: "linux", npm_config_arch: "riscv64", PREBUILDS_ONLY: "1" }, encoding: "utf8" },
    );
    expect(picked).toBe(riscv64Addon);
  });
});

describe("cartesi.toml", () => {
  it("pins the SDK image and gives the machine the v1 image's RAM", () => {
    expect(config.sdk).toMatch(/^cartesi\/sdk:\d+\.\d+\.\d+(-[\w.]+)?$/);
    const v1Ram = /^LABEL io\.cartesi\.rollups\.ram_size=(\S+)$/m.exec(readFileSync(join(root, "Dockerfile.cartesi"), "utf8"))?.[1];
    expect(table(config.machine)["ram-length"]).toBe(v1Ram);
  });

  it("builds the root drive from Dockerfile.cartesi-v2 with the docker builder", () => {
    const rootDrive = table(drives.root);
    expect(rootDrive).toEqual({ builder: "docker", dockerfile: "Dockerfile.cartesi-v2", format: "ext2" });
    expect(existsSync(join(root, rootDrive.dockerfile as string))).toBe(true);
  });

  it("puts the database on a writable drive of its own, mounted where DAPP_DB_PATH points, owned by the dapp user", () => {
    const dbDir = dirname(env.get("DAPP_DB_PATH") as string);
    const holders = Object.entries(drives).filter(([, d]) => table(d).mount === dbDir);
    expect(holders.map(([name]) => name)).toEqual(["data"]);
    const data = table(drives.data);
    expect(data).toEqual({ builder: "empty", format: "ext2", size: "1024MB", mount: dbDir, user: "dapp" });
    // Both CLI generations read MB as 1024^2 bytes (alpha.2's `bytes` falls back to parseInt on `Mi`).
    expect(data.size).toMatch(/^\d+(MB|GB)$/);
    // The mount point exists in the image, since a read-only root could not create it at boot.
    expect(finalStage.some((i) => i.keyword === "RUN" && i.args.includes(`mkdir -p ${dbDir}`))).toBe(true);
    // No drive writes through to its file on the host: every one is machine state only.
    for (const [name, d] of Object.entries(drives)) expect(table(d).shared, name).toBeUndefined();
  });

  it("leaves the build's output and local overrides out of git and of the build context", () => {
    const gitignore = readFileSync(join(root, ".gitignore"), "utf8").split("\n");
    expect(gitignore).toEqual(expect.arrayContaining([".cartesi/", "cartesi.local.toml"]));
  });
});

describe("the cartesi.toml reader", () => {
  it.each([
    ['a = "x" # c', { a: "x" }],
    ['a = "x#y"', { a: "x#y" }],
    ["[t.u]\nn = 3\nb = false", { t: { u: { n: 3, b: false } } }],
    ['l = ["a", "b"]', { l: ["a", "b"] }],
    ["ram-length = \"128Mi\"", { "ram-length": "128Mi" }],
  ])("%j", (source, expected) => {
    expect(parseToml(source)).toEqual(expected);
  });

  it.each([
    ["a = 'x'", "line 1: a value this reader does not take: a = 'x'"],
    ['a = "x"\na = "y"', 'line 2: a is defined twice: a = "y"'],
    ["[t", "line 1: not a key = value pair or a [table] header: [t"],
    ['a = "x"\n[a]', "line 2: a is not a table: [a]"],
  ])("refuses %j", (source, message) => {
    expect(() => parseToml(source)).toThrow(message);
  });
});
