/**
 * An attestor process for a test (attestor/server.ts, or a test's variant of it such as
 * test/support/stock-attestor.ts), ready once it prints its listening line. Always a process of its own:
 * attestor-core is AGPL-3.0.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { PROJECT_ROOT } from "./stack.ts";

export interface AttestorProcess {
  child: ChildProcess;
  /** The line it printed once listening (its address, and whether it holds a nullifier share). */
  ready: string;
}

/** Starts `args` (node's arguments: the entry and its loader) with `env` beside PATH and HOME. */
export async function startAttestorProcess(args: readonly string[], env: Record<string, string>, timeoutMs = 60_000): Promise<AttestorProcess> {
  const child = spawn(process.execPath, [...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ready = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the attestor did not start in ${timeoutMs / 1000} s`)), timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const line = out.split("\n").find((l) => l.includes("listening on"));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve(line);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the attestor exited (${code})`));
    });
  });
  return { child, ready };
}
