import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { ApiResponse } from "../trpc/http";
import { openApiDocument } from "./openapi";

/**
 * GET /api/openapi.json and the API reference at GET /api/docs: Swagger UI from the
 * swagger-ui-dist package, served by this app (no CDN: the page works offline and behind a
 * firewall). The page's only script is ours (no inline script), and its policy lets it load
 * nothing from any other origin.
 */

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Work Graph API reference</title>
    <link rel="stylesheet" href="/api/docs/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/api/docs/swagger-ui-bundle.js"></script>
    <script src="/api/docs/start.js"></script>
  </body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io for its badge.
const START = `window.ui = SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null });\n`;

const POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const ASSETS: Record<string, { file: string; type: string }> = {
  "swagger-ui.css": { file: "swagger-ui.css", type: "text/css; charset=utf-8" },
  "swagger-ui-bundle.js": { file: "swagger-ui-bundle.js", type: "text/javascript; charset=utf-8" },
};

/** A file of swagger-ui-dist, read on first request (an API server never asked for the docs never reads it). */
const loaded = new Map<string, string>();
const asset = (file: string) => {
  if (!loaded.has(file)) {
    const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
    loaded.set(file, readFileSync(path.join(swaggerUiDir, file), "utf8"));
  }
  return loaded.get(file)!;
};

const answer = (type: string, body: string, cache: string): ApiResponse => ({
  status: 200,
  headers: { "content-type": type, "cache-control": cache, "content-security-policy": POLICY },
  body,
});

export function handleApiDocsRequest(method: string, pathname: string): ApiResponse {
  if (method !== "GET" && method !== "HEAD") {
    return { status: 405, headers: { allow: "GET, HEAD", "content-type": "application/json", "cache-control": "no-store" }, body: JSON.stringify({ reason: "VALIDATION", message: "only GET" }) };
  }
  if (pathname === "/api/openapi.json") return answer("application/json", JSON.stringify(openApiDocument()), "no-store");
  if (pathname === "/api/docs") return answer("text/html; charset=utf-8", PAGE, "no-store");
  const name = pathname.slice("/api/docs/".length);
  if (name === "start.js") return answer("text/javascript; charset=utf-8", START, "no-store");
  const known = ASSETS[name];
  if (known) return answer(known.type, asset(known.file), "public, max-age=3600");
  return { status: 404, headers: { "content-type": "application/json", "cache-control": "no-store" }, body: JSON.stringify({ reason: "NOT_FOUND", message: "no such file under /api/docs" }) };
}
