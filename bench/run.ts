/**
 * `make bench`: runs every bench/*.bench.ts as `bun run <file>` (each prints ONE JSON object of
 * figures as its last stdout line), merges the figures into bench/results/latest.json and rewrites
 * the README section between the bench markers. BENCH_ONLY=<name> runs only bench/<name>.bench.ts.
 */
import * as v from "valibot";

const figuresSchema = v.record(v.string(), v.union([v.number(), v.string(), v.boolean(), v.null()]));
const resultsSchema = v.object({
  date: v.string(),
  bun: v.string(),
  cores: v.number(),
  benches: v.record(v.string(), figuresSchema),
});
type Results = v.InferOutput<typeof resultsSchema>;
type Figures = v.InferOutput<typeof figuresSchema>;

const START = "<!-- bench:start -->";
const END = "<!-- bench:end -->";

const repo = new URL("..", import.meta.url).pathname;
const resultsPath = `${repo}bench/results/latest.json`;
const readmePath = `${repo}README.md`;

class BenchError extends Error {
  override readonly name = "BenchError";
}

const lastJsonLine = (name: string, stdout: string): Figures => {
  const line = stdout.trim().split("\n").at(-1) ?? "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw new BenchError(`${name}: last stdout line is not JSON: ${JSON.stringify(line.slice(0, 200))}`, { cause: err });
  }
  const figures = v.safeParse(figuresSchema, parsed);
  if (!figures.success) throw new BenchError(`${name}: last stdout line is not an object of figures`);
  return figures.output;
};

const runBench = async (file: string): Promise<Figures> => {
  const name = file.replace(/^.*\//, "").replace(/\.bench\.ts$/, "");
  console.error(`bench: running ${name}`);
  const proc = Bun.spawn([process.execPath, "run", file], { cwd: repo, stdout: "pipe", stderr: "inherit", env: process.env });
  const stdout = await new Response(proc.stdout).text();
  const code = await proc.exited;
  if (code !== 0) throw new BenchError(`${name}: exited with ${code}`);
  return lastJsonLine(name, stdout);
};

const previous = async (): Promise<Results["benches"]> => {
  const file = Bun.file(resultsPath);
  if (!(await file.exists())) return {};
  const parsed = v.safeParse(resultsSchema, await file.json());
  return parsed.success ? parsed.output.benches : {};
};

const table = (r: Results): string => {
  const rows = Object.entries(r.benches).flatMap(([bench, figures]) =>
    Object.entries(figures).map(([k, value]) => `| ${bench} | ${k} | ${String(value)} |`),
  );
  return [
    `Measured ${r.date} with Bun ${r.bun} on ${r.cores} cores (\`make bench\`).`,
    "",
    "| bench | figure | value |",
    "|---|---|---|",
    ...rows,
  ].join("\n");
};

const updateReadme = async (text: string): Promise<boolean> => {
  const file = Bun.file(readmePath);
  if (!(await file.exists())) return false;
  const readme = await file.text();
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) return false;
  await Bun.write(readmePath, `${readme.slice(0, start + START.length)}\n${text}\n${readme.slice(end)}`);
  return true;
};

const main = async (): Promise<number> => {
  const only = process.env["BENCH_ONLY"];
  const files = [...new Bun.Glob("bench/*.bench.ts").scanSync({ cwd: repo })]
    .sort()
    .filter((f) => only === undefined || only === "" || f === `bench/${only}.bench.ts`);
  if (files.length === 0) {
    console.error(`bench: no benchmark matches ${only ?? "bench/*.bench.ts"}`);
    return 1;
  }
  const benches = await previous();
  let failed = 0;
  for (const file of files) {
    // One failing benchmark must not throw away the figures of the others: record and go on.
    try {
      benches[file.replace(/^bench\//, "").replace(/\.bench\.ts$/, "")] = await runBench(file);
    } catch (err) {
      failed += 1;
      console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    const results: Results = { date: new Date().toISOString(), bun: Bun.version, cores: navigator.hardwareConcurrency, benches };
    await Bun.write(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
    const text = table(results);
    if (!(await updateReadme(text))) console.log(text);
  }
  console.error(`bench: wrote ${resultsPath}${failed > 0 ? ` (${failed} benchmark(s) failed)` : ""}`);
  return failed > 0 ? 1 : 0;
};

try {
  process.exitCode = await main();
} catch (err) {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
