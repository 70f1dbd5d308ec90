/**
 * The Rollups v2 image as Cartesi CLI 2 builds it (cartesi.toml and Dockerfile.cartesi-v2), checked
 * statically as the v1 one is (test/image/dockerfile.test.ts): no Docker engine runs here. The same dapp
 * and bundle as v1; the v2 guest tools; the database on a drive of its own; the config CLI 2 reads.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readDockerfile } from "../support/dockerfile.ts";

const root = join(import.meta.dirname, "../..");
const text = readFileSync(join(root, "Dockerfile.cartesi-v2"), "utf8");
const v1 = readDockerfile(readFileSync(join(root, "Dockerfile.cartesi"), "utf8"));
const { instructions, froms, finalStage, args, labels } = readDockerfile(text);

/** The subset of TOML cartesi.toml uses: `[a.b]` tables of `key = "string"` lines, comments. */
function readToml(source: string): Map<string, Map<string, string>> {
  const tables = new Map<string, Map<string, string>>([["", new Map()]]);
  let current = tables.get("") as Map<string, string>;
  for (const raw of source.split("\n")) {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") continue;
    const table = /^\[([\w.-]+)\]$/.exec(line);
    if (table !== null) {
      current = new Map();
      tables.set(table[1] as string, current);
      continue;
    }
    const pair = /^([\w-]+)\s*=\s*"([^"]*)"$/.exec(line);
    if (pair === null) throw new Error(`not in the TOML subset: ${line}`);
    current.set(pair[1] as string, pair[2] as string);
  }
  return tables;
}

const toml = readToml(readFileSync(join(root, "cartesi.toml"), "utf8"));

describe("the Rollups v2 image (Cartesi CLI 2)", () => {
  it("cartesi.toml builds the root drive from Dockerfile.cartesi-v2 and gives the machine 128 MiB and the dapp user", () => {
    expect(toml.get("drives.root")).toEqual(new Map([["builder", "docker"], ["dockerfile", "Dockerfile.cartesi-v2"], ["format", "ext2"]]));
    expect(toml.get("machine")?.get("ram-length")).toBe("128Mi");
    expect(toml.get("machine")?.get("user")).toBe("dapp");
    expect(existsSync(join(root, toml.get("drives.root")?.get("dockerfile") ?? ""))).toBe(true);
  });

  it("keeps the database on a drive of its own, mounted where the image points the dapp, owned by the dapp user", () => {
    const data = toml.get("drives.data");
    expect(data?.get("builder")).toBe("empty");
    expect(data?.get("size")).toMatch(/^\d+Mb$/);
    expect(data?.get("user")).toBe("dapp");
    const dbPath = finalStage.find((i) => i.keyword === "ENV" && i.args.startsWith("DAPP_DB_PATH="))?.args.split("=")[1] ?? "";
    expect(dbPath.startsWith(`${data?.get("mount") ?? "?"}/`)).toBe(true);
    expect(text).toContain(`chown dapp:dapp ${data?.get("mount") ?? "?"}`);
  });

  it("installs machine-guest-tools 0.17 (Rollups v2) and runs the dapp under rollup-init, with no CLI 1 labels", () => {
    expect(args.get("MACHINE_GUEST_TOOLS_VERSION")).toMatch(/^0\.17\.\d+$/);
    expect(finalStage.find((i) => i.keyword === "ADD")?.args).toMatch(
      /^https:\/\/github\.com\/cartesi\/machine-guest-tools\/releases\/download\/v\$\{MACHINE_GUEST_TOOLS_VERSION\}\/machine-guest-tools_riscv64\.deb /,
    );
    expect(finalStage.some((i) => i.keyword === "RUN" && i.args.includes("/tmp/machine-guest-tools_riscv64.deb"))).toBe(true);
    expect(finalStage.find((i) => i.keyword === "ENTRYPOINT")?.args).toBe('["rollup-init"]');
    expect(finalStage.find((i) => i.keyword === "CMD")?.args).toBe('["node", "dapp/main.js"]');
    expect(labels.size).toBe(0);
    expect(text).not.toContain("machine-emulator-tools-v");
  });

  it("ships the same bundle, native module, environment and memory flags as the v1 image", () => {
    expect(froms.slice(0, 2)).toEqual(v1.froms.slice(0, 2));
    expect(froms[2]?.args).toBe(v1.froms[2]?.args);
    const copies = (list: typeof instructions) => list.filter((i) => i.keyword === "COPY").map((i) => i.args);
    expect(copies(instructions)).toEqual(copies(v1.instructions));
    const env = (list: typeof instructions) => list.filter((i) => i.keyword === "ENV" && !i.args.startsWith("PATH=")).map((i) => i.args);
    expect(env(finalStage)).toEqual(env(v1.finalStage));
    expect(args.get("NODE_VERSION")).toBe(v1.args.get("NODE_VERSION"));
  });

  it("takes the initial admins as a required build argument without a default", () => {
    expect(finalStage.find((i) => i.keyword === "ARG" && i.args.startsWith("DAPP_ADMINS"))?.args).toBe("DAPP_ADMINS");
    expect(text).toMatch(/test -n "\$\{DAPP_ADMINS\}"/);
  });
});
