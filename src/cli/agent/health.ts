import type { Clock } from "../../clock/index.ts";
import type { InformerSet } from "../../kube/index.ts";
import type { HealthChecks } from "../../server/index.ts";

/** healthz fails only after the caches were seen unsynced for this long (upstream: 3 min). */
const unsyncedGraceMs = 3 * 60 * 1000;

class CachesNotSyncedError extends Error {
  override readonly name = "CachesNotSyncedError";
}

/** readyz `informer-sync`: synced now; healthz `informer-sync`: not unsynced for ≥ 3 min in a row. */
export function informerSyncChecks(health: HealthChecks, informers: InformerSet, clock: Clock): void {
  let unsyncedSince: number | undefined;
  health.addReadyzCheck("informer-sync", () => {
    if (!informers.hasSynced()) throw new CachesNotSyncedError("caches not synced");
  });
  health.addHealthzCheck("informer-sync", () => {
    if (informers.hasSynced()) {
      unsyncedSince = undefined;
      return;
    }
    unsyncedSince ??= clock.now();
    if (clock.now() - unsyncedSince >= unsyncedGraceMs) throw new CachesNotSyncedError("caches not synced for 3m0s");
  });
}
