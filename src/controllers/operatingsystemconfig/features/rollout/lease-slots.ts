import type { Clock } from "../../../../clock/index.ts";
import { controllerRef, isAlreadyExists, isConflict, ifFound, leases, type Kube, type KubeObject } from "../../../../kube/index.ts";
import { formatSlot, type Slot, slotKey, slotsOf } from "./slots.ts";

const namespace = "kube-system";
/** Conflicting writers re-read this many times before the reconcile fails (and retries with backoff). */
const attempts = 8;
/** A loser of its n-th 409 pauses at random for up to n × this before it re-reads (losers of one race spread out). */
const conflictPauseMs = 100;

/** The Lease kept changing under every attempt: others wrote it meanwhile (nothing of this write landed). */
export class SlotConflictError extends Error {
  override readonly name = "SlotConflictError";
}

/** The coordination Lease as read (undefined when it does not exist yet). */
export const readLease = (kube: Kube, name: string, signal: AbortSignal): Promise<KubeObject | undefined> =>
  ifFound(kube.get<KubeObject>(leases, namespace, name, { signal }));

/**
 * What a change wants done to the slots of the Lease it was shown: node → new slot, or null to remove the
 * node's entry; undefined = nothing to write. It may ask the API server first (whether slot owners' Nodes
 * still exist); it runs again on every re-read.
 */
type SlotChange = (
  slots: ReadonlyMap<string, Slot>,
) => Promise<ReadonlyMap<string, Slot | null> | undefined> | ReadonlyMap<string, Slot | null> | undefined;
/** `clock` times the pause before a re-read. */
interface SlotWriteOptions {
  readonly clock: Clock;
}

/**
 * Read-modify-write of the entries `change` names, guarded by the resourceVersion: a 409 re-reads (after
 * a short random pause) and asks `change` again, so two nodes never
 * both take the last slot. Creates the Lease (owned by the Secret) when missing.
 */
export async function updateSlots(
  kube: Kube,
  secret: KubeObject,
  change: SlotChange,
  signal: AbortSignal,
  opts?: SlotWriteOptions,
): Promise<KubeObject | undefined> {
  const name = secret.metadata.name ?? "";
  for (let attempt = 1; ; attempt++) {
    const lease = await readLease(kube, name, signal);
    const edit = await change(slotsOf(lease?.metadata.annotations));
    if (edit === undefined) return lease;
    const annotations = { ...(lease?.metadata.annotations ?? {}) };
    for (const [node, slot] of edit) {
      const { key, hashed } = slotKey(node);
      if (slot === null) delete annotations[key];
      else annotations[key] = formatSlot(hashed ? { ...slot, node } : slot);
    }
    try {
      if (lease === undefined) {
        const metadata = { name, namespace, annotations, ownerReferences: [controllerRef("Secret", secret)] };
        return await kube.create<KubeObject>(
          leases,
          namespace,
          { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata, spec: {} },
          { signal },
        );
      }
      return await kube.update<KubeObject>(leases, namespace, { ...lease, metadata: { ...lease.metadata, annotations } }, { signal });
    } catch (err) {
      if (!(isConflict(err) || isAlreadyExists(err))) throw err;
      if (attempt >= attempts)
        throw new SlotConflictError(`lease ${namespace}/${name} kept changing under ${attempts} attempts`, { cause: err });
      if (opts !== undefined) await opts.clock.sleep(Math.random() * conflictPauseMs * attempt, signal);
    }
  }
}
