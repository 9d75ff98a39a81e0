import type { Predicate } from "../../../kube/predicate.ts";
import type { KubeObject } from "../../../kube/types.ts";
import { slotAnnotationPrefix } from "./slots.ts";

const slotEntries = (o: KubeObject): string =>
  JSON.stringify(
    Object.entries(o.metadata.annotations ?? {})
      .filter(([k]) => k.startsWith(slotAnnotationPrefix))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

/** A Lease update that changed any slot annotation: a waiting node looks again (issue 16). */
export const slotsChangedPredicate: Predicate<KubeObject> = {
  create: () => false,
  update: (oldLease, newLease) => slotEntries(oldLease) !== slotEntries(newLease),
  delete: () => false,
  generic: () => false,
};
