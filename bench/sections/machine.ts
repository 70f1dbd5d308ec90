/**
 * 128 MiB for real (issue 12): a riscv64 Linux booted in qemu-system-riscv64 with 128 MiB of RAM and one
 * hart (qemu's bundled OpenSBI; a kernel built from Debian's kernel source the way a Cartesi machine's is,
 * bench/machine-kernel.ts), the bundle's dapp running there on a store of 1,000,000 attestations, fed
 * inputs and queries by the straight rig's devnode on the host, which the guest reaches through qemu's
 * user-mode network (10.0.2.2 is the host's loopback). The guest prints its MemTotal, the dapp's VmHWM
 * every 2 s and, when the dapp ends, any OOM-killer lines of the kernel.
 *
 * The machine's disk is the riscv64 root file system of toolkit/riscv64.ts plus iproute2 (cached
 * beside it), an init script, the bundle and the store, as an ext4 image (mke2fs -d).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULTS } from "../../devnode/config.ts";
import { aptInstall, ensureRootfs, prepareHost, runQuietly as run, type Rootfs } from "../../toolkit/riscv64.ts";
import type { DappBundle } from "../bundle.ts";
import { runLoad } from "../load.ts";
import { machineKernel } from "../machine-kernel.ts";
import { figure, type Figure } from "../report.ts";
import { startDirectRig } from "../rig.ts";
import { seedStore, type SeedResult } from "../seed.ts";

export interface MachineOptions {
  root: string;
  work: string;
  bundle: DappBundle;
  cache: string;
  inputs: number;
  inspects: number;
  log: (line: string) => void;
}

/** The Cartesi machine's RAM (Dockerfile.cartesi's io.cartesi.rollups.ram_size), all of the guest's. */
const RAM_MIB = 128;
/** The store the machine holds, whatever the bench's size: the million. */
const STORED = 1_000_000;
const DB_IN_GUEST = "/var/opt/attestation/dapp.sqlite";

/** The root file system with iproute2 (the guest's network): built once per root file system. */
async function machineRootfs(rootfs: Rootfs, log: (line: string) => void): Promise<{ dir: string }> {
  const dir = join(rootfs.dir, "..", "machine");
  const complete = join(rootfs.dir, "..", "machine-v3.complete");
  if (!existsSync(complete)) {
    log("machine: copying the root file system and installing iproute2 in it (under qemu-user)");
    rmSync(dir, { recursive: true, force: true });
    // cp -a, not fs.cpSync: the root file system's /dev holds device nodes (console, null, ptmx...).
    run("cp", ["-a", rootfs.dir, dir]);
    await aptInstall(dir, ["iproute2"]);
    writeFileSync(complete, `${new Date().toISOString()}\n`);
  }
  return { dir };
}

/**
 * PID 1 of the guest: network, then the dapp, then its VmHWM every 2 s; the kernel's OOM lines at the end.
 * The machine's userland is minbase trixie: no poweroff, and none needed.
 */
function initScript(nodeFlags: readonly string[]): string {
  return `#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev 2>/dev/null; mount -t tmpfs tmp /tmp
ip link set lo up; ip link set eth0 up; ip addr add 10.0.2.15/24 dev eth0; ip route add default via 10.0.2.2
URL=$(sed -n 's/.*dapp_rollup=\\([^ ]*\\).*/\\1/p' /proc/cmdline)
echo "machine: up, $(nproc) hart(s), $(grep MemTotal /proc/meminfo | tr -s ' '), rollup $URL"
ROLLUP_HTTP_SERVER_URL=$URL DAPP_DB_PATH=${DB_IN_GUEST} DAPP_ADMINS=${DEFAULTS.adminAddress} node ${nodeFlags.join(" ")} /opt/dapp/dapp/main.js &
PID=$!
while kill -0 $PID 2>/dev/null; do echo "machine: dapp $(grep VmHWM /proc/$PID/status | tr -s ' \\t' ' ')"; sleep 2; done
echo "machine: dapp exited"
dmesg | grep -i -E "out of memory|oom-kill|killed process" | sed 's/^/machine: kernel: /'
echo "machine: end"
# PID 1 ending stops the kernel (panic=-1), and qemu with it (-no-reboot).
`;
}

/** The guest's disk: the machine root file system, the bundle, the store and the init script, as ext4. */
function diskImage(machine: { dir: string }, options: MachineOptions, store: SeedResult): string {
  const image = join(options.work, "machine.ext4");
  const stage = join(machine.dir, "opt");
  rmSync(join(stage, "dapp"), { recursive: true, force: true });
  cpSync(options.bundle.dir, join(stage, "dapp"), { recursive: true });
  rmSync(join(stage, "dapp", "node_modules"), { force: true });
  cpSync(join(stage, "native", "node_modules"), join(stage, "dapp", "node_modules"), { recursive: true });
  mkdirSync(join(stage, "machine"), { recursive: true });
  writeFileSync(join(stage, "machine", "init.sh"), initScript(options.bundle.nodeFlags), { mode: 0o755 });
  const dbDir = join(machine.dir, "var", "opt", "attestation");
  mkdirSync(dbDir, { recursive: true });
  copyFileSync(store.path, join(machine.dir, DB_IN_GUEST));
  run("mke2fs", ["-q", "-F", "-t", "ext4", "-d", machine.dir, image, "4G"]);
  rmSync(join(dbDir, "dapp.sqlite"), { force: true });
  return image;
}

export interface MachineResult {
  figures: Figure[];
  note: string;
}

