/**
 * The 128 MiB machine's kernel configuration (bench/machine-kernel.config): every line is an option Kconfig
 * reads, and the check that fails a build whose tree did not take an option names exactly those options.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { optionsNotTaken } from "../../bench/machine-kernel.ts";

const fragment = readFileSync(join(import.meta.dirname, "../../bench/machine-kernel.config"), "utf8");

describe("bench/machine-kernel.config", () => {
  it("holds only comments, blank lines and CONFIG_ options set to y or a value", () => {
    const odd = fragment.split("\n").filter((line) => line !== "" && !line.startsWith("#") && !/^CONFIG_[A-Z0-9_]+=(y|"[^"]*"|\d+)$/.test(line));
    expect(odd).toEqual([]);
  });

  it("asks for what the machine cannot boot or run node without", () => {
    for (const option of ["FLATMEM_MANUAL", "FPU", "RISCV_ISA_FALLBACK", "VIRTIO_MMIO", "VIRTIO_BLK", "VIRTIO_NET", "EXT4_FS", "DEVTMPFS_MOUNT", "FUTEX", "EPOLL", "INET"]) {
      expect(fragment).toMatch(new RegExp(`^CONFIG_${option}=y$`, "m"));
    }
    expect(fragment).not.toMatch(/^CONFIG_(MODULES|BLK_DEV_INITRD|SPARSEMEM\w*)=y$/m);
  });
});

describe("optionsNotTaken", () => {
  it("names the options the configured tree lacks, and nothing else", () => {
    const config = ["CONFIG_FPU=y", "# CONFIG_VIRTIO_BLK is not set", "CONFIG_HZ_100=y", "CONFIG_EXT4_FS=m"].join("\n");
    const asked = ["# a comment", "CONFIG_FPU=y", "CONFIG_VIRTIO_BLK=y", "", "CONFIG_EXT4_FS=y", "CONFIG_HZ_100=y"].join("\n");
    expect(optionsNotTaken(asked, config)).toEqual(["CONFIG_VIRTIO_BLK=y", "CONFIG_EXT4_FS=y"]);
    expect(optionsNotTaken(asked, `${config}\nCONFIG_VIRTIO_BLK=y\nCONFIG_EXT4_FS=y`)).toEqual([]);
  });
});
