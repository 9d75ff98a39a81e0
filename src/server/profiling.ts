/**
 * `debugging.enableProfiling` (bootstrap-and-config.md §7.1 step 3): profiles under `/debug/pprof/`
 * on the metrics server, as upstream mounts Go's pprof there. Bun has no pprof format, so the
 * profiles are the ones its JavaScript engine gives, in the formats Chrome DevTools opens:
 *   /debug/pprof/                 index
 *   /debug/pprof/cmdline          the command line, NUL-separated (like Go)
 *   /debug/pprof/heap             a heap snapshot (.heapsnapshot JSON)
 *   /debug/pprof/profile?seconds= a CPU profile over that many seconds (default 30, at most 300; .cpuprofile JSON)
 */
export type ProfilingHandler = (req: Request) => Promise<Response | undefined>;

export const profilingPrefix = "/debug/pprof/";
const defaultSeconds = 30;
const maxSeconds = 300;

type Post = (method: string, params?: object) => Promise<unknown>;

const text = (body: string, status = 200) =>
  new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" } });

const download = (body: string, filename: string) =>
  new Response(body, {
    headers: {
      "content-type": "application/json",
      "content-disposition": `attachment; filename="${filename}"`,
      "x-content-type-options": "nosniff",
    },
  });

const index = `/debug/pprof/

cmdline   the command line of this process
heap      a heap snapshot (Chrome DevTools .heapsnapshot)
profile   a CPU profile over ?seconds=N (default ${defaultSeconds}, at most ${maxSeconds}; Chrome DevTools .cpuprofile)
`;

/** Runs one CPU profile through the inspector protocol (node:inspector is loaded on first use). */
async function cpuProfile(seconds: number, signal: AbortSignal): Promise<unknown> {
  const { Session } = await import("node:inspector");
  const session = new Session();
  session.connect();
  const post: Post = (method, params = {}) =>
    new Promise((resolve, reject) => session.post(method, params, (err: Error | null, res: unknown) => (err ? reject(err) : resolve(res))));
  try {
    await post("Profiler.enable");
    await post("Profiler.start");
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
    const res = (await post("Profiler.stop")) as { profile: unknown };
    return res.profile;
  } finally {
    session.disconnect();
  }
}

/** The `/debug/pprof/` routes; undefined for any other path (the server then answers as usual). */
export function createProfilingHandler(argv: readonly string[]): ProfilingHandler {
  let profiling = false;
  return async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/debug/pprof") return Response.redirect(`${url.origin}${profilingPrefix}`, 301);
    if (!url.pathname.startsWith(profilingPrefix)) return undefined;
    const name = url.pathname.slice(profilingPrefix.length);
    switch (name) {
      case "":
        return text(index);
      case "cmdline":
        return text(argv.join("\0"));
      case "heap":
        return download(Bun.generateHeapSnapshot("v8"), "heap.heapsnapshot");
      case "profile": {
        const raw = url.searchParams.get("seconds");
        const seconds = raw === null ? defaultSeconds : Number(raw);
        if (!Number.isInteger(seconds) || seconds < 1 || seconds > maxSeconds) {
          return text(`seconds must be an integer from 1 to ${maxSeconds}\n`, 400);
        }
        // One profile at a time, as the inspector's profiler is process-wide.
        if (profiling) return text("a CPU profile is already running\n", 409);
        profiling = true;
        try {
          return download(JSON.stringify(await cpuProfile(seconds, req.signal)), "cpu.cpuprofile");
        } finally {
          profiling = false;
        }
      }
      default:
        return text(`unknown profile ${JSON.stringify(name)}\n`, 404);
    }
  };
}
