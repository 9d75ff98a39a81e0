import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../../../test/doubles/fake-clock.ts";
import type { KubeObject, ObjectKey } from "../../../../kube/index.ts";
import { formatSlot, type Slot } from "./slots.ts";
import { defaultRolloutTimings as t } from "./timings.ts";
import { slotsOnlyChanged, slotWaker } from "./watch.ts";

const start = Date.parse("2026-01-01T12:00:00Z");
const lease = (slots: Record<string, Slot["state"]>, holder?: string, renewed = "2026-01-01T12:00:00.000Z"): KubeObject => ({
  metadata: {
    name: "pool",
    namespace: "kube-system",
    annotations: Object.fromEntries(
      Object.entries(slots).map(([n, state]) => [
        `slot.node-agent.gardener.cloud/${n}`,
        formatSlot({ checksum: "c", since: "2026-01-01T12:00:00.000Z", renewed, state }),
      ]),
    ),
  },
  spec: holder === undefined ? {} : { holderIdentity: holder },
});

const prefix = "slot.node-agent.gardener.cloud/";
const withAnnotation = (o: KubeObject, key: string, value: string): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [key]: value } },
});
/** The same slot of `node` written with its keys in another order and spaces: another text, the same slot. */
const reformatted = (o: KubeObject, node: string): KubeObject => {
  const slot = JSON.parse(o.metadata.annotations?.[`${prefix}${node}`] ?? "{}") as Record<string, string>;
  const text = JSON.stringify(Object.fromEntries(Object.entries(slot).reverse()), null, 1);
  return withAnnotation(o, `${prefix}${node}`, text);
};

describe("slotsOnlyChanged", () => {
  test.each([
    ["a slot was added", lease({}), lease({ a: "applying" }), true],
    ["a slot was renewed", lease({ a: "applying" }), lease({ a: "applying" }, undefined, "2026-01-01T12:00:30.000Z"), true],
    ["nothing of the slots changed", lease({ a: "applying" }), lease({ a: "applying" }), false],
    ["the serial lock was released", lease({}, "host-a"), lease({}), false],
    ["a slot changed while the serial lock is held", lease({}, "host-a"), lease({ a: "applying" }, "host-a"), false],
    ["an annotation outside the slots changed", lease({ a: "applying" }), withAnnotation(lease({ a: "applying" }), "other", "x"), false],
    ["a slot's text changed but not the slot", lease({ a: "applying" }), reformatted(lease({ a: "applying" }), "a"), false],
    [
      "an entry that is no slot changed",
      withAnnotation(lease({}), `${prefix}x`, "{"),
      withAnnotation(lease({}), `${prefix}x`, "[]"),
      false,
    ],
    ["an entry that is no slot became one", withAnnotation(lease({}), `${prefix}a`, "{"), lease({ a: "applying" }), true],
    ["a slot was removed", lease({ a: "applying", b: "verifying" }), lease({ b: "verifying" }), true],
  ])("%s: %p", (_name, before, after, want) => {
    expect(slotsOnlyChanged(before, after)).toBe(want);
  });
});

/** A waker with N = 2 on the own Node, over the Lease copy `current`; `woken` collects the enqueued keys. */
function waker(opts: { outdated?: boolean; n?: string; wanted?: string } = {}) {
  const clock = new FakeClock(start);
  const woken: ObjectKey[] = [];
  const ctl = new AbortController();
  let current = lease({});
  const h = slotWaker({
    clock,
    timings: t,
    secret: { namespace: "kube-system", name: "pool" },
    signal: ctl.signal,
    lease: () => current,
    node: async () => ({ metadata: { name: "me", annotations: { "node-agent.gardener.cloud/rollout-parallelism": opts.n ?? "2" } } }),
    outdated: async () => opts.outdated ?? true,
    wanted: async () => opts.wanted ?? "c",
  });
  const q = { add: (k: ObjectKey) => woken.push(k) };
  const change = (before: KubeObject, after: KubeObject) => {
    current = after;
    h.update(before, after, q);
  };
  return { clock, woken, change, set: (l: KubeObject) => (current = l), stop: () => ctl.abort() };
}

describe("slotWaker (issue 25)", () => {
  test("wakes once, within the jitter, when a slot was freed and one is still free then", async () => {
    const w = waker();
    w.change(lease({ a: "verifying", b: "applying" }), lease({ b: "applying" }));
    // Further changes while the pause runs arm nothing more.
    w.change(lease({ b: "applying" }), lease({ b: "verifying" }));
    await w.clock.settle();
    expect(w.clock.pending()).toBe(1);
    expect(w.woken).toEqual([]);
    w.clock.step(2_000);
    await w.clock.settle();
    expect(w.woken).toEqual([{ namespace: "kube-system", name: "pool" }]);
    w.stop();
  });

  test("stays asleep when another node took the free slot during the pause", async () => {
    const w = waker();
    w.change(lease({ a: "verifying", b: "applying" }), lease({ b: "applying" }));
    w.set(lease({ b: "applying", c: "applying" }));
    w.clock.step(2_000);
    await w.clock.settle();
    expect(w.woken).toEqual([]);
    w.stop();
  });

  test.each([
    // The last column: whether the event arms a pause (issue 25: events that change no node's standing cost nothing more).
    ["only a renewal", lease({ a: "applying" }), lease({ a: "applying" }, undefined, "2026-01-01T12:00:30.000Z"), {}, 0],
    ["an annotation outside the slots", lease({ a: "applying" }), withAnnotation(lease({ a: "applying" }), "other", "x"), {}, 0],
    ["a slot written anew with the same content", lease({ a: "applying" }), reformatted(lease({ a: "applying" }), "a"), {}, 0],
    ["an up-to-date node", lease({ a: "applying" }), lease({}), { outdated: false }, 1],
    ["a node without rollout-parallelism", lease({ a: "applying" }), lease({}), { n: "" }, 0],
    ["a node verifying its own slot", lease({ a: "applying", me: "verifying" }), lease({ me: "verifying" }), {}, 1],
    ["a node applying in its own slot", lease({ a: "verifying", me: "applying" }), lease({ me: "applying" }), {}, 1],
    ["a node whose own slot failed", lease({ a: "verifying", me: "failed" }), lease({ me: "failed" }), {}, 1],
  ])("does not wake for %s", async (_name, before, after, opts, pauses) => {
    const w = waker(opts);
    w.change(before, after);
    await w.clock.settle();
    expect(w.clock.pending()).toBe(pauses);
    w.clock.step(2_000);
    await w.clock.settle();
    expect(w.woken).toEqual([]);
    w.stop();
  });

  test("wakes a node whose own slot is for an older version", async () => {
    const w = waker({ wanted: "newer" });
    w.change(lease({ a: "verifying", me: "verifying" }), lease({ me: "verifying" }));
    await w.clock.settle();
    w.clock.step(2_000);
    await w.clock.settle();
    expect(w.woken).toEqual([{ namespace: "kube-system", name: "pool" }]);
    w.stop();
  });

  test("ignores create, delete and generic events", async () => {
    const w = waker();
    const h = slotWaker({
      clock: w.clock,
      timings: t,
      secret: { namespace: "kube-system", name: "pool" },
      signal: AbortSignal.timeout(1_000),
      lease: () => undefined,
      node: async () => undefined,
      outdated: async () => true,
    });
    const q = { add: () => expect.unreachable() };
    h.create(lease({}), q);
    h.delete(lease({}), q);
    h.generic(lease({}), q);
    await w.clock.settle();
    expect(w.clock.pending()).toBe(0);
  });
});
