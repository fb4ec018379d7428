import { readdir } from "node:fs/promises";
import path from "node:path";
import { cruise, type ICruiseResult } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

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

/** What the layering check reads: the server, the dashboard, the agent and contract packages and the scripts. */
export const CRUISED = ["server", "app", "packages/agent/src", "packages/contract/src", "scripts", "proxy.ts"];

/**
 * dependency-cruiser over `paths` (relative to `baseDir`) with the rules of .dependency-cruiser.mjs;
 * `baseDir` other than the repository: without the repository's tsconfig (its `@/` alias).
 */
export async function cruiseWithRules(paths: string[] = CRUISED, baseDir = repo): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(path.join(repo, ".dependency-cruiser.mjs"));
  const inRepo = baseDir === repo;
  const tsConfig = inRepo ? extractTSConfig(path.join(repo, "tsconfig.json")) : undefined;
  const previous = process.cwd();
  // dependency-cruiser resolves the paths it is given against the working directory.
  process.chdir(baseDir);
  try {
    const { output } = await cruise(
      paths,
      { ...options, baseDir, validate: true, ...(inRepo ? {} : { tsConfig: undefined }) },
      {},
      { tsConfig },
    );
    return output as ICruiseResult;
  } finally {
    process.chdir(previous);
  }
}

/** Each rule broken, as "rule: from → to". */
export const violationsOf = (result: ICruiseResult) =>
  result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}${violation.cycle ? ` (cycle ${violation.cycle.map((step) => step.name).join(" → ")})` : ""}`);
