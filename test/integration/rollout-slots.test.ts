// Slot writes on the pool's Lease against the API-server simulator: resourceVersion-guarded updates
// mean concurrent nodes can never take the last slot together (issue 16).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decide, formatSlot, type Slot, updateSlots } from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";
import { defaultRolloutTimings } from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { type ApiServerSim, startApiServer } from "../doubles/apiserver/index.ts";

let sim: ApiServerSim;
let kube: KubeClient;
beforeAll(async () => {
  sim = await startApiServer();
  kube = new KubeClient({
    config: { server: sim.url, caPem: sim.caPem, credentials: { kind: "token", token: sim.adminToken } },
    qps: 1000,
    burst: 1000,
  });
});
afterAll(async () => {
  kube.close();
  await sim.stop();
});

let seq = 0;
function secret(): KubeObject {
  const name = `gardener-node-agent-slots-${++seq}`;
  return sim.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "kube-system" },
    data: {},
  }) as KubeObject;
}

const now = Date.now();
const waiting = (): Slot => ({ checksum: "c", since: new Date(now).toISOString(), renewed: new Date(now).toISOString(), state: "waiting" });

describe("updateSlots", () => {
  test("creates the Lease owned by the Secret on the first write", async () => {
    const s = secret();
    await updateSlots(kube, s, () => ({ set: new Map([["a", waiting()]]) }), AbortSignal.timeout(10_000));
    const lease = sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject;
    expect(lease.metadata.annotations).toEqual({ "slot.node-agent.gardener.cloud/a": formatSlot(waiting()) });
    expect(lease.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "Secret",
      name: s.metadata.name,
      uid: s.metadata.uid,
      controller: true,
    });
  });

  test("stores a slot for a node name longer than an annotation key allows", async () => {
    const s = secret();
    const long = `shoot--garden--a-long-project-name--worker-pool-z1-66b8f-${"x".repeat(30)}`;
    await updateSlots(kube, s, () => ({ set: new Map([[long, waiting()]]) }), AbortSignal.timeout(10_000));
    const lease = sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject;
    const [key, value] = Object.entries(lease.metadata.annotations ?? {})[0] ?? [];
    expect(key?.length).toBe("slot.node-agent.gardener.cloud/".length + 63);
    expect(JSON.parse(value ?? "{}").node).toBe(long);
    // Read back under the full name; removing it clears the shortened key.
    await updateSlots(kube, s, (slots) => (slots.has(long) ? { set: new Map([[long, null]]) } : undefined), AbortSignal.timeout(10_000));
    expect((sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject).metadata.annotations ?? {}).toEqual({});
  });

  test("lets exactly one of six concurrent nodes take the last slot (N = 1)", async () => {
    const s = secret();
    const names = ["n1", "n2", "n3", "n4", "n5", "n6"];
    // Everyone registered and nobody waits before anyone else in this table: all would take.
    await updateSlots(kube, s, () => ({ set: new Map(names.map((n) => [n, waiting()])) }), AbortSignal.timeout(10_000));
    const took: string[] = [];
    let calls = 0;
    // Updates are held 300 ms so that all six have read the same resourceVersion before the first
    // write lands (without it, a loaded machine can run one node's read and write before the others
    // read, and nobody meets a 409).
    sim.faults.setLatency(300, { verb: "update", resource: "leases" });
    await Promise.all(
      names.map((me) =>
        updateSlots(
          kube,
          s,
          (slots) => {
            calls++;
            // Ignore name order here so that every node wants the slot; N = 1.
            const others = new Map([...slots].filter(([n, x]) => n === me || x.state !== "waiting"));
            const d = decide(others, me, "c", 1, now, defaultRolloutTimings);
            if (d.kind !== "take") return undefined;
            took.push(me);
            return { set: new Map([[me, { ...waiting(), state: "applying" as const }]]) };
          },
          AbortSignal.timeout(10_000),
        ),
      ),
    );
    sim.faults.setLatency(0);
    const lease = sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject;
    const applying = Object.entries(lease.metadata.annotations ?? {}).filter(([, v]) => v.includes('"applying"'));
    expect(applying).toHaveLength(1);
    // Losers of a 409 were asked again and then saw the slot taken.
    expect(calls).toBeGreaterThan(6);
    expect(took).toContain(applying[0]?.[0].replace("slot.node-agent.gardener.cloud/", "") ?? "");
  });
});
