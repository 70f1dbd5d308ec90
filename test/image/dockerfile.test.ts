/**
 * Dockerfile.cartesi cannot be built here (no Docker engine, no riscv64 machine), so this suite checks
 * statically what a build would rely on: stages and platforms, labels, entrypoint, and that every path
 * it copies exists in the repository or is produced by `npm run build`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { imageNodeFlags, imageNodeMajor } from "../../toolkit/dapp-build.ts";
import { argDefaults, lastStage, namedStage, parseDockerfile, stageCopyProblems } from "./static.ts";

const root = join(import.meta.dirname, "../..");
const text = readFileSync(join(root, "Dockerfile.cartesi"), "utf8");

const instructions = parseDockerfile(text);
const froms = instructions.filter((i) => i.keyword === "FROM");
const finalStage = lastStage(instructions);
const args = argDefaults(instructions);
const labels = new Map(
  finalStage.filter((i) => i.keyword === "LABEL").map((i) => i.args.split("=", 2) as [string, string]),
);

describe("Dockerfile.cartesi", () => {
  it("has a host-platform bundle stage, a riscv64 native stage and a riscv64 runtime stage", () => {
    expect(froms.map((f) => f.args)).toEqual([
      "--platform=$BUILDPLATFORM node:20-bookworm-slim AS bundle",
      "--platform=linux/riscv64 cartesi/node:${NODE_VERSION}-jammy AS native",
      "--platform=linux/riscv64 cartesi/node:${NODE_VERSION}-jammy-slim",
    ]);
    // better-sqlite3 12 supports Node 20.x; the machine's Node must stay on a supported line.
    expect(args.get("NODE_VERSION")).toMatch(/^20\.\d+\.\d+$/);
  });

  it("installs machine-emulator-tools 0.14.x and runs the dapp under rollup-init", () => {
    expect(args.get("MACHINE_EMULATOR_TOOLS_VERSION")).toMatch(/^0\.14\.\d+$/);
    expect(finalStage.some((i) => i.keyword === "RUN" && i.args.includes("dpkg -i /machine-emulator-tools-v"))).toBe(true);
    expect(finalStage.find((i) => i.keyword === "ENTRYPOINT")?.args).toBe('["rollup-init"]');
    expect(finalStage.find((i) => i.keyword === "CMD")?.args).toBe('["node", "dapp/main.js"]');
    expect(finalStage.find((i) => i.keyword === "WORKDIR")?.args).toBe("/opt/cartesi/dapp");
  });

  it("carries the io.cartesi.rollups labels of SDK 0.9", () => {
    expect(labels.get("io.cartesi.rollups.sdk_version")).toBe("0.9.0");
    expect(labels.get("io.cartesi.rollups.ram_size")).toMatch(/^\d+Mi$/);
    expect(labels.get("io.cartesi.rollups.flashdrive_size")).toMatch(/^\d+Mb$/);
  });

  it("points the dapp at the in-machine rollup HTTP server and a database path on the root drive", () => {
    const env = finalStage.filter((i) => i.keyword === "ENV").map((i) => i.args);
    expect(env).toContain('ROLLUP_HTTP_SERVER_URL="http://127.0.0.1:5004"');
    expect(env).toContain("DAPP_DB_PATH=/var/opt/attestation/dapp.sqlite");
    // The directory is created and handed to the unprivileged user that rollup-init runs the dapp as.
    expect(text).toContain("chown dapp:dapp /var/opt/attestation");
  });

  it("compiles better-sqlite3 from source and nothing else, carrying @cartesi/rollup unused", () => {
    const commands = namedStage(instructions, "native")
      .filter((i) => i.keyword === "RUN")
      .flatMap((i) => i.args.split("\n"))
      .map((line) => line.trim())
      .filter((line) => /^(npm|node) /.test(line));
    // --build-from-source on the install would make @cartesi/rollup's node-gyp-build compile it too.
    expect(commands).toEqual(["npm install --omit=dev --ignore-scripts --no-audit --no-fund", "npm rebuild better-sqlite3 --build-from-source"]);
    // The dapp stays on the rollup HTTP server here (DAPP_TRANSPORT's default), so the addon is never loaded.
    expect(finalStage.some((i) => i.keyword === "ENV" && i.args.startsWith("DAPP_TRANSPORT="))).toBe(false);
  });

  it("takes the initial admins as a required build argument without a default", () => {
    const adminArg = instructions.find((i) => i.keyword === "ARG" && i.args.startsWith("DAPP_ADMINS"));
    expect(adminArg?.args).toBe("DAPP_ADMINS");
    expect(text).toMatch(/test -n "\$\{DAPP_ADMINS\}"/);
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
  });

  it("keeps nothing host-specific and no development secret", () => {
    expect(text).not.toMatch(/\/work\/|\/root\/|\/home\/(?!dapp)/);
    // Hardhat's well-known development keys and the dev JWT secret file must never reach an image.
    expect(text.toLowerCase()).not.toContain("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
    expect(text).not.toContain("jwt-secret");
    const ignored = readFileSync(join(root, ".dockerignore"), "utf8").split("\n");
    for (const entry of ["node_modules", ".data", "dist"]) expect(ignored).toContain(entry);
  });
});

describe("what the riscv64 recipe (npm run riscv64) reads from the image", () => {
  it("the node major and NODE_OPTIONS, as the Dockerfile states them", () => {
    const version = /^ARG NODE_VERSION=(\S+)$/m.exec(text)?.[1];
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(imageNodeMajor(root)).toBe(Number(version?.split(".")[0]));
    const options = /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(text)?.[1];
    expect(imageNodeFlags(root)).toEqual(options?.split(" "));
    expect(imageNodeFlags(root)).toContain("--max-old-space-size=32");
  });
});
