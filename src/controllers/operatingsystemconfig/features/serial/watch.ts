import type { Clock } from "../../../../clock/index.ts";
import {
  type Controller,
  type EventHandler,
  type Kube,
  type KubeObject,
  type ObjectKey,
  type Predicate,
  type Reader,
  Informer,
  leases,
  nodes,
  secrets,
} from "../../../../kube/index.ts";
import type { Logger } from "../../../../log/index.ts";
import { checksumAnnotation } from "../../constants.ts";
import { leaseSpecOf } from "./lease-spec.ts";
import { serialLeaseNamespace } from "./lock.ts";

const holderOf = (lease: KubeObject): string => leaseSpecOf(lease).holderIdentity ?? "";

/** 9.2: an Update where another node (not this host) just released the lock; the handler asks whether we are outdated. */
export function serialLeasePredicate(hostName: string): Predicate<KubeObject> {
  return {
    create: () => false,
    update: (oldLease, newLease) => holderOf(oldLease) !== hostName && holderOf(newLease) === "",
    delete: () => false,
    generic: () => false,
  };
}

export interface LeaseHandlerDeps {
  /** The OSC Secret's key (the Lease carries the Secret's name). */
  readonly secret: ObjectKey;
  /** Secret checksum ≠ the Node's applied checksum; an unreadable Secret or Node counts as outdated. */
  readonly outdated: (signal: AbortSignal) => Promise<boolean>;
  readonly log: Logger;
  /** Process lifetime. */
  readonly signal: AbortSignal;
}

/** Maps a Lease event that passed the predicates to the Secret's key, when this node is outdated. */
export function enqueueSecretWhenOutdated(deps: LeaseHandlerDeps): EventHandler<KubeObject> {
  const maybeAdd = (add: () => void) => {
    deps.outdated(deps.signal).then(
      (yes) => {
        if (yes) add();
      },
      // Counted as outdated by the contract; reaching here means the check itself broke.
      (err: unknown) => {
        deps.log.error("Failed checking whether the node is outdated, enqueuing anyway", { err });
        add();
      },
    );
  };
  return {
    create: () => {},
    update: (_old, _new, q) => maybeAdd(() => q.add(deps.secret)),
    delete: () => {},
    generic: () => {},
  };
}

/** The outdated check of 9.2 as a pure comparison (undefined = could not be read). */
export function isOutdated(secretChecksum: string | undefined, nodeChecksum: string | undefined): boolean {
  return secretChecksum === undefined || nodeChecksum === undefined || secretChecksum !== nodeChecksum;
}

/** How long a reconcile waits for the Lease watch's first list. */
const syncWaitMs = 10_000;

export interface SerialLeaseWatchSetup {
  readonly kube: Kube;
  /** Cached reads of the OSC Secret and the own Node (the outdated check). */
  readonly cache: Reader;
  readonly clock: Clock;
  readonly log: Logger;
  readonly secretName: string;
  readonly hostName: string;
  readonly nodeName: string;
  readonly signal: AbortSignal;
  /** Lease updates that changed rollout slots only (rollout/watch.ts): not a release of the lock, no wake. */
  readonly slotsOnly?: (old: KubeObject, now: KubeObject) => boolean;
}

/**
 * 9.2's own Lease cache, started at first need and kept out of the shared caches (start-up and readyz
 * never wait for it). Issue 25: it runs only while the serial gate needs it — a node done with the pool's
 * checksum (`done`) gains nothing from the Lease's events, and with hundreds of nodes their fan-out costs
 * the CPU the others need; the next `start` lists and watches afresh. Chunked rollouts poll instead (rollout/poll.ts).
 */
export function serialLeaseWatch(s: SerialLeaseWatchSetup): {
  start(signal: AbortSignal): Promise<void>;
  /** The serial gate no longer needs the watch (the lock released): it stops. */
  done(): void;
  attach(c: Controller): void;
  /** Whether the watch runs (started and not stopped). */
  running(): boolean;
} {
  const informer = new Informer<KubeObject>({
    kube: s.kube,
    clock: s.clock,
    log: s.log,
    resource: leases,
    namespace: serialLeaseNamespace,
    selectors: { fieldSelector: `metadata.name=${s.secretName}` },
  });
  const checksumOf = (o: KubeObject, key: string) => o.metadata.annotations?.[key];
  const read = async (what: typeof secrets, ns: string, name: string, signal: AbortSignal) =>
    s.cache.get<KubeObject>(what, ns, name, { signal }).then(
      (o) => o,
      () => undefined,
    );
  const outdated = async (signal: AbortSignal) => {
    const [secret, node] = await Promise.all([
      read(secrets, serialLeaseNamespace, s.secretName, signal),
      read(nodes, "", s.nodeName, signal),
    ]);
    return isOutdated(secret && checksumOf(secret, "checksum/data-script"), node && checksumOf(node, checksumAnnotation));
  };
  const serial = serialLeasePredicate(s.hostName);
  const slotsOnly = s.slotsOnly ?? (() => false);
  /** The current run: `fresh` settles once the previous run has ended and the informer forgot its copy. */
  let run: { readonly stop: AbortController; readonly fresh: Promise<void>; readonly ended: Promise<void>; gaveUp: boolean } | undefined;
  /** The last stopped run's end (the informer runs once at a time). */
  let stopped: Promise<void> = Promise.resolve();
  return {
    running: () => run !== undefined,
    attach(c) {
      c.watch(
        informer,
        enqueueSecretWhenOutdated({
          secret: { namespace: serialLeaseNamespace, name: s.secretName },
          outdated,
          log: s.log,
          signal: s.signal,
        }),
        { ...serial, update: (o, n) => !slotsOnly(o, n) && serial.update(o, n) },
      );
    },
    async start(signal) {
      if (run === undefined) {
        const stop = new AbortController();
        const fresh = stopped.then(() => informer.forget());
        s.log.info("Starting the serial reconciliation lease watch", { lease: s.secretName });
        const ended = fresh
          .then(() => informer.run(AbortSignal.any([s.signal, stop.signal])))
          .catch((err: unknown) => s.log.error("Serial reconciliation lease watch ended", { err }));
        run = { stop, fresh, ended, gaveUp: false };
      }
      const current = run;
      await current.fresh;
      // A watch that cannot list (e.g. forbidden) delays only one reconcile.
      if (informer.hasSynced() || current.gaveUp) return;
      // A release between our read of the Lease and the watch's first list would go unseen (and the
      // node would wait out the holder's 600 s): read the Lease only once the watch has listed it.
      try {
        await informer.waitForSync(AbortSignal.any([signal, current.stop.signal, AbortSignal.timeout(syncWaitMs)]));
      } catch (err) {
        if (signal.aborted) throw err;
        current.gaveUp = true;
        s.log.info("Serial reconciliation lease watch not synced yet, going on without it", { lease: s.secretName });
      }
    },
    done() {
      if (run === undefined) return;
      s.log.info("Stopping the serial reconciliation lease watch: the node is done with the pool's checksum", { lease: s.secretName });
      run.stop.abort();
      stopped = run.ended;
      run = undefined;
    },
  };
}
