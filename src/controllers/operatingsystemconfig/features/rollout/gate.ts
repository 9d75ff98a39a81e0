import type { Clock } from "../../../../clock/index.ts";
import type { Kube, KubeObject } from "../../../../kube/index.ts";
import { errorText, type Logger, step } from "../../../../log/index.ts";
import type { GateHold, Reservation, Reserved } from "../../gates/gate.ts";
import { UnitCommandsError } from "../../apply/units.ts";
import { isSerial } from "../../constants.ts";
import { verifyHealth } from "./health.ts";
import { SlotConflictError, updateSlots } from "./lease-slots.ts";
import { PoolListError, PoolNodes } from "./pool-nodes.ts";
import type { SlotPoll } from "./poll.ts";
import { healthHold, slotDecisionHold } from "./holds.ts";
import { decide, mayBeGone, rolloutParallelism, type Slot, type SlotDecision, slotTime } from "./slots.ts";
import { defaultRolloutTimings, type RolloutTimings, slotJitterMs } from "./timings.ts";

/** Observes this node's slot for the metrics (0 none, 1 applying, 2 verifying, 3 failed). */
export interface RolloutMetrics {
  slotState(state: 0 | 1 | 2 | 3): void;
  waitSeconds(seconds: number): void;
}

export interface RolloutDeps {
  readonly timings: RolloutTimings;
  readonly metrics?: RolloutMetrics;
  /** Cached pool membership; listed on every look when absent. */
  readonly poolNodes?: PoolNodes;
  /** Issue 25: a waiting node polls the Lease (no watch); absent (tests), only the hold's requeue looks again. */
  readonly slotPoll?: SlotPoll;
}

/** What the rollout gate uses of the controller's dependencies. */
export interface RolloutGateDeps {
  readonly kube: Kube;
  readonly clock: Clock;
  readonly log: Logger;
  readonly rollout?: RolloutDeps | undefined;
}

/** The slot this node holds for `checksum`: apply (state applying) or only verify (state verifying). */
interface SlotHeld {
  readonly state: "applying" | "verifying";
  readonly secret: KubeObject;
  readonly checksum: string;
  /** Whether the OSC has units for systemd-unit-check to judge (health.ts `unitsChecked`). */
  readonly unitsChecked: boolean;
}

export const timingsOf = (deps: RolloutGateDeps): RolloutTimings => deps.rollout?.timings ?? defaultRolloutTimings;
const meOf = (node: KubeObject): string => node.metadata.name ?? "";
const leaseRef = (secret: KubeObject) => `Lease kube-system/${secret.metadata.name ?? ""}`;

/** Owners of failed or stale slots whose Node does not exist (the only slots a writer removes); renewed slots ask nothing. */
function seenGone(deps: RolloutGateDeps, secret: KubeObject, slots: ReadonlyMap<string, Slot>, me: string, signal: AbortSignal) {
  const cache = deps.rollout?.poolNodes ?? new PoolNodes(deps.clock, 0);
  const now = deps.clock.now();
  const asked = [...slots].filter(([name, s]) => name !== me && mayBeGone(s, now, timingsOf(deps))).map(([name]) => name);
  return cache.gone(deps.kube, secret.metadata.name ?? "", asked, signal);
}

/** One look at the slots, the writer's and `diff`'s alike: the slots of Nodes seen gone are dropped, then this node decides. */
export async function lookAtSlots(
  deps: RolloutGateDeps,
  secret: KubeObject,
  slots: ReadonlyMap<string, Slot>,
  me: string,
  checksum: string,
  n: number,
  signal: AbortSignal,
) {
  const gone = await seenGone(deps, secret, slots, me, signal);
  const now = deps.clock.now();
  // Only slots of Nodes seen gone are dropped (this node's own always counts: `gone` never names it).
  const current = new Map([...slots].filter(([name]) => !gone.has(name)));
  return { now, current, dropped: [...gone], decision: decide(current, me, checksum, n, now, timingsOf(deps)) };
}

/** The pool could not be listed: wait (and say why) rather than guess which slots are stale. */
const poolListHold = (err: PoolListError, t: RolloutTimings): GateHold => ({
  reason: "WaitingForRolloutSlot",
  message: `Not taking a rollout slot: ${errorText(err)}; slots of deleted Nodes cannot be told from others until the pool can be listed`,
  requeueAfterMs: t.renewEveryMs,
});

/**
 * Issue 25: the pool's Lease changed under every attempt of this look (at the start of a big rollout many nodes
 * write at once). A wait, not a failed reconcile: no error event, and the next look comes after a random pause.
 */
const busyLeaseHold = (err: SlotConflictError, t: RolloutTimings, n: number): GateHold => ({
  reason: "WaitingForRolloutSlot",
  message: `Not in a rollout slot yet: ${err.message} (other nodes wrote it meanwhile); looking again after a random pause`,
  requeueAfterMs: Math.random() * slotJitterMs(t, n),
});

