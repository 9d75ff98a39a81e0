import type { ContainerdVersionProbe } from "./containerd.ts";
import { errorText } from "../../log/index.ts";

/** containerd's client gives up dialling after 10 s; the probe as a whole gets the same budget. */
const containerdProbeTimeoutMs = 10_000;

/** Where containerd listens (CONTAINERD_ADDRESS / CONTAINERD_NAMESPACE, parsed in cli/env.ts). */
export interface ContainerdEndpoint {
  readonly address: string;
  readonly namespace: string;
}

/** `ctr version` could not ask the daemon. */
export class ContainerdUnreachableError extends Error {
  override readonly name = "ContainerdUnreachableError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * The containerd Version API through containerd's own CLI: `ctr --address <a> --namespace <n>
 * version` prints the client version and then calls the daemon's Version RPC over the socket,
 * exiting non-zero when the daemon does not answer. We have no gRPC client; `ctr` ships with
 * every containerd installation the agent configures, and a missing binary is reported as an
 * unhealthy containerd (it could not be asked). The process is killed after 10 s or on abort.
 */
export function createCtrVersionProbe(
  endpoint: ContainerdEndpoint,
  opts: { readonly binary?: string; readonly timeoutMs?: number } = {},
): ContainerdVersionProbe {
  const argv = [opts.binary ?? "ctr", "--address", endpoint.address, "--namespace", endpoint.namespace, "version"];
  const timeoutMs = opts.timeoutMs ?? containerdProbeTimeoutMs;
  return async (signal) => {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    let proc: Bun.Subprocess<"ignore", "ignore", "pipe">;
    try {
      proc = Bun.spawn(argv, { stdin: "ignore", stdout: "ignore", stderr: "pipe", signal: deadline });
    } catch (err) {
      throw new ContainerdUnreachableError(`failed to run ${argv[0]}: ${errorText(err)}`, { cause: err });
    }
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    signal.throwIfAborted();
    if (deadline.aborted) throw new ContainerdUnreachableError(`containerd version request timed out after ${timeoutMs / 1000}s`);
    if (code !== 0) throw new ContainerdUnreachableError(lastLine(stderr) ?? `${argv.join(" ")} exited with ${code}`);
  };
}

/** ctr prints the failure last (`ctr: failed to dial "…": …`). */
const lastLine = (text: string): string | undefined =>
  text
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "")
    .at(-1)
    ?.trim();
