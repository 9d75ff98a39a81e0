import type { Osc } from "../../../osc/index.ts";
import { computeContainerdDiff } from "../plan/diff.ts";
import { hostsToml, probeRegistry, registryDir, writeHostsToml } from "./containerd/index.ts";
import type { StepContext } from "./context.ts";

/**
 * The hosts.toml texts by upstream that `osc`'s apply writes before it pulls image files (step 14: probed
 * registries wait for their probe, so their pulls use what is on disk). Staging pulls with these.
 */
export function hostsTomlBeforePull(osc: Osc): Map<string, string> {
  const { desired, upstreamsToProbe } = computeContainerdDiff(undefined, osc).registries;
  const probed = new Set(upstreamsToProbe);
  return new Map(desired.filter((r) => !probed.has(r.upstream)).map((r) => [r.upstream, hostsToml(r)]));
}

/** Probed registries still running in the background after step 14. */
export interface PendingProbes {
  /** Step 22: resolves when every probed registry's hosts.toml is written; rethrows a probe failure. */
  wait(): Promise<void>;
  /** Stops the probes (the reconcile failed elsewhere). */
  cancel(): void;
}

/**
 * Step 14 (§7.4): hosts.toml of non-probed registries now; probed ones in the background
 * (they may depend on workloads that only start once kubelet runs).
 */
export async function writeRegistries(ctx: StepContext): Promise<PendingProbes> {
  const { host, log } = ctx.ports;
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const probes: Promise<void>[] = [];
  const toProbe = new Set(ctx.store.changes.containerd.registries.upstreamsToProbe);
  for (const r of [...ctx.store.changes.containerd.registries.desired]) {
    registryDir(r.upstream); // validates before anything runs in the background
    if (toProbe.has(r.upstream)) {
      const p = (async () => {
        await probeRegistry({ fetch: ctx.ports.probeFetch, clock: ctx.ports.clock, host, log }, r, signal);
        await writeHostsToml(host, r);
        log.info("Wrote registry mirror configuration after successful probe", { upstream: r.upstream });
        await ctx.store.registryDesiredDone(r.upstream);
      })();
      p.catch(() => undefined); // observed by wait(); avoids an unhandled rejection if the reconcile fails first
      probes.push(p);
      continue;
    }
    await writeHostsToml(host, r);
    log.info("Wrote registry mirror configuration", { upstream: r.upstream });
    await ctx.store.registryDesiredDone(r.upstream);
  }
  return {
    async wait() {
      await Promise.all(probes);
    },
    cancel() {
      stop.abort(new Error("reconcile ended"));
    },
  };
}

/** Step 22 (second half): certs.d directories of registries no longer configured. */
export async function removeDeletedRegistries(ctx: StepContext): Promise<void> {
  for (const r of [...ctx.store.changes.containerd.registries.deleted]) {
    await ctx.ports.host.removeAll(registryDir(r.upstream));
    ctx.ports.log.info("Removed registry mirror configuration", { upstream: r.upstream });
    await ctx.store.registryDeletedDone(r.upstream);
  }
}
