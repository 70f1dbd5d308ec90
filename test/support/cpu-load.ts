/**
 * A loaded machine, raised by the test itself (issue 49: leaks and lost reads showed only under load):
 * busy loops beside the stack, a little below its priority so the machine is loaded without the stack
 * being starved of every slice.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpus } from "node:os";

export interface CpuLoad {
  /** Busy processes started. */
  count: number;
  stop(): void;
}

/** `perCore` busy processes per core until `stop()`. */
export function loadCpus(perCore: number): CpuLoad {
  const count = Math.max(1, Math.round(perCore * cpus().length));
  const burners: ChildProcess[] = Array.from({ length: count }, () => spawn("nice", ["-n", "5", "sh", "-c", "while :; do :; done"], { stdio: "ignore" }));
  return {
    count,
    stop: () => {
      for (const burner of burners) burner.kill("SIGKILL");
    },
  };
}
