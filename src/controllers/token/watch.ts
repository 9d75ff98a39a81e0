import type { Clock } from "../../clock/index.ts";
import type { TokenSyncConfig } from "../../config/index.ts";
import { Channel, type Controller, newController, only, type Predicate } from "../../kube/index.ts";
import type { KubeObject, ObjectKey, Reconcile, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { enqueueOwnKey } from "../shared/index.ts";

const controllerName = "token";
const secretNamespace = "kube-system";
/** controllerutils.DefaultReconciliationTimeout */
const reconcileTimeoutMs = 3 * 60 * 1000;

/** Upstream runs one worker per sync config (at least one), so one slow secret does not hold up the others. */
export const workersFor = (configs: readonly TokenSyncConfig[]): number => Math.max(1, configs.length);

/** The keys enqueued once at controller start: `kube-system/<secretName>` per sync config, in config order. */
export const startKeys = (configs: readonly TokenSyncConfig[]): ObjectKey[] =>
  configs.map((c) => ({ namespace: secretNamespace, name: c.secretName }));

/** Only Generic events (from the in-process resync channel) enqueue; there is no Secret informer. */
export const resyncPredicate: Predicate<KubeObject> = only<KubeObject>("generic");

/**
 * The in-process channel other controllers use to ask for a token file to be written again (the
 * OSC controller: a synced file was deleted, or service-account keys were rotated in place).
 * `trigger` never blocks; events sent before the controller subscribes are buffered.
 */
export interface TokenResync {
  readonly source: Source<KubeObject>;
  readonly trigger: (secret: ObjectKey) => void;
}

export function createTokenResync(): TokenResync {
  const channel = new Channel<KubeObject>();
  return {
    source: channel,
    trigger: (secret) => channel.send({ metadata: { namespace: secret.namespace, name: secret.name } }),
  };
}

export function newTokenController(opts: {
  readonly reconcile: Reconcile;
  readonly resync: Source<KubeObject>;
  readonly syncConfigs: readonly TokenSyncConfig[];
  readonly clock: Clock;
  readonly log: Logger;
}): Controller {
  const c = newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: workersFor(opts.syncConfigs),
    timeoutMs: reconcileTimeoutMs,
    log: opts.log,
    clock: opts.clock,
    startKeys: startKeys(opts.syncConfigs),
  });
  c.watch(opts.resync, enqueueOwnKey(), resyncPredicate);
  return c;
}
