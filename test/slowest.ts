// Prints the ten slowest test files of the last run from bun's --timings file (make test, make
// test-long), so a slow test is seen when it lands.
// Usage: slowest.ts <timings.json> [--only|--except <text in the path>]
import { existsSync, readFileSync } from "node:fs";

const [file, mode, part] = process.argv.slice(2);
if (file === undefined || (mode !== undefined && (part === undefined || !["--only", "--except"].includes(mode)))) {
  console.error("usage: slowest.ts <timings.json> [--only|--except <text in the path>]");
  process.exit(2);
}
let files: Record<string, number>;
try {
  files = (JSON.parse(readFileSync(file, "utf8")) as { files: Record<string, number> }).files;
} catch {
  console.error(`slowest: no per-file durations in ${file}`);
  process.exit(0);
}
const wanted = (path: string) => (mode === "--only" ? path.includes(part ?? "") : mode === "--except" ? !path.includes(part ?? "") : true);
const rows = Object.entries(files)
  // The file merges every run's durations: a renamed or deleted test file stays in it.
  .filter(([path]) => wanted(path) && existsSync(path))
  .sort((a, b) => b[1] - a[1])
  .slice(0, 10);
console.log("\nslowest test files (wall time each, files run side by side):");
for (const [path, ms] of rows) console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${path}`);
