/**
 * The kernel of the 128 MiB machine (`npm run bench -- --machine`): Debian's kernel source
 * (linux-source-6.12 from trixie, the series of Debian's linux-image-riscv64) configured as
 * bench/machine-kernel.config says and cross-compiled on the host with Debian's gcc-riscv64-linux-gnu.
 * Everything the guest needs is built in, so it boots without modules or an initramfs. Cached beside the
 * root file system, keyed by the configuration; a cold build takes a few minutes.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, join } from "node:path";
import { runQuietly as run, withArchiveView } from "../toolkit/riscv64.ts";

const SOURCE_PACKAGE = "linux-source-6.12";
const HOST_TOOLS: Record<string, string> = { "riscv64-linux-gnu-gcc": "gcc-riscv64-linux-gnu", flex: "flex", bison: "bison", bc: "bc", make: "make" };
const MAKE = ["ARCH=riscv", "CROSS_COMPILE=riscv64-linux-gnu-"];

/** The options the fragment sets that the configured tree does not have (a dependency it lacks). */
export function optionsNotTaken(fragment: string, config: string): string[] {
  const have = new Set(config.split("\n"));
  return fragment.split("\n").filter((line) => line.startsWith("CONFIG_") && !have.has(line));
}

/** The kernel Image for the machine: built unless one for this configuration is cached under `cacheDir`. */
export async function machineKernel(root: string, cacheDir: string, log: (line: string) => void): Promise<string> {
  const fragmentPath = join(root, "bench", "machine-kernel.config");
  const fragment = readFileSync(fragmentPath, "utf8");
  const key = createHash("sha256").update(SOURCE_PACKAGE).update(fragment).digest("hex").slice(0, 16);
  const dir = join(cacheDir, `machine-kernel-${key}`);
  const image = join(dir, "Image");
  if (existsSync(image)) {
    log(`machine: kernel ${image} (cached; ${readFileSync(join(dir, "source"), "utf8").trim()})`);
    return image;
  }
  const missing = Object.keys(HOST_TOOLS).filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0);
  if (missing.length > 0) run("apt-get", ["install", "-y", "--no-install-recommends", ...missing.map((tool) => HOST_TOOLS[tool] as string)]);
  const work = join(cacheDir, `machine-kernel-${key}.building`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const deb = await withArchiveView((view) => view.fetchPackage(SOURCE_PACKAGE, work));
    log(`machine: building a kernel from ${basename(deb)} with ${fragmentPath} (cross-compiled, a few minutes)`);
    run("dpkg-deb", ["-x", deb, join(work, "deb")]);
    const tarball = readdirSync(join(work, "deb", "usr", "src")).find((name) => name.endsWith(".tar.xz"));
    if (tarball === undefined) throw new Error(`${deb} holds no kernel source tarball`);
    run("tar", ["-xJf", join(work, "deb", "usr", "src", tarball), "-C", work]);
    const tree = join(work, tarball.replace(/\.tar\.xz$/, ""));
    run("make", [...MAKE, `KCONFIG_ALLCONFIG=${fragmentPath}`, "allnoconfig"], tree);
    const notTaken = optionsNotTaken(fragment, readFileSync(join(tree, ".config"), "utf8"));
    if (notTaken.length > 0) throw new Error(`machine kernel: ${fragmentPath} sets options the source does not take: ${notTaken.join(", ")}`);
    run("make", [...MAKE, `-j${String(availableParallelism())}`, "Image"], tree);
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(tree, "arch", "riscv", "boot", "Image"), image);
    writeFileSync(join(dir, "source"), `${basename(deb)}\n`);
    return image;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
