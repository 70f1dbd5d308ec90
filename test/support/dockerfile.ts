/**
 * A Dockerfile read for static checks (no Docker engine here): its instructions, with line continuations
 * joined and heredoc bodies folded into their RUN, its stages, its ARG defaults and its final stage's labels.
 */
export interface Instruction {
  keyword: string;
  args: string;
}

function parse(source: string): Instruction[] {
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

export function readDockerfile(source: string) {
  const instructions = parse(source);
  const froms = instructions.filter((i) => i.keyword === "FROM");
  const finalStage = instructions.slice(instructions.lastIndexOf(froms[froms.length - 1] as Instruction));
  const args = new Map(
    instructions
      .filter((i) => i.keyword === "ARG" && i.args.includes("="))
      .map((i) => i.args.split("=", 2) as [string, string]),
  );
  const labels = new Map(finalStage.filter((i) => i.keyword === "LABEL").map((i) => i.args.split("=", 2) as [string, string]));
  return { instructions, froms, finalStage, args, labels };
}
