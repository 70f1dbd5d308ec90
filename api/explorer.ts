/**
 * The explorer (issue 14) and the API reference, served beside the api: `/` and `/explorer/*` are the
 * browser front end (explorer/, bundled with esbuild), `/docs` renders the OpenAPI document with
 * swagger-ui-dist. Static pages only: every datum they show comes from the public endpoints.
 */
import { build } from "esbuild";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const EXPLORER_SOURCE = join(root, "explorer");
export const EXPLORER_OUT = join(root, "dist", "explorer");

/** The explorer's files by name: index.html, style.css and the bundled app.js. */
export type ExplorerFiles = Map<string, string>;

/** Bundles explorer/ into its files (in memory); `npm run build` writes them to dist/explorer. */
export async function bundleExplorer(): Promise<ExplorerFiles> {
  const result = await build({
    entryPoints: [join(EXPLORER_SOURCE, "main.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    sourcemap: false,
    write: false,
    outfile: "app.js",
    logLevel: "warning",
  });
  const files: ExplorerFiles = new Map();
  for (const output of result.outputFiles) files.set("app.js", output.text);
  files.set("index.html", readFileSync(join(EXPLORER_SOURCE, "index.html"), "utf8"));
  files.set("style.css", readFileSync(join(EXPLORER_SOURCE, "style.css"), "utf8"));
  return files;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** dist/explorer when `npm run build` left it up to date with the sources, else a fresh bundle. */
export async function loadExplorer(): Promise<ExplorerFiles> {
  const names = ["index.html", "style.css", "app.js"];
  const built = names.map((name) => join(EXPLORER_OUT, name));
  if (built.every((path) => existsSync(path))) {
    const oldest = Math.min(...built.map((path) => statSync(path).mtimeMs));
    if (!existsSync(EXPLORER_SOURCE) || oldest >= newestSource(EXPLORER_SOURCE)) {
      return new Map(names.map((name) => [name, readFileSync(join(EXPLORER_OUT, name), "utf8")]));
    }
  }
  return bundleExplorer();
}

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  png: "image/png",
};

/** The swagger-ui-dist files the reference page loads. */
const SWAGGER_FILES = ["swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"];

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Attestation API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/docs/favicon-32x32.png"><link rel="stylesheet" href="/docs/swagger-ui.css">
<style>body{margin:0} .back{display:block;padding:10px 20px;background:#172036;color:#fff;font:600 15px system-ui,sans-serif;text-decoration:none}</style>
</head><body><a class="back" href="/">← Attestation explorer</a><div id="swagger"></div>
<script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`;

const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: "/api/core/openapi.json", dom_id: "#swagger", deepLinking: true });`;

/** Paths the explorer serves; everything else is the api's. */
export function isExplorerPath(pathname: string): boolean {
  return pathname === "/" || pathname === "/index.html" || pathname.startsWith("/explorer/") || pathname === "/docs" || pathname.startsWith("/docs/");
}

export function explorerSite(files: ExplorerFiles) {
  const swaggerDir = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
  const swagger = new Map(SWAGGER_FILES.map((name) => [name, readFileSync(join(swaggerDir, name))]));
  const typeOf = (name: string) => CONTENT_TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  const notFound = (what: string) =>
    new Response(JSON.stringify({ success: false, error: { code: "NOT_FOUND", message: `No such file: ${what}` } }), {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  // The bundle changes with the code; a reload must never mix an old app.js with a new page.
  const cache = { "cache-control": "no-cache" };
  const index = files.get("index.html") ?? "";
  return new Hono()
    .get("/", (c) => c.html(index))
    .get("/index.html", (c) => c.html(index))
    .get("/explorer/:file", (c) => {
      const name = c.req.param("file");
      const body = files.get(name);
      if (body === undefined || name === "index.html") return notFound(c.req.path);
      return c.body(body, 200, { "content-type": typeOf(name), ...cache });
    })
    .get("/docs", (c) => c.html(DOCS_PAGE))
    .get("/docs/init.js", (c) => c.body(DOCS_INIT, 200, { "content-type": typeOf("init.js") }))
    .get("/docs/:file", (c) => {
      const name = c.req.param("file");
      const body = swagger.get(name);
      if (body === undefined) return notFound(c.req.path);
      return c.body(new Uint8Array(body), 200, { "content-type": typeOf(name), "cache-control": "max-age=3600" });
    })
    .notFound((c) => notFound(c.req.path));
}