/** Since when this agent waits for a slot, per agent (its RolloutDeps; a restart starts again). */
const waitingSince = new WeakMap<object, { readonly checksum: string; readonly since: number }>();

/**
 * Issue 25: the first-look pause served before the reconcile, as the Secret update's enqueue delay (watch.ts): the
 * pool's nodes then reconcile a new version spread over the pause rather than all at once (200 at once held the
 * first takes up by 3-4 s on two cores), and the look after it takes at once. The wait counts from here.
 */
export function firstLookPauseMs(rollout: RolloutDeps, checksum: string, n: number, now: number): number {
  if (waitingSince.get(rollout)?.checksum !== checksum) waitingSince.set(rollout, { checksum, since: now });
  return Math.random() * slotJitterMs(rollout.timings, n);
}

/**
 * This node has nothing to roll out (up to date — e.g. the wanted version went back to the applied one while it
 * waited —, no Secret, or no slot needed): it stops polling the pool's Lease and waits for nothing.
 */
export function leaveRollout(rollout: RolloutDeps | undefined): void {
  if (rollout === undefined) return;
  rollout.slotPoll?.stop();
  waitingSince.delete(rollout);
  rollout.metrics?.waitSeconds(0);
}

const renewDue = (s: Slot | undefined, now: number, t: RolloutTimings) => s !== undefined && now - Date.parse(s.renewed) >= t.renewEveryMs;

/** Issue 16: take one of N slots on the pool's Lease before changing anything (plugin.ts says when). */
export async function enterRollout(
  deps: RolloutGateDeps,
  secret: KubeObject,
  node: KubeObject | undefined,
  nodeKnownAtStart: boolean,
  checksum: string,
  signal: AbortSignal,
  unitsChecked = true,
): Promise<Reserved> {
  const n = node === undefined ? undefined : rolloutParallelism(node.metadata.annotations);
  if (node === undefined || n === undefined || !nodeKnownAtStart || isSerial(secret)) {
    leaveRollout(deps.rollout); // e.g. the annotation went while this node waited
    deps.rollout?.metrics?.slotState(0);
    return { kind: "reserved" };
  }
  const t = timingsOf(deps);
  const me = meOf(node);
  const poll = deps.rollout?.slotPoll;
  let decision: SlotDecision = { kind: "take" };
  // A new OSC reaches the whole pool at once: the first look at a checksum pauses at random before taking,
  // unless the Secret update's enqueue paused already (firstLookPauseMs).
  const agent = deps.rollout ?? deps;
  const firstLook = waitingSince.get(agent)?.checksum !== checksum;
  try {
    await updateSlots(
      deps.kube,
      secret,
      async (slots) => {
        const look = await lookAtSlots(deps, secret, slots, me, checksum, n, signal);
        const { now } = look;
        const own = look.current.get(me);
        const set = new Map<string, Slot | null>(look.dropped.map((name) => [name, null]));
        decision = look.decision.kind === "take" && firstLook ? { kind: "wait", behind: [] } : look.decision;
        if (decision.kind === "take") set.set(me, { checksum, since: slotTime(now), renewed: slotTime(now), state: "applying" });
        else if (decision.kind === "resume" && own !== undefined && renewDue(own, now, t)) set.set(me, { ...own, renewed: slotTime(now) });
        return set.size > 0 ? set : undefined;
      },
      signal,
      { clock: deps.clock },
    );
  } catch (err) {
    // Busy, not broken: others' writes won every race of this look; nothing of ours landed, so look again soon.
    if (err instanceof SlotConflictError) {
      // Still waiting: the gauge keeps counting (a node that held its slot has no wait entry and stays at 0).
      const waiting = waitingSince.get(agent);
      if (waiting?.checksum === checksum) deps.rollout?.metrics?.waitSeconds((deps.clock.now() - waiting.since) / 1000);
      return { kind: "hold", hold: busyLeaseHold(err, t, n) };
    }
    if (!(err instanceof PoolListError)) throw err;
    deps.rollout?.metrics?.slotState(0);
    return { kind: "hold", hold: poolListHold(err, t) };
  }
  // Assigned inside the change callback, which TypeScript cannot see run.
  const d = decision as SlotDecision;
  // A waiting node writes nothing (issue 25): how long it has waited for this checksum is known here only.
  const now = deps.clock.now();
  const going = d.kind === "take" || d.kind === "resume";
  const prev = waitingSince.get(agent);
  const since = prev?.checksum === checksum ? prev.since : now;
  if (going) waitingSince.delete(agent);
  else waitingSince.set(agent, { checksum, since });
  // A node that waits behind others (or a halt) polls; one that saw a free slot retries after its pause anyway.
  const pool = secret.metadata.name ?? "";
  if (d.kind === "wait" && d.behind.length > 0) poll?.wait({ pool, me, checksum, n });
  else if (d.kind === "halted") poll?.wait({ pool, me, checksum, n, everyMs: t.renewEveryMs });
  else poll?.stop();
  deps.rollout?.metrics?.waitSeconds(going ? 0 : (now - since) / 1000);
  const decided = slotDecisionHold(d, n, leaseRef(secret), t);
  const held =
    d.kind === "wait" && d.behind.length === 0 ? decided && { ...decided, requeueAfterMs: Math.random() * slotJitterMs(t, n) } : decided;
  if (held === undefined) {
    const state = d.kind === "resume" ? d.state : "applying";
    deps.rollout?.metrics?.slotState(state === "applying" ? 1 : 2);
    deps.log.info(d.kind === "take" ? "Took a rollout slot" : "Resuming my rollout slot", { state, checksum });
    return { kind: "reserved", reservation: slotReservation(deps, { state, secret, checksum, unitsChecked }) };
  }
  deps.rollout?.metrics?.slotState(d.kind === "own-failed" ? 3 : 0);
  return { kind: "hold", hold: held };
}

