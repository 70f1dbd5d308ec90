/**
 * The images' bundle stage, run here as Docker would run it (no Docker engine here): a directory holding
 * only what the stage copies from the context, the project's installed packages in place of its `npm ci`,
 * then the stage's build command. A build that imports a file the stage does not copy fails here.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseDockerfile } from "./static.ts";

const root = join(import.meta.dirname, "../..");
const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe.each(["Dockerfile.cartesi", "Dockerfile.cartesi-v2"])("%s's bundle stage", (dockerfile) => {
  it("builds the bundle from what it copies alone", () => {
    const instructions = parseDockerfile(readFileSync(join(root, dockerfile), "utf8"));
    const start = instructions.findIndex((i) => i.keyword === "FROM" && / AS bundle$/i.test(i.args));
    expect(start).toBeGreaterThanOrEqual(0);
    const end = instructions.findIndex((i, n) => n > start && i.keyword === "FROM");
    const stage = instructions.slice(start + 1, end < 0 ? undefined : end);

    const dir = mkdtempSync(join(tmpdir(), "bundle-stage-"));
    scratch.push(dir);
    for (const copy of stage.filter((i) => i.keyword === "COPY" && !i.args.includes("--from="))) {
      const parts = copy.args.split(/\s+/);
      const target = parts.at(-1) as string;
      for (const source of parts.slice(0, -1)) {
        const to = target.endsWith("/") ? join(dir, target, source.split("/").at(-1) as string) : join(dir, target);
        mkdirSync(dirname(to), { recursive: true });
        cpSync(join(root, source), to, { recursive: true });
      }
    }
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    const builds = stage.filter((i) => i.keyword === "RUN" && !/\bnpm ci\b/.test(i.args));
    expect(builds.map((i) => i.args)).toEqual(["npx tsx toolkit/dapp-build.ts dist"]);
    for (const run of builds) execFileSync("bash", ["-c", run.args], { cwd: dir, stdio: "pipe" });
    for (const built of ["dist/dapp/main.js", "dist/migrations/meta/_journal.json", "dist/package.json"]) expect(existsSync(join(dir, built)), built).toBe(true);
  });
});
