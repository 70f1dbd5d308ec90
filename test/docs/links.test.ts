/**
 * The documentation stays true to the tree: every relative link in README.md and docs/*.md points at a
 * file that exists (and at a heading that exists, for `#anchors`), and every `npm run <name>` it mentions is
 * a script in package.json.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../support/stack.ts";

const pages = ["README.md", ...readdirSync(join(PROJECT_ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const scripts = Object.keys((JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts);

/** GitHub's heading anchors: lower-case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (heading) anchors.add((heading[1] as string).toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-"));
  }
  return anchors;
}

function withoutCode(markdown: string): string {
  return markdown.replace(/```[\s\S]*?```/g, "");
}

describe.each(pages)("%s", (page) => {
  const text = readFileSync(join(PROJECT_ROOT, page), "utf8");

  it("links only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const match of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] as string;
      if (/^[a-z]+:/.test(target)) continue;
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const file = path === "" ? join(PROJECT_ROOT, page) : resolve(dirname(join(PROJECT_ROOT, page)), path);
      if (!existsSync(file)) broken.push(`${target} (no file)`);
      else if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(readFileSync(file, "utf8")).has(anchor)) broken.push(`${target} (no heading)`);
    }
    expect(broken).toEqual([]);
  });

  it("names only npm scripts that exist", () => {
    const named = [...text.matchAll(/npm run (?:-s )?([a-z][a-z0-9:-]*)/g)].map((m) => m[1] as string);
    expect(named.filter((name) => !scripts.includes(name))).toEqual([]);
  });
});
