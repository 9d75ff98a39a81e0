import type { Clock } from "../../../../clock/index.ts";
import type { Enqueuer, EventHandler, KubeObject, ObjectKey } from "../../../../kube/index.ts";
import { liveSlotCount, rolloutParallelism, slotsOf } from "./slots.ts";
import { type RolloutTimings, slotJitterMs } from "./timings.ts";

/**
 * The slots of a Lease the watch delivered, as text: all of them, and the standings (node → checksum and
 * state: what decides whether one is free, not `renewed`). Kept per object (the watch's objects are never
 * changed): an update compares the previous copy, whose text was made when it arrived, with the new one,
 * so each Lease version's slots are parsed once, not four times (issue 25: 200 agents see every slot change).
 */
const slotTexts = new WeakMap<KubeObject, { readonly all: string; readonly standings: string }>();
function textsOf(o: KubeObject): { readonly all: string; readonly standings: string } {
  const known = slotTexts.get(o);
  if (known !== undefined) return known;
  const slots = [...slotsOf(o.metadata.annotations)];
  const texts = { all: JSON.stringify(slots), standings: JSON.stringify(slots.map(([node, s]) => [node, s.checksum, s.state]).sort()) };
  slotTexts.set(o, texts);
  return texts;
}
const slotsText = (o: KubeObject): string => textsOf(o).all;
const standings = (o: KubeObject): string => textsOf(o).standings;
const holder = (o: KubeObject): string => (o["spec"] as { holderIdentity?: string } | undefined)?.holderIdentity ?? "";

/** An update of the pool's Lease that changed slots only (no serial holder before or after): the waker's business, not 9.2's. */
export const slotsOnlyChanged = (old: KubeObject, now: KubeObject): boolean =>
  holder(old) === "" && holder(now) === "" && slotsText(old) !== slotsText(now);

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
    if (pending || standings(old) === standings(now)) return;
    pending = true;
    wake(q).catch(() => {
      pending = false;
      if (!d.signal.aborted) q.add(d.secret); // the checks broke: look rather than miss a free slot
    });
  };
  return { create: ignore, delete: ignore, generic: ignore, update };
}