export async function machineRows(options: MachineOptions): Promise<MachineResult> {
  await prepareHost();
  if (spawnSync("sh", ["-c", "command -v qemu-system-riscv64"]).status !== 0) {
    run("apt-get", ["install", "-y", "--no-install-recommends", "qemu-system-misc", "opensbi", "e2fsprogs"]);
  }
  const rootfs = await ensureRootfs(options.cache);
  const machine = await machineRootfs(rootfs, options.log);
  const kernel = await machineKernel(options.root, join(rootfs.dir, "..", ".."), options.log);
  const store = await seedStore(join(options.work, "machine-store.sqlite"), STORED, join(options.root, "bench-results", "cache"));
  options.log(`machine: disk image with ${store.count.toLocaleString("en-US")} attestations`);
  const image = diskImage(machine, options, store);
  rmSync(store.path, { force: true });
  const qemu = (rollupPort: number): string[] => [
    "qemu-system-riscv64",
    "-machine", "virt",
    "-m", `${RAM_MIB}M`,
    "-smp", "1",
    "-nographic",
    "-kernel", kernel,
    "-no-reboot",
    "-append", `root=/dev/vda rw console=ttyS0 panic=-1 init=/opt/machine/init.sh dapp_rollup=http://10.0.2.2:${rollupPort}`,
    // virtio over MMIO, as the kernel has it built in (no PCI).
    "-drive", `file=${image},format=raw,if=none,id=disk`,
    "-device", "virtio-blk-device,drive=disk",
    "-netdev", "user,id=n0",
    "-device", "virtio-net-device,netdev=n0",
    "-device", "virtio-rng-device",
  ];
  const dir = join(options.work, "machine-rig");
  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  const consoleLog = join(dir, "logs", "dapp.log");
  const lastLines = () => (existsSync(consoleLog) ? readFileSync(consoleLog, "utf8").split("\n").slice(-25).join("\n") : "(no console output)");
  const rig = await startDirectRig({
    root: options.root,
    workDir: dir,
    dbPath: join(dir, "unused.sqlite"),
    dappMain: options.bundle.main,
    dappArgv: qemu,
    dappStartMs: 30 * 60_000,
  }).catch((error: unknown) => {
    throw new Error(`machine: ${error instanceof Error ? error.message : String(error)}; console:\n${lastLines()}`);
  });
  try {
    const bootSeconds = (performance.now() - started) / 1000;
    options.log(`machine: the dapp connected after ${bootSeconds.toFixed(0)} s (boot, node start, migrations on the 1M store)`);
    const done = await rig.feed(options.inputs, 0, 0);
    const ids = store.sampleAttestationIds;
    const inspect = await runLoad({
      baseUrl: rig.nodeUrl,
      concurrency: 1,
      count: options.inspects,
      warmup: 5,
      next: (i) => ({ method: "GET", path: `/inspect/${encodeURIComponent(JSON.stringify({ type: "attestation", params: { attestation_id: ids[i % ids.length] } }))}` }),
      check: (status, body) => {
        if (status !== 200 || !body.includes('"status":"Accepted"')) throw new Error(`machine inspect: HTTP ${status} ${body.toString("utf8").slice(0, 200)}`);
      },
    });
    await new Promise((r) => setTimeout(r, 4_000));
    const serial = readFileSync(consoleLog, "utf8");
    const peaks = [...serial.matchAll(/machine: dapp VmHWM: (\d+) kB/g)].map((m) => Number(m[1]));
    const peakKiB = Math.max(0, ...peaks);
    const killed = /machine: kernel: .*(out of memory|oom-kill|killed process)/i.test(serial) || serial.includes("machine: dapp exited");
    const memTotalKiB = Number(/MemTotal: (\d+) kB/.exec(serial)?.[1] ?? Number.NaN);
    const memTotal = `${(memTotalKiB / 1024).toFixed(1)} MiB`;
    options.log(`machine: MemTotal ${memTotal}, ${done.accepted}/${options.inputs} inputs, inspect p50 ${inspect.p50.toFixed(1)} ms, dapp peak RSS ${(peakKiB / 1024).toFixed(1)} MiB, killed: ${killed ? "yes" : "no"}`);
    if (done.accepted !== options.inputs) throw new Error(`machine: ${done.accepted} of ${options.inputs} inputs accepted`);
    return {
      figures: [
        figure("riscv64", `dapp peak RSS in a ${RAM_MIB} MiB riscv64 machine @ ${store.count.toLocaleString("en-US")}`, "MiB", peakKiB / 1024, { name: "the guest's MemTotal", value: memTotalKiB / 1024 }, {
          target: { text: "not killed, <= 96 MiB", met: (v: number) => !killed && v <= 96 },
        }),
      ],
      note:
        `machine: qemu-system-riscv64 -machine virt -m ${RAM_MIB}M -smp 1 (a kernel from Debian's source configured as a Cartesi machine's, bench/machine-kernel.config: the guest's MemTotal was ${memTotal}; qemu's OpenSBI), ` +
        `the bundle's dapp with the image's NODE_OPTIONS on ${store.count.toLocaleString("en-US")} attestations; connected after ${bootSeconds.toFixed(0)} s; ` +
        `${options.inputs} inputs at ${(options.inputs / done.seconds).toFixed(1)}/s, inspect attestation p50 ${inspect.p50.toFixed(0)} ms (full-system emulation: only the memory figure is meant to carry over); ` +
        `OOM killer: ${killed ? "the dapp was killed" : "nothing killed"}.`,
    };
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; console:\n${lastLines()}`);
  } finally {
    await rig.stop();
  }
}
