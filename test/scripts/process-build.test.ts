/**
 * What the suites run instead of the sources (toolkit/process-build.ts): a process's packages bundled into
 * its module, those kept as imports left to node_modules, a bundled package that would look for files
 * beside itself refused with its name, and the commands' shared build naming each command's source.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compiledPath } from "../../toolkit/compiled-path.ts";
import { buildProcesses } from "../../toolkit/process-build.ts";
import { PROJECT_ROOT } from "../support/stack.ts";

// Under the project, so the packages resolve from its node_modules as the real entries' do.
const scratch = join(".scratch", `process-build-${process.pid}`);
const out = join(PROJECT_ROOT, scratch, "out");
mkdirSync(join(PROJECT_ROOT, scratch), { recursive: true });

function entry(name: string, source: string): string {
  writeFileSync(join(PROJECT_ROOT, scratch, name), source);
  return join(scratch, name);
}

afterAll(() => {
  rmSync(join(PROJECT_ROOT, scratch), { recursive: true, force: true });
});

describe("the processes compiled for the suites", () => {
  it("bundles a process's packages, keeps the native and file-bound ones as imports, and names its source", async () => {
    const own = entry("own.ts", 'import { z } from "zod";\nimport Database from "better-sqlite3";\nconsole.log(z.string().parse("x"), typeof Database);\n');
    await buildProcesses(out, [own]);
    const compiled = readFileSync(compiledPath(out, own), "utf8");
    expect(compiled).not.toMatch(/from "zod"/);
    expect(compiled).toMatch(/from "better-sqlite3"/);
    expect(compiled).toContain(`process.argv[1] = ${JSON.stringify(join(PROJECT_ROOT, own))};`);
  });

  it("refuses a bundled package that reads __dirname, naming it", async () => {
    const bound = entry("bound.ts", 'import ThreadStream from "thread-stream";\nconsole.log(typeof ThreadStream);\n');
    await expect(buildProcesses(out, [bound])).rejects.toThrow(/^bundled packages that find files beside themselves; add them to KEPT_AS_IMPORTS:\nthread-stream reads __dirname \((\.\.\/[^)]*)?node_modules\/thread-stream\/index\.js\)/);
  });

  it("builds the commands together, each naming its own source before any shared chunk runs", async () => {
    const one = entry("one.ts", 'import { z } from "zod";\nconsole.log(z.number().parse(1));\n');
    const two = entry("two.ts", 'import { z } from "zod";\nconsole.log(z.number().parse(2));\n');
    await buildProcesses(out, [], [one, two]);
    for (const name of [one, two]) {
      const compiled = readFileSync(compiledPath(out, name), "utf8");
      const argvModule = compiledPath(out, name).replace(/\.mjs$/, ".argv.mjs");
      expect(compiled.split("\n")[0]).toBe(`import ${JSON.stringify(`./${argvModule.split("/").pop() ?? ""}`)};`);
      expect(readFileSync(argvModule, "utf8")).toBe(`process.argv[1] = ${JSON.stringify(join(PROJECT_ROOT, name))};\n`);
    }
  });
});
