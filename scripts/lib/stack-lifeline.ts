/**
 * The lifeline between the supervisor and each piece it starts (docs/operations.md, "Stopping"): a piece
 * outlives no supervisor, however the supervisor ends (a signal it handles, SIGKILL, the OOM killer, a crash).
 *
 * Every piece leads a process group of its own (so the supervisor's signal reaches what it spawned), which
 * also means nothing reaches it when the supervisor dies without stopping it: the pieces would be orphaned,
 * holding their ports. So each piece is started through a small shell keeper that inherits, as fd 3, one
 * end of a socket pair whose other end only the supervisor holds (libuv opens it close-on-exec, so no other
 * child inherits it). The keeper forks a watcher into the piece's group and execs the piece in its place
 * (the piece keeps the pid the supervisor knows). The watcher blocks reading fd 3: the read returns only when
 * the supervisor's end closes, which the kernel does when the supervisor's process ends, for whatever reason.
 * Then the watcher stops the piece's whole group as the supervisor would have (SIGTERM; SIGKILL once the
 * piece has exited or the grace period is over) and dies with it.
 *
 * A keeper in the piece's group, rather than code in each piece: it covers every piece alike (hardhat,
 * redis-server, haproxy, an operator's DAPP_COMMAND, the riscv64 emulator) and whatever each one spawned.
 * The watcher ignores SIGTERM (and its `sleep` inherits that), so the supervisor's ordinary stop, a SIGTERM
 * to the group, ends the piece but not the watcher; the SIGKILL the supervisor sends the group after the
 * piece's exit ends the watcher.
 */
import type { StdioOptions } from "node:child_process";

/** fd of the lifeline in the keeper (the piece itself gets it closed). */
const LIFELINE_FD = 3;

/** How often the watcher looks whether the piece has exited after its SIGTERM, seconds. */
const TICK_S = 0.1;

// `$$` is the keeper's pid, which the piece takes over by exec: the watcher waits until it has ended (or the
// grace is over), then kills what is left of the group, itself included. An ended piece whose parent is gone
// may stay a zombie until the system's init reaps it, which some inits do late: /proc's state tells.
const KEEPER =
  `ticks=$1; shift; ` +
  `alive() { if [ -r /proc/$$/stat ]; then read -r s < /proc/$$/stat; s=\${s##*) }; [ "\${s%% *}" != Z ]; else kill -0 $$ 2>/dev/null; fi; }; ` +
  `( trap '' TERM INT HUP; read -r _ <&${LIFELINE_FD}; kill -TERM 0; i=0; ` +
  `while alive && [ "$i" -lt "$ticks" ]; do sleep ${TICK_S}; i=$((i + 1)); done; kill -KILL 0 ) & ` +
  `exec "$@" ${LIFELINE_FD}<&-`;

export interface LifelineCommand {
  file: string;
  args: string[];
  stdio: StdioOptions;
}

/**
 * `file args` started under a keeper that stops the piece's group `graceMs` after the supervisor is gone
 * (SIGTERM at once, SIGKILL then). Spawn it `detached` (its own group) with the returned stdio.
 */
export function withLifeline(file: string, args: readonly string[], graceMs: number): LifelineCommand {
  const ticks = Math.ceil(Math.max(0, graceMs) / 1000 / TICK_S);
  return {
    file: "/bin/sh",
    args: ["-c", KEEPER, "stack-lifeline", String(ticks), file, ...args],
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  };
}
