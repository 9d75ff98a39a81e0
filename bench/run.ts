/**
 * `make bench`: runs every bench/*.bench.ts as `bun run <file>` (each prints ONE JSON object of
 * figures as its last stdout line), merges the figures into bench/results/latest.json and rewrites
 * the README sections between the bench markers (every figure) and the targets markers (bench/targets.ts:
 * figure, floor, ratio, target, met?). BENCH_ONLY=<name> runs only bench/<name>.bench.ts. Each bench's
 * figures carry the 1-minute load average at its start and end (load_1m_start, load_1m_end), and whether
 * a DAMON `pageout` scheme was running (damon_pageout): it pages out memory idle for a while, so idle RSS
 * readings depend on it.
 */
import { readdir } from "node:fs/promises";
import * as v from "valibot";
import { targetsTable } from "./targets.ts";

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
const TARGETS_START = "<!-- targets:start -->";
const TARGETS_END = "<!-- targets:end -->";

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

/** The 1-minute load average: every figure of this shared machine is read with it. */
const load1m = async (): Promise<number> => Number((await Bun.file("/proc/loadavg").text()).split(" ")[0]);

const damonAdmin = "/sys/kernel/mm/damon/admin/kdamonds";

/** Whether any running kdamond has a `pageout` scheme (false where the kernel has no DAMON sysfs). */
const damonPageout = async (): Promise<boolean> => {
  const readTrimmed = async (path: string): Promise<string> =>
    (
      await Bun.file(path)
        .text()
        .catch(() => "")
    ).trim();
  const kdamonds = await readdir(damonAdmin).catch(() => [] as string[]);
  for (const k of kdamonds.filter((d) => /^\d+$/.test(d))) {
    if ((await readTrimmed(`${damonAdmin}/${k}/state`)) !== "on") continue;
    const actions = await Array.fromAsync(new Bun.Glob(`${k}/contexts/*/schemes/*/action`).scan({ cwd: damonAdmin }));
    for (const a of actions) if ((await readTrimmed(`${damonAdmin}/${a}`)) === "pageout") return true;
  }
  return false;
};

const runBench = async (file: string): Promise<Figures> => {
  const name = file.replace(/^.*\//, "").replace(/\.bench\.ts$/, "");
  const loadStart = await load1m();
  const pageout = await damonPageout();
  console.error(`bench: running ${name} (load ${loadStart}${pageout ? ", DAMON pageout on" : ""})`);
  const proc = Bun.spawn([process.execPath, "run", file], { cwd: repo, stdout: "pipe", stderr: "inherit", env: process.env });
  const stdout = await new Response(proc.stdout).text();
  const code = await proc.exited;
  if (code !== 0) throw new BenchError(`${name}: exited with ${code}`);
  return { ...lastJsonLine(name, stdout), load_1m_start: loadStart, load_1m_end: await load1m(), damon_pageout: pageout };
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

const replaceBetween = (text: string, start: string, end: string, body: string): string | undefined => {
  const s = text.indexOf(start);
  const e = text.indexOf(end);
  if (s < 0 || e < s) return undefined;
  return `${text.slice(0, s + start.length)}\n${body}\n${text.slice(e)}`;
};

const updateReadme = async (text: string, targets: string): Promise<boolean> => {
  const file = Bun.file(readmePath);
  if (!(await file.exists())) return false;
  const withTable = replaceBetween(await file.text(), START, END, text);
  if (withTable === undefined) return false;
  await Bun.write(readmePath, replaceBetween(withTable, TARGETS_START, TARGETS_END, targets) ?? withTable);
  return true;
};

/** `bun run bench/run.ts --readme`: rewrites the README tables from bench/results/latest.json, runs nothing. */
const readmeOnly = async (): Promise<number> => {
  const parsed = v.safeParse(resultsSchema, await Bun.file(resultsPath).json());
  if (!parsed.success) throw new BenchError(`${resultsPath} is not a bench result`);
  if (!(await updateReadme(table(parsed.output), targetsTable(parsed.output.benches)))) throw new BenchError("README has no bench markers");
  return 0;
};

const main = async (): Promise<number> => {
  if (process.argv.includes("--readme")) return readmeOnly();
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
    if (!(await updateReadme(text, targetsTable(benches)))) console.log(text);
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
