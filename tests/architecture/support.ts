import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export const repo = path.resolve(import.meta.dirname, "../..");

/** Every .ts/.tsx file under `dir` (relative to the repository), skipping generated code. */
export async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(repo, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts"))
    .map((entry) => path.relative(repo, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(path.sep).includes("generated"))
    .sort();
}

export interface ImportLine {
  /** The module specifier as written. */
  specifier: string;
  /** The file it names (without extension), relative to the repository; null for packages. */
  target: string | null;
  /** `import type …` / `export type … from`: erased at run time. */
  typeOnly: boolean;
}

/** The import and re-export statements of a file (static, `from "…"`), with their targets resolved. */
export async function importsOf(file: string): Promise<ImportLine[]> {
  const text = await readFile(path.join(repo, file), "utf8");
  const lines: ImportLine[] = [];
  for (const match of text.matchAll(/^\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["']([^"']+)["']/gm)) {
    const specifier = match[4]!;
    const local = specifier.startsWith(".") ? path.join(path.dirname(file), specifier) : specifier.startsWith("@/") ? specifier.slice(2) : null;
    lines.push({ specifier, target: local && path.normalize(local).replace(/\.(tsx?|js)$/, ""), typeOnly: Boolean(match[2]) });
  }
  for (const match of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) lines.push({ specifier: match[1]!, target: null, typeOnly: false });
  for (const match of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    const specifier = match[1]!;
    const local = specifier.startsWith(".") ? path.join(path.dirname(file), specifier) : null;
    lines.push({ specifier, target: local && path.normalize(local).replace(/\.(tsx?|js)$/, ""), typeOnly: false });
  }
  return lines;
}
