import type { Clock } from "../../../../clock/index.ts";
import type { Enqueuer, EventHandler, KubeObject, ObjectKey } from "../../../../kube/index.ts";
import { formatSlot, liveSlotCount, parseSlot, rolloutParallelism, type Slot, slotAnnotationPrefix, slotsOf } from "./slots.ts";
import { type RolloutTimings, slotJitterMs } from "./timings.ts";

/**
 * The slot entries an update changed, parsed: only annotations under the slot prefix whose text differs are
 * parsed (issue 25: a waiting agent sees every slot change of the pool, and a change touches one entry of up to
 * N + failed ones; parsing all of them for every event was most of the handlers' CPU). An entry that is not a
 * slot (parseSlot: undefined) counts as absent, as slotsOf has it.
 */
type SlotChanges = ReadonlyArray<readonly [Slot | undefined, Slot | undefined]>;
/** The last update's changes: the serial filter and the waker see the same (old, now) pair of one event. */
let lastChanges: { readonly old: KubeObject; readonly now: KubeObject; readonly changes: SlotChanges } | undefined;
function changedSlots(old: KubeObject, now: KubeObject): SlotChanges {
  if (lastChanges?.old === old && lastChanges.now === now) return lastChanges.changes;
  const before = old.metadata.annotations ?? {};
  const after = now.metadata.annotations ?? {};
  const out: Array<readonly [Slot | undefined, Slot | undefined]> = [];
  const compare = (key: string, a: string | undefined, b: string | undefined) => {
    if (a !== b && key.startsWith(slotAnnotationPrefix))
      out.push([a === undefined ? undefined : parseSlot(a), b === undefined ? undefined : parseSlot(b)]);
  };
  for (const key in after) compare(key, before[key], after[key]);
  for (const key in before) if (!(key in after)) compare(key, before[key], undefined);
  lastChanges = { old, now, changes: out };
  return out;
}
const sameSlot = (a: Slot | undefined, b: Slot | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && formatSlot(a) === formatSlot(b));
/** Whether a node's standing (checksum and state: what decides whether a slot is free, not `renewed`) changed. */
const sameStanding = (a: Slot | undefined, b: Slot | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.checksum === b.checksum && a.state === b.state && a.node === b.node);
const holder = (o: KubeObject): string => (o["spec"] as { holderIdentity?: string } | undefined)?.holderIdentity ?? "";

/** An update of the pool's Lease that changed slots only (no serial holder before or after): the waker's business, not 9.2's. */
export const slotsOnlyChanged = (old: KubeObject, now: KubeObject): boolean =>
  holder(old) === "" && holder(now) === "" && changedSlots(old, now).some(([a, b]) => !sameSlot(a, b));

/**
 * `secret`: what a wake enqueues; `lease`: the watch's copy; `node`: the own Node (cached); `outdated`: 9.2's check;
 * `wanted`: the Secret's checksum (cached; undefined when unreadable); `signal`: process lifetime.
 */
interface SlotWakerDeps {
  readonly clock: Clock;
  readonly timings: RolloutTimings;
  readonly secret: ObjectKey;
  readonly signal: AbortSignal;
  lease(): KubeObject | undefined;
  node(signal: AbortSignal): Promise<KubeObject | undefined>;
  outdated(signal: AbortSignal): Promise<boolean>;
  wanted?(signal: AbortSignal): Promise<string | undefined>;
}

/**
 * Whether this node has its own slot for the wanted version: applying or verifying, its own looks drive it
 * (the verify poll), failed it stays; a freed slot gives it nothing, and a wake would only be a reconcile more.
 */
async function holdsOwnSlot(d: SlotWakerDeps, me: string | undefined): Promise<boolean> {
  const own = me === undefined ? undefined : slotsOf(d.lease()?.metadata.annotations).get(me);
  return own !== undefined && d.wanted !== undefined && own.checksum === (await d.wanted(d.signal));
}

/**
 * Wakes this node when a slot change may have freed a slot (issue 25): after a random pause of up to
 * `slotJitterMs`, and only if the watch's copy of the Lease then shows fewer than N live slots, the node is
 * outdated and holds no slot of its own for the wanted version — so one freed slot has a few of the waiting
 * nodes try it, not all of them at once, and not the nodes applying or verifying.
 */
export function slotWaker(d: SlotWakerDeps): EventHandler<KubeObject> {
  let pending = false;
  const wake = async (q: Enqueuer) => {
    const node = await d.node(d.signal);
    const n = rolloutParallelism(node?.metadata.annotations);
    if (n !== undefined) await d.clock.sleep(Math.random() * slotJitterMs(d.timings, n), d.signal);
    pending = false; // a change from here on arms a new pause
    if (n === undefined || liveSlotCount(d.lease()?.metadata.annotations, d.clock.now(), d.timings) >= n) return;
    if (await holdsOwnSlot(d, node?.metadata.name)) return;
    if (await d.outdated(d.signal)) q.add(d.secret);
  };
  const ignore = () => {};
  const update = (old: KubeObject, now: KubeObject, q: Enqueuer) => {
    if (pending || changedSlots(old, now).every(([a, b]) => sameStanding(a, b))) return;
    pending = true;
    wake(q).catch(() => {
      pending = false;
      if (!d.signal.aborted) q.add(d.secret); // the checks broke: look rather than miss a free slot
    });
  };
  return { create: ignore, delete: ignore, generic: ignore, update };
}
