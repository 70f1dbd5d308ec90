/**
 * `npm run riscv64 -- <rootfs|e2e|run>`: the dapp as the Cartesi machine runs it, on riscv64, here
 * (toolkit/riscv64.ts builds the root file system).
 *
 *   rootfs  builds (or reuses) the riscv64 root file system
 *   e2e     rootfs, then `npm run build`'s bundle copied in, then the devnode and api end-to-end suites
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
/** The suites .ci/run runs against the bundle, run again with the riscv64 dapp. */
const E2E_SUITES = ["test/devnode", "test/api/e2e.test.ts", "test/api/attestor.e2e.test.ts"];
/**
 * Suites of test/devnode about the stack's supervision or the node alone (a dapp of their own, or none):
 * under emulation they would test nothing more and cost minutes; `npm test` runs them.
 */
const NOT_ABOUT_THE_DAPP = ["**/stack-survival.e2e.test.ts", "**/stack-survival-full.e2e.test.ts", "**/snapshot-errors.test.ts", "**/v2-node-schemas.e2e.test.ts", "**/quorum.e2e.test.ts"];

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
    step(`the devnode and api end-to-end suites with the riscv64 dapp: ${E2E_SUITES.join(" ")}`);
    const result = spawnSync("npx", ["vitest", "run", ...E2E_SUITES, ...NOT_ABOUT_THE_DAPP.flatMap((glob) => ["--exclude", glob])], {
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
