import type { RunCommand } from "./deps.ts";

/**
 * The real runner: Bun.spawn (no shell), stdin closed, stdout then stderr as one output, killed on
 * abort. The command inherits the agent's environment.
 */
export function createCommandRunner(): RunCommand {
  return async (argv, signal) => {
    const proc = Bun.spawn([...argv], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      signal,
    });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, output: stdout + stderr };
  };
}

const kubeletHealthzUrl = "http://127.0.0.1:10248/healthz";
const probeTimeoutMs = 10_000;

/** One GET of kubelet's healthz with a 10 s timeout (§9.3): true on HTTP 200. */
export function createKubeletHealthProbe(url = kubeletHealthzUrl): (signal: AbortSignal) => Promise<boolean> {
  return async (signal) => {
    const res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(probeTimeoutMs)]) });
    await res.body?.cancel();
    return res.status === 200;
  };
}
