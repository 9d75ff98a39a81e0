import type { KubeObject, Predicate } from "../../../../kube/index.ts";
import { slotsOf } from "./slots.ts";

/** node → "checksum state" of every slot: what a waiting node's decision depends on (not `renewed`). */
const standings = (o: KubeObject): string =>
  JSON.stringify(
    [...slotsOf(o.metadata.annotations)]
      .map(([node, s]) => [node, s.checksum, s.state])
      .sort(([a], [b]) => ((a ?? "") < (b ?? "") ? -1 : 1)),
  );

/** A slot added, removed or changed state: waiting nodes look again (issue 16); renewals do not wake the pool. */
export const slotsChangedPredicate: Predicate<KubeObject> = {
  create: () => false,
  update: (oldLease, newLease) => standings(oldLease) !== standings(newLease),
  delete: () => false,
  generic: () => false,
};
