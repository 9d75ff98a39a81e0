import type { Clock } from "../../../../clock/index.ts";
import { controllerRef, isConflict, ifFound, leases, type Kube, type KubeObject } from "../../../../kube/index.ts";
import type { Logger } from "../../../../log/index.ts";
import type { GateHold } from "../../gates/gate.ts";
import { acquiredSpec, leaseSpecOf, releasedSpec, type SerialLeaseSpec, serialLockHold } from "./lease-spec.ts";

export const serialLeaseNamespace = "kube-system";

export interface SerialLockDeps {
  readonly kube: Kube;
  readonly clock: Clock;
  readonly log: Logger;
  /** The lock identity: the host name (9.2). */
  readonly identity: string;
}

/** Either this node holds the lock now, or it must wait for the one that does. */
export type SerialLockOutcome = { readonly held: true } | { readonly held: false; readonly hold: GateHold };

/** The serial Lease as read (undefined when it does not exist yet). */
export const getLease = (kube: Kube, name: string, signal: AbortSignal): Promise<KubeObject | undefined> =>
  ifFound(kube.get<KubeObject>(leases, serialLeaseNamespace, name, { signal }));

const lockFields = ["holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime"];

/** `lease` with the four lock fields replaced by `spec`; other spec fields are kept as read. */
function withSpec(lease: KubeObject, spec: SerialLeaseSpec): KubeObject {
  const raw = lease["spec"];
  const kept = Object.fromEntries(
    Object.entries(raw !== null && typeof raw === "object" ? raw : {}).filter(([k]) => !lockFields.includes(k)),
  );
  return { ...lease, spec: { ...kept, ...spec } };
}

/** §4 step 6 / 9.2: wait while another live holder has the Lease, else take it; a conflicting write is an error (retried). */
export async function acquireSerialLock(deps: SerialLockDeps, secret: KubeObject, signal: AbortSignal): Promise<SerialLockOutcome> {
  const { kube, clock, identity } = deps;
  const name = secret.metadata.name ?? "";
  const lease = await getLease(kube, name, signal);
  const spec = leaseSpecOf(lease);
  const now = clock.now();
  const hold = serialLockHold(spec, identity, name, now);
  if (hold !== undefined) return { held: false, hold };
  if (spec.holderIdentity !== identity && (spec.holderIdentity ?? "") !== "") {
    deps.log.info("Taking over the expired serial reconciliation lock", { lease: name, previousHolder: spec.holderIdentity });
  }
  const next = acquiredSpec(spec, identity, now);
  if (lease === undefined) {
    await kube.create<KubeObject>(
      leases,
      serialLeaseNamespace,
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace: serialLeaseNamespace, ownerReferences: [controllerRef("Secret", secret)] },
        spec: next,
      },
      { signal },
    );
  } else {
    await kube.update<KubeObject>(leases, serialLeaseNamespace, withSpec(lease, next), { signal });
  }
  deps.log.info("Holding the serial reconciliation lock", { lease: name });
  return { held: true };
}

/** How often a release re-reads the Lease after someone else wrote it in between (slot annotations). */
const releaseAttempts = 5;

/**
 * §4 step 31: clear the four spec fields if we hold the Lease (a no-op otherwise). The Lease is read
 * fresh: other agents may have changed its annotations since we took it, and a conflict re-reads.
 */
export async function releaseSerialLock(deps: SerialLockDeps, name: string, signal: AbortSignal): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const lease = await getLease(deps.kube, name, signal);
    const next = releasedSpec(leaseSpecOf(lease), deps.identity);
    if (lease === undefined || next === undefined) return false;
    try {
      await deps.kube.update<KubeObject>(leases, serialLeaseNamespace, withSpec(lease, next), { signal });
      deps.log.info("Released the serial reconciliation lock", { lease: name });
      return true;
    } catch (err) {
      if (!isConflict(err) || attempt >= releaseAttempts) throw err;
    }
  }
}
