// Issue 25 prototype: a node waiting for a rollout slot polls the pool's Lease (no watch) and is woken once a GET
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

describe("SlotPoll (issue 25 prototype)", () => {
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
    const stop = new AbortController();
    const poll = new SlotPoll({ kube: env.kube, clock, timings: defaultRolloutTimings, wake: () => woken++, signal: stop.signal });
    poll.wait({ pool: secret.metadata.name ?? "", me: "me", checksum: "c", n: 1 });
    const pollOnce = async () => {
      await clock.waitForSleepers(1);
      clock.step(6_000); // beyond the longest poll pause (1.5 × 4 s)
      await new Promise((r) => setTimeout(r, 50)); // the GET against the simulator
    };
    await pollOnce();
    await pollOnce();
    expect(woken).toBe(0);
    await updateSlots(env.kube, secret, () => new Map([["other", null]]), AbortSignal.timeout(10_000));
    await pollOnce();
    expect(woken).toBe(1);
    await new Promise((r) => setTimeout(r, 20));
    expect(clock.pending()).toBe(0); // woken once, then it stops polling
    stop.abort();
  });
});
