/**
 * A real PostgreSQL server for a test: `initdb` into a temporary directory, `pg_ctl start` on a port of its
 * own on loopback, stopped and deleted after. Debian's `postgresql` package provides the binaries (.ci/run
 * installs it); as root they run as the `postgres` user, since PostgreSQL refuses to run as root. Where the
 * binaries are absent, `postgresBinaries()` is undefined and says why, and the suite says so by name.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts } from "./stack.ts";

export interface PostgresServer {
  url: string;
  stop(): Promise<void>;
}

/** The directory holding initdb and pg_ctl: on PATH, or Debian's /usr/lib/postgresql/<version>/bin. */
export function postgresBinaries(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir !== "" && existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  const debian = "/usr/lib/postgresql";
  if (!existsSync(debian)) return undefined;
  const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) if (existsSync(join(debian, version, "bin", "initdb"))) return join(debian, version, "bin");
  return undefined;
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinaries();
  if (bin === undefined) throw new Error("PostgreSQL's initdb and pg_ctl are not installed (Debian: apt-get install postgresql)");
  const dir = mkdtempSync(join(tmpdir(), "index-pg-"));
  const data = join(dir, "data");
  const [port] = await freePorts(1);
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (program: string, args: string[]): void => {
    const file = join(bin, program);
    if (root) execFileSync("runuser", ["-u", "postgres", "--", file, ...args], { stdio: "pipe" });
    else execFileSync(file, args, { stdio: "pipe" });
  };
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  // fsync off and a socket in the test's own directory: a throwaway server, fast, touching nothing shared.
  run("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-o", `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=100`, "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
