import type { EventHandler, KubeObject, ObjectKey, Predicate } from "../../../../kube/index.ts";
import type { Logger } from "../../../../log/index.ts";
import { leaseSpecOf } from "./lease-spec.ts";

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
