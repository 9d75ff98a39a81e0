import type { KubeObject, Predicate } from "../../../../kube/index.ts";
import { slotsOf } from "./slots.ts";

/** node → "checksum state" of every slot: what a waiting node's decision depends on (not `renewed`). */
const standings = (o: KubeObject): string =>
  JSON.stringify(
    [...slotsOf(o.metadata.annotations)]
      .map(([node, s]) => [node, s.checksum, s.state])
      .sort(([a], [b]) => ((a ?? "") < (b ?? "") ? -1 : 1)),
  );

/**
 * A Lease update that added, removed or changed the state of a slot: waiting nodes look again
 * (issue 16). Mere renewals are dropped, so the active nodes' heartbeat does not wake the whole pool;
 * staleness is noticed by the waiting nodes' own periodic look.
 */
export const slotsChangedPredicate: Predicate<KubeObject> = {
  create: () => false,
  update: (oldLease, newLease) => standings(oldLease) !== standings(newLease),
  delete: () => false,
  generic: () => false,
};
