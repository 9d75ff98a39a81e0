// Issue 25: a node waiting for a rollout slot polls the pool's Lease (no watch) and is woken once a GET
// shows a slot it would take; while all N slots are held it is not woken.
import { describe, expect, test } from "bun:test";
import {
  defaultRolloutTimings,
  type Slot,
  SlotPoll,
  updateSlots,
} from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { useAdminSim } from "../harness/admin-kube.ts";

const env = useAdminSim();

describe("SlotPoll (issue 25)", () => {
  test("wakes a waiting node once a GET shows a free slot, not before", async () => {
    const secret = env.sim.store.create("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "gardener-node-agent-poll", namespace: "kube-system" },
      data: {},
    }) as KubeObject;
    const clock = new FakeClock(Date.now());
    const at = new Date(clock.now()).toISOString();
    const held: Slot = { checksum: "c", since: at, renewed: at, state: "applying" };
    await updateSlots(env.kube, secret, () => new Map([["other", held]]), AbortSignal.timeout(10_000));
    let woken = 0;
    let onWake = () => {};
    const stop = new AbortController();
    const poll = new SlotPoll({
      kube: env.kube,
      clock,
      timings: defaultRolloutTimings,
      wake: () => {
        woken++;
        onWake();
      },
      signal: stop.signal,
    });
    poll.wait({ pool: secret.metadata.name ?? "", me: "me", checksum: "c", n: 1 });
    // One poll: its pause ends (beyond the longest, 1.5 × 4 s), it GETs the Lease against the simulator, and it
    // sleeps again when it still has to wait (counted in event-loop turns, not wall time).
    const turns = 1_000_000;
    const pollOnce = async () => {
      await clock.waitForSleepers(1, turns);
      clock.step(6_000);
    };
    await pollOnce();
    await pollOnce();
    await clock.waitForSleepers(1, turns);
    expect(woken).toBe(0);
    await updateSlots(env.kube, secret, () => new Map([["other", null]]), AbortSignal.timeout(10_000));
    const wokenNow = new Promise<void>((r) => {
      onWake = r;
    });
    await pollOnce();
    await wokenNow;
    expect(woken).toBe(1);
    expect(clock.pending()).toBe(0); // woken once, then it stops polling
    stop.abort();
  });

  test("polls a halted pool at the given pace, and stops when told", async () => {
    const clock = new FakeClock(Date.now());
    const stop = new AbortController();
    const poll = new SlotPoll({ kube: env.kube, clock, timings: defaultRolloutTimings, wake: () => {}, signal: stop.signal });
    const wait = { pool: "gardener-node-agent-halted", me: "me", checksum: "c", n: 1 };
    poll.wait({ ...wait, everyMs: 30_000 });
    await clock.waitForSleepers(1);
    expect((clock.nextDeadline() ?? 0) - clock.now()).toBeGreaterThanOrEqual(15_000); // ≥ 0.5 × 30 s, not ≤ 1.5 × 4 s
    poll.stop();
    clock.step(45_000);
    await new Promise<void>((r) => setImmediate(r));
    expect(clock.pending()).toBe(0); // stopped: no GET, no next pause
    stop.abort();
  });
});
