/** What the agent needs from the containerd installation; injected so tests need no containerd. */
export interface ContainerdInfo {
  /** stdout of `containerd config default`. */
  defaultConfig(signal?: AbortSignal): Promise<string>;
  /** The containerd version text, e.g. output of `containerd --version`. */
  version(signal?: AbortSignal): Promise<string>;
}

class ContainerdCommandError extends Error {
  override readonly name = "ContainerdCommandError";
}

async function run(argv: string[], signal?: AbortSignal): Promise<string> {
  let proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", ...(signal ? { signal } : {}) });
  } catch (err) {
    throw new ContainerdCommandError(`failed to run ${argv.join(" ")}`, { cause: err });
  }
  const [out, errText, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new ContainerdCommandError(`${argv.join(" ")} exited with ${code}: ${errText.trim()}`);
  return out;
}

/** Runs the `containerd` binary found on `PATH` (or the given path). */
export function createContainerdInfo(binary = "containerd"): ContainerdInfo {
  return {
    defaultConfig: (signal) => run([binary, "config", "default"], signal),
    version: (signal) => run([binary, "--version"], signal),
  };
}
