import type { Clock } from "../../clock/index.ts";
import { isNotFound, leases, nodes } from "../../kube/index.ts";
import type { Kube, KubeObject, Reader, Reconcile } from "../../kube/index.ts";
import { StepError } from "../../log/index.ts";
import type { Logger } from "../../log/index.ts";
import { desiredLease, leaseName } from "./lease-object.ts";
import { leaseDurationSeconds as defaultDuration, leaseNamespace, renewIntervalMs, requestTimeoutMs } from "./watch.ts";

export interface LeaseReconcilerDeps {
  /** Cached read of the own Node (informer). */
  readonly nodes: Reader;
  /** Lease reads (on a miss) and writes. */
  readonly kube: Kube;
  readonly clock: Clock;
  readonly log: Logger;
  /** Default `kube-system`. */
  readonly namespace?: string;
  /** Default 40. */
  readonly leaseDurationSeconds?: number;
  /** Called after every successful create/update with the renewTime written (health + metrics). */
  readonly onRenewed?: (atMs: number) => void;
}

/** One Lease request got no answer within its deadline (the cause of the reconcile's error). */
class LeaseRequestTimeout extends Error {
  override readonly name = "LeaseRequestTimeout";
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs}ms`);
  }
}

/**
 * Runs one request under its own deadline on the injected clock (watch.ts says why 5 s; the client's
 * own 30 s bound leaves no margin). The reconcile's signal still ends it at once.
 */
async function withDeadline<T>(
  clock: Clock,
  timeoutMs: number,
  signal: AbortSignal,
  request: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const expired = new AbortController();
  const finished = new AbortController();
  clock.sleep(timeoutMs, AbortSignal.any([signal, finished.signal])).then(
    () => expired.abort(new LeaseRequestTimeout(timeoutMs)),
    () => {}, // answered first, or the reconcile ended
  );
  try {
    return await request(AbortSignal.any([signal, expired.signal]));
  } finally {
    finished.abort();
  }
}

/**
 * The heartbeat (controllers.md §3): create the Lease if absent, else update the whole object
 * (optimistic concurrency: a conflict fails the attempt and the runtime retries with backoff).
 *
 * The Lease is read from the object the last successful write returned — a write-through cache of
 * this one object — and with a live GET after start and after any failed write. Upstream reads it
 * through a Lease informer; the outcome is the same (a stale copy only ever costs one 409 and a
 * retry), while the steady state needs one request per renewal and no Lease watch.
 */
export function createReconciler(deps: LeaseReconcilerDeps): Reconcile {
  const namespace = deps.namespace ?? leaseNamespace;
  const duration = deps.leaseDurationSeconds ?? defaultDuration;
  const bounded = <T>(signal: AbortSignal, request: (signal: AbortSignal) => Promise<T>) =>
    withDeadline(deps.clock, requestTimeoutMs(duration), signal, request);
  let lastWritten: KubeObject | undefined;

  const readLease = async (name: string, signal: AbortSignal): Promise<KubeObject | undefined> => {
    if (lastWritten?.metadata.name === name) return lastWritten;
    try {
      return await bounded(signal, (s) => deps.kube.get<KubeObject>(leases, namespace, name, { signal: s }));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw new StepError(`failed reading lease ${namespace}/${name}`, err);
    }
  };

  return async (key, signal) => {
    let node: KubeObject;
    try {
      node = await deps.nodes.get<KubeObject>(nodes, "", key.name, { signal });
    } catch (err) {
      // NotFound included: once the Node is gone the Lease is no longer renewed (it is garbage
      // collected through its owner reference).
      throw new StepError(`failed getting node ${key.name}`, err);
    }
    const name = leaseName(node.metadata.name ?? key.name);
    const existing = await readLease(name, signal);
    const nowMs = deps.clock.now();
    const { lease, ownerError } = desiredLease({ existing, node, namespace, leaseDurationSeconds: duration, nowMs });
    if (ownerError !== undefined)
      deps.log.error("Unable to set controller reference for Lease", { err: ownerError, lease: `${namespace}/${name}` });

    const op = existing === undefined ? "created" : "updated";
    try {
      lastWritten =
        existing === undefined
          ? await bounded(signal, (s) => deps.kube.create<KubeObject>(leases, namespace, lease, { signal: s }))
          : await bounded(signal, (s) => deps.kube.update<KubeObject>(leases, namespace, lease, { signal: s }));
    } catch (err) {
      lastWritten = undefined;
      throw new StepError(`failed ${existing === undefined ? "creating" : "updating"} lease ${namespace}/${name}`, err);
    }
    deps.onRenewed?.(nowMs);
    deps.log.debug("Heartbeat Lease", { lease: `${namespace}/${name}`, operation: op });
    return { requeueAfterMs: renewIntervalMs(duration) };
  };
}
