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

/** `secret`: what a wake enqueues; `lease`: the watch's copy; `node`: the own Node (cached); `outdated`: 9.2's check; `signal`: process lifetime. */
interface SlotWakerDeps {
  readonly clock: Clock;
  readonly timings: RolloutTimings;
  readonly secret: ObjectKey;
  readonly signal: AbortSignal;
  lease(): KubeObject | undefined;
  node(signal: AbortSignal): Promise<KubeObject | undefined>;
  outdated(signal: AbortSignal): Promise<boolean>;
}

/**
 * Wakes this node when a slot change may have freed a slot (issue 25): after a random pause of up to
 * `slotJitterMs`, and only if the watch's copy of the Lease then shows fewer than N live slots and the node is
 * outdated — so one freed slot has a few of the waiting nodes try it, not all of them at once.
 */
export function slotWaker(d: SlotWakerDeps): EventHandler<KubeObject> {
  let pending = false;
  const wake = async (q: Enqueuer) => {
    const n = rolloutParallelism((await d.node(d.signal))?.metadata.annotations);
    if (n !== undefined) await d.clock.sleep(Math.random() * slotJitterMs(d.timings, n), d.signal);
    pending = false; // a change from here on arms a new pause
    if (n === undefined || liveSlotCount(d.lease()?.metadata.annotations, d.clock.now(), d.timings) >= n) return;
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
