import type { Clock } from "../../../../clock/index.ts";
import type { HostFs } from "../../../../host/index.ts";
import type { Logger } from "../../../../log/index.ts";
import type { RegistryConfig } from "../../../../osc/index.ts";
import { certsDir } from "./config-toml.ts";

/** fetch as Bun offers it (with `tls.ca`); injected so tests control the network. */
export type ProbeFetch = (url: string, init: { signal: AbortSignal; tls?: { ca: string[] } }) => Promise<Response>;

export interface ProbeDeps {
  readonly fetch: ProbeFetch;
  readonly clock: Clock;
  readonly host: HostFs;
  readonly log: Logger;
}

const probeIntervalMs = 2000;
const requestTimeoutMs = 1000;

async function hostReachable(
  deps: ProbeDeps,
  r: RegistryConfig,
  url: string,
  caCerts: readonly string[],
  signal: AbortSignal,
): Promise<boolean> {
  const ca: string[] = [];
  for (const c of caCerts) {
    const p = c.startsWith("/") ? c : `${certsDir}/${r.upstream}/${c}`;
    const pem = await deps.host.readText(p);
    if (pem === undefined) return false;
    ca.push(pem);
  }
  try {
    const res = await deps.fetch(url, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(requestTimeoutMs)]),
      ...(ca.length > 0 ? { tls: { ca } } : {}),
    });
    await res.body?.cancel();
    return true; // any HTTP answer counts; only transport errors fail
  } catch {
    // A transport failure is the expected "not ready yet" outcome; the loop retries.
    return false;
  }
}

/** Waits until every host of the registry answers HTTP (§7.4); rejects when `signal` aborts. */
export async function probeRegistry(deps: ProbeDeps, r: RegistryConfig, signal: AbortSignal): Promise<void> {
  for (;;) {
    signal.throwIfAborted();
    let ok = true;
    for (const h of r.hosts ?? []) {
      if (!(await hostReachable(deps, r, h.url, h.caCerts ?? [], signal))) {
        ok = false;
        break;
      }
    }
    if (ok) return;
    deps.log.info("Registry mirror not ready yet, retrying", { upstream: r.upstream });
    await deps.clock.sleep(probeIntervalMs, signal);
  }
}
