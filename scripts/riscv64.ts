/**
 * `npm run riscv64 -- <rootfs|e2e|run>`: the dapp as the Cartesi machine runs it, on riscv64, here
 * (toolkit/riscv64.ts builds the root file system).
 *
 *   rootfs  builds (or reuses) the riscv64 root file system
 *   e2e     rootfs, then `npm run build`'s bundle copied in, then the end-to-end suites about the dapp
 *           with that riscv64 dapp as the stack's dapp (what .ci/run runs)
 *   run     rootfs and the bundle, then prints how to run `npm start` with the riscv64 dapp
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";
import { checkSameRecipe, dappCommand, DEFAULT_RISCV64_CACHE, describeRootfs, ensureRootfs, installBundle, mountAll, prepareHost, step } from "../toolkit/riscv64.ts";

const USAGE = "npm run riscv64 -- rootfs|e2e|run [--cache DIR]   (needs root; see docs/image.md)";
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
/**
 * What the dapp does, run with the riscv64 dapp (the bundle on Debian's riscv64 node under qemu): every
 * input kind and query through the api, the specification's queries, Rollups v2, a validator recomputing
 * every root with a dapp of its own, and libcmt judging byte for byte what the riscv64 dapp wrote. The
 * suites about the node, its readers and the stack's supervision test nothing more with an emulated dapp
 * (`npm test` runs them natively); nor do the attestors' suites, whose cost is the host's proving.
 */
const RISCV64_SUITES = [
  "test/api/e2e.test.ts",
  "test/devnode/spec-query.e2e.test.ts",
  "test/devnode/v2-node.e2e.test.ts",
  "test/devnode/validator.e2e.test.ts",
  "test/devnode/libcmt-replay.e2e.test.ts",
];

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--cache"]);
  const [command, ...rest] = positional;
  if (command === undefined) throw new UsageError("which step? rootfs, e2e or run");
  if (!["rootfs", "e2e", "run"].includes(command)) throw new UsageError(`unknown step: ${command} (rootfs, e2e or run)`);
  if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest.join(" ")}`);
  const cache = resolve(options.get("--cache") ?? process.env.RISCV64_CACHE ?? DEFAULT_RISCV64_CACHE);
  await prepareHost();
  const rootfs = await ensureRootfs(cache);
  step(`same recipe as Dockerfile.cartesi: ${checkSameRecipe(rootfs)}`);
  if (command === "rootfs") return 0;
  installBundle(rootfs);
  const unmount = mountAll(rootfs);
  let keepMounted = false;
  try {
    step(`the dapp runs as: ${dappCommand(rootfs)}  (${describeRootfs(rootfs)})`);
    if (command === "run") {
      // npm start's DATA_DIR must be under /tmp (mounted into the root file system) for the dapp to share it.
      console.log(`DATA_DIR=$(mktemp -d) DAPP_COMMAND='${dappCommand(rootfs)}' npm start`);
      keepMounted = true;
      return 0;
    }
    step(`the end-to-end suites about the dapp, with the riscv64 dapp: ${RISCV64_SUITES.join(" ")}`);
    const result = spawnSync("npx", ["vitest", "run", ...RISCV64_SUITES], {
      cwd: root,
      stdio: "inherit",
      // TEST_DAPP_COMMAND replaces the stack's dapp; TEST_DAPP_SLOW widens the waits an emulated dapp needs.
      // TEST_DAPP_ARCH makes the suites check that the dapp they talk to is the riscv64 one.
      env: { ...process.env, TEST_DAPP_COMMAND: dappCommand(rootfs), TEST_DAPP_SLOW: "1", TEST_DAPP_ARCH: "riscv64" },
    });
    step(`suites finished (exit ${String(result.status)})`);
    return result.status ?? 1;
  } finally {
    if (!keepMounted) unmount();
  }
}, USAGE);
