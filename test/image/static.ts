/**
 * Readers for the image suites, which check statically what a build would rely on (no Docker engine
 * here): a Dockerfile's instructions, and the subset of TOML that cartesi.toml uses.
 */

export interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions with line continuations joined and heredoc bodies folded into their RUN. */
export function parseDockerfile(source: string): Instruction[] {
  const lines = source.split("\n");
  const out: Instruction[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] as string).trim();
    if (line === "" || line.startsWith("#")) continue;
    while (line.endsWith("\\") && i + 1 < lines.length) line = `${line.slice(0, -1).trim()} ${(lines[++i] as string).trim()}`;
    const heredoc = /<<(\w+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      while (i + 1 < lines.length && (lines[i + 1] as string).trim() !== heredoc[1]) body.push(lines[++i] as string);
      i++;
      line = `${line}\n${body.join("\n")}`;
    }
    const space = line.indexOf(" ");
    out.push({ keyword: line.slice(0, space).toUpperCase(), args: line.slice(space + 1).trim() });
  }
  return out;
}

/** The instructions from the last FROM on: the image's own stage. */
export function lastStage(instructions: Instruction[]): Instruction[] {
  const froms = instructions.filter((i) => i.keyword === "FROM");
  return instructions.slice(instructions.lastIndexOf(froms[froms.length - 1] as Instruction));
}

/** The instructions of the stage named `name` (`FROM ... AS name`), its FROM first. */
export function namedStage(instructions: Instruction[], name: string): Instruction[] {
  const start = instructions.findIndex((i) => i.keyword === "FROM" && new RegExp(`\\s+AS\\s+${name}$`, "i").test(i.args));
  if (start < 0) throw new Error(`no stage named ${name}`);
  const end = instructions.findIndex((i, n) => n > start && i.keyword === "FROM");
  return instructions.slice(start, end < 0 ? undefined : end);
}

/**
 * What is wrong with the `COPY --from=<stage>` instructions, if anything: each must name an earlier stage and
 * copy what that stage writes under its WORKDIR, the bundle's `dist/` (`npx tsx toolkit/dapp-build.ts
 * dist`) or the native stage's `node_modules` (its npm install).
 */
export function stageCopyProblems(instructions: Instruction[]): string[] {
  const problems: string[] = [];
  for (const copy of instructions.filter((i) => i.keyword === "COPY" && i.args.startsWith("--from="))) {
    const [flag, source] = copy.args.split(/\s+/) as [string, string];
    const name = flag.slice("--from=".length);
    const stage = namedStage(instructions, name);
    if (instructions.indexOf(stage[0] as Instruction) > instructions.indexOf(copy)) problems.push(`${copy.args}: ${name} comes later`);
    const workdir = stage.find((i) => i.keyword === "WORKDIR")?.args;
    const written = name === "bundle" ? `${workdir}/dist/${source.split("/").at(-1)}` : `${workdir}/node_modules`;
    if (source !== written) problems.push(`${copy.args}: ${name} writes ${written}`);
  }
  return problems;
}

/** `ARG NAME=default` lines anywhere in the file, by name. */
export function argDefaults(instructions: Instruction[]): Map<string, string> {
  return new Map(
    instructions
      .filter((i) => i.keyword === "ARG" && i.args.includes("="))
      .map((i) => {
        const eq = i.args.indexOf("=");
        return [i.args.slice(0, eq), i.args.slice(eq + 1)] as [string, string];
      }),
  );
}

/** `ENV NAME=value` of the given instructions, by name, as Docker stores them (quotes removed). */
export function envValues(instructions: Instruction[]): Map<string, string> {
  return new Map(
    instructions
      .filter((i) => i.keyword === "ENV")
      .map((i) => {
        const eq = i.args.indexOf("=");
        return [i.args.slice(0, eq), i.args.slice(eq + 1).replace(/^"(.*)"$/, "$1")] as [string, string];
      }),
  );
}

export type TomlValue = string | number | boolean | string[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

/**
 * The TOML cartesi.toml is written in: `[a.b]` headers, bare keys, and values that are basic strings
 * without escapes, integers, booleans or one-line arrays of such strings; `#` comments. Anything else
 * throws, naming the line, so the file cannot drift into syntax this reader would misread.
 */
export function parseToml(source: string): TomlTable {
  const root: TomlTable = {};
  let table = root;
  source.split("\n").forEach((raw, index) => {
    const fail = (what: string): never => {
      throw new Error(`line ${index + 1}: ${what}: ${raw}`);
    };
    const line = stripComment(raw).trim();
    if (line === "") return;
    const header = /^\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\]$/.exec(line);
    if (header) {
      table = root;
      for (const name of (header[1] as string).split(".")) {
        const next = table[name] ?? {};
        if (typeof next !== "object" || Array.isArray(next)) fail(`${name} is not a table`);
        table[name] = next;
        table = next as TomlTable;
      }
      return;
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(.+)$/.exec(line);
    if (!pair) return fail("not a key = value pair or a [table] header");
    const key = pair[1] as string;
    if (key in table) fail(`${key} is defined twice`);
    table[key] = parseValue(pair[2] as string) ?? fail("a value this reader does not take");
  });
  return root;
}

function parseValue(text: string): TomlValue | undefined {
  const string = /^"([^"\\]*)"$/.exec(text);
  if (string) return string[1] as string;
  if (/^[+-]?\d+$/.test(text)) return Number(text);
  if (text === "true" || text === "false") return text === "true";
  const array = /^\[(.*)\]$/.exec(text);
  if (array) {
    const items = (array[1] as string).split(",").map((s) => s.trim()).filter((s) => s !== "");
    const strings = items.map((item) => /^"([^"\\]*)"$/.exec(item)?.[1]);
    return strings.every((s) => s !== undefined) ? (strings as string[]) : undefined;
  }
  return undefined;
}

/** The line without a `#` comment, leaving a `#` inside a string alone. */
function stripComment(line: string): string {
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '"') inString = !inString;
    else if (line[i] === "#" && !inString) return line.slice(0, i);
  }
  return line;
}