/** The slot's Reservation: skip the apply when only verifying, verify health after it, fail on a unit failure. */
const slotReservation = (deps: RolloutGateDeps, slot: SlotHeld): Reservation => ({
  hostAlreadyApplied: slot.state === "verifying",
  verify: (node, signal) => step("failed verifying the rollout", () => verifyRollout(deps, slot, node, signal)),
  abandon: (err, node, signal) =>
    failRolloutOnUnitError(deps, slot, node, err, signal).catch((e: unknown) =>
      deps.log.error("Failed marking the rollout slot failed", { err: e }),
    ),
});

/** Sets (or removes, with null; undefined: leaves) this node's own slot, if it is still ours for this checksum. */
async function setOwn(
  deps: RolloutGateDeps,
  entry: { secret: KubeObject; checksum: string },
  me: string,
  next: (s: Slot) => Slot | null | undefined,
  signal: AbortSignal,
): Promise<void> {
  await updateSlots(
    deps.kube,
    entry.secret,
    (slots) => {
      const s = slots.get(me);
      const n = s === undefined || s.checksum !== entry.checksum ? undefined : next(s);
      return n === undefined ? undefined : new Map([[me, n]]);
    },
    signal,
    { clock: deps.clock },
  );
}

/** The slot becomes `failed` and stays (the rollout halts at N failed). */
async function markFailed(deps: RolloutGateDeps, entry: SlotHeld, me: string, signal: AbortSignal): Promise<void> {
  const at = slotTime(deps.clock.now());
  await setOwn(deps, entry, me, (s) => ({ ...s, state: "failed", since: at, renewed: at }), signal);
  deps.rollout?.metrics?.slotState(3);
}

/** A restarted unit failed during the apply: the slot becomes `failed` and stays (the rollout halts at N). */
async function failRolloutOnUnitError(
  deps: RolloutGateDeps,
  entry: SlotHeld,
  node: KubeObject | undefined,
  err: unknown,
  signal: AbortSignal,
): Promise<void> {
  if (node === undefined) return;
  let unitErr = false;
  for (let e: unknown = err, i = 0; e instanceof Error && i < 16; e = e.cause, i++) if (e instanceof UnitCommandsError) unitErr = true;
  if (!unitErr) return;
  await markFailed(deps, entry, meOf(node), signal);
  deps.log.info("Marked my rollout slot failed: a restarted unit failed", { checksum: entry.checksum });
}

/** After the apply: slot `verifying`, released once healthy long enough (before the checksum: a crash only repeats a check). */
async function verifyRollout(deps: RolloutGateDeps, entry: SlotHeld, node: KubeObject, signal: AbortSignal): Promise<GateHold | undefined> {
  const t = timingsOf(deps);
  const me = meOf(node);
  const now = deps.clock.now();
  let since = now;
  const next =
    entry.state === "applying"
      ? (s: Slot): Slot => ({ ...s, state: "verifying", since: slotTime(now), renewed: slotTime(now) })
      : (s: Slot) => {
          since = Date.parse(s.since);
          return renewDue(s, now, t) ? { ...s, renewed: slotTime(now) } : undefined;
        };
  await setOwn(deps, entry, me, next, signal);
  deps.rollout?.metrics?.slotState(2);
  const verdict = verifyHealth(node, since, since, now, t, entry.unitsChecked);
  const held = healthHold(verdict, t);
  if (held === undefined) {
    await setOwn(deps, entry, me, () => null, signal);
    deps.rollout?.metrics?.slotState(0);
    deps.log.info("Node healthy after the change, released my rollout slot", { checksum: entry.checksum });
    return undefined;
  }
  if (verdict.kind === "failed") await markFailed(deps, entry, me, signal);
  return held;
}
