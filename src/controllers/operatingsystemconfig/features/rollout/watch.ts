import type { KubeObject } from "../../../../kube/index.ts";
import { formatSlot, parseSlot, type Slot, slotAnnotationPrefix } from "./slots.ts";

/**
 * The slot entries an update changed, parsed: only annotations under the slot prefix whose text differs are
 * parsed. An entry that is not a slot (parseSlot: undefined) counts as absent, as slotsOf has it.
 */
function changedSlots(old: KubeObject, now: KubeObject): ReadonlyArray<readonly [Slot | undefined, Slot | undefined]> {
  const before = old.metadata.annotations ?? {};
  const after = now.metadata.annotations ?? {};
  const out: Array<readonly [Slot | undefined, Slot | undefined]> = [];
  const compare = (key: string, a: string | undefined, b: string | undefined) => {
    if (a !== b && key.startsWith(slotAnnotationPrefix))
      out.push([a === undefined ? undefined : parseSlot(a), b === undefined ? undefined : parseSlot(b)]);
  };
  for (const key in after) compare(key, before[key], after[key]);
  for (const key in before) if (!(key in after)) compare(key, before[key], undefined);
  return out;
}
const sameSlot = (a: Slot | undefined, b: Slot | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && formatSlot(a) === formatSlot(b));
const holder = (o: KubeObject): string => (o["spec"] as { holderIdentity?: string } | undefined)?.holderIdentity ?? "";

/**
 * An update of the pool's Lease that changed slots only (no serial holder before or after): not a release of the
 * serial lock, so the serial Lease watch (9.2) does not wake the node for it. Waiting rollout nodes poll (poll.ts).
 */
export const slotsOnlyChanged = (old: KubeObject, now: KubeObject): boolean =>
  holder(old) === "" && holder(now) === "" && changedSlots(old, now).some(([a, b]) => !sameSlot(a, b));
