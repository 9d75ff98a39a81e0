// Slot writes on the pool's Lease against the API-server simulator: resourceVersion-guarded updates
// mean concurrent nodes can never take the last slot together (issue 16); only slots of Nodes the API
// server says are gone are dropped, not those of Nodes missing from the pool's label list (issue 25).
import { beforeAll, describe, expect, test } from "bun:test";
import { realClock } from "../../src/clock/index.ts";
import {
  decide,
  formatSlot,
  PoolNodes,
  type Slot,
  updateSlots,
} from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";
import { defaultRolloutTimings } from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { useAdminSim } from "../harness/admin-kube.ts";

const env = useAdminSim();

let seq = 0;
function secret(): KubeObject {
  const name = `gardener-node-agent-slots-${++seq}`;
  return env.sim.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "kube-system" },
    data: {},
  }) as KubeObject;
}

const now = Date.now();
const applying = (): Slot => ({
  checksum: "c",
  since: new Date(now).toISOString(),
  renewed: new Date(now).toISOString(),
  state: "applying",
});
const slotsOnLease = (s: KubeObject) =>
  Object.keys((env.sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject | undefined)?.metadata.annotations ?? {})
    .map((k) => k.replace("slot.node-agent.gardener.cloud/", ""))
    .sort();
/** A node's take as the gate makes it: its entry `applying` when `decide` says take (N slots), else nothing. */
const take = (me: string, n: number, calls: string[]) => (slots: ReadonlyMap<string, Slot>) => {
  calls.push(me);
  return decide(slots, me, "c", n, now, defaultRolloutTimings).kind === "take" ? new Map([[me, applying()]]) : undefined;
};
const retry = { clock: realClock };

describe("updateSlots", () => {
  test("creates the Lease owned by the Secret on the first write", async () => {
    const s = secret();
    await updateSlots(env.kube, s, () => new Map([["a", applying()]]), AbortSignal.timeout(10_000));
    const lease = env.sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject;
    expect(lease.metadata.annotations).toEqual({ "slot.node-agent.gardener.cloud/a": formatSlot(applying()) });
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
    await updateSlots(env.kube, s, () => new Map([[long, applying()]]), AbortSignal.timeout(10_000));
    const lease = env.sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject;
    const [key, value] = Object.entries(lease.metadata.annotations ?? {})[0] ?? [];
    expect(key?.length).toBe("slot.node-agent.gardener.cloud/".length + 63);
    expect(JSON.parse(value ?? "{}").node).toBe(long);
    // Read back under the full name; removing it clears the shortened key.
    await updateSlots(env.kube, s, (slots) => (slots.has(long) ? new Map([[long, null]]) : undefined), AbortSignal.timeout(10_000));
    expect((env.sim.store.get("leases", "kube-system", s.metadata.name ?? "") as KubeObject).metadata.annotations ?? {}).toEqual({});
  });

  // Updates (and creates) are held 300 ms so that all racers have read the same resourceVersion before
  // the first write lands (without it, a loaded machine can run one node's read and write before the
  // others read, and nobody meets a 409).
  test.each([
    ["the last slot of an existing Lease (N = 2, one held)", true, 2, 2],
    ["the two slots of a Lease nobody created yet (N = 2)", false, 2, 2],
  ])("lets exactly N of six concurrent nodes hold %s", async (_name, exists, n, want) => {
    const s = secret();
    if (exists) await updateSlots(env.kube, s, () => new Map([["held", applying()]]), AbortSignal.timeout(10_000));
    const names = ["n1", "n2", "n3", "n4", "n5", "n6"];
    const calls: string[] = [];
    const start = env.sim.requests.length;
    env.sim.faults.setLatency(300, { resource: "leases", verb: exists ? "update" : "create" });
    try {
      await Promise.all(names.map((me) => updateSlots(env.kube, s, take(me, n, calls), AbortSignal.timeout(10_000), retry)));
    } finally {
      env.sim.faults.setLatency(0);
    }
    const held = slotsOnLease(s);
    expect(held).toHaveLength(want);
    // Losers of a 409 were asked again after their pause and saw the slots taken: no more writes.
    const writes = env.sim.requests.slice(start).filter((r) => r.resource === "leases" && ["create", "update"].includes(r.verb));
    const won = writes.filter((r) => r.code === 200 || r.code === 201).length;
    expect(won).toBe(exists ? 1 : 2);
    expect(calls.length).toBeGreaterThan(6);
  });

  test("a release and a take racing on one Lease both land", async () => {
    const s = secret();
    await updateSlots(env.kube, s, () => new Map([["holder", applying()]]), AbortSignal.timeout(10_000));
    env.sim.faults.setLatency(300, { resource: "leases", verb: "update" });
    try {
      await Promise.all([
        updateSlots(env.kube, s, () => new Map([["holder", null]]), AbortSignal.timeout(10_000), retry),
        updateSlots(env.kube, s, take("taker", 2, []), AbortSignal.timeout(10_000), retry),
      ]);
    } finally {
      env.sim.faults.setLatency(0);
    }
    expect(slotsOnLease(s)).toEqual(["taker"]);
  });
});

describe("PoolNodes.gone (issue 25)", () => {
  const pool = "gardener-node-agent-gone";
  const node = (name: string, labelled: boolean) =>
    env.sim.store.create("nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name, labels: labelled ? { "worker.gardener.cloud/gardener-node-agent-secret-name": pool } : {} },
    });
  const client = (credentials: { certPem: string; keyPem: string } | { token: string }) =>
    new KubeClient({
      config:
        "token" in credentials
          ? { server: env.sim.url, caPem: env.sim.caPem, credentials: { kind: "token", token: credentials.token } }
          : {
              server: env.sim.url,
              caPem: env.sim.caPem,
              clientCertPem: credentials.certPem,
              clientKeyPem: credentials.keyPem,
              credentials: { kind: "none" },
            },
      qps: 1000,
      burst: 1000,
    });

  beforeAll(() => {
    node("gone-labelled", true);
    node("gone-unlabelled", false);
    node("gone-agent", false);
  });

  test("counts a Node missing from the pool list as present and only a Node that does not exist as gone", async () => {
    const gone = await new PoolNodes(realClock, 0).gone(
      env.kube,
      pool,
      ["gone-labelled", "gone-unlabelled", "gone-deleted"],
      AbortSignal.timeout(10_000),
    );
    expect([...gone]).toEqual(["gone-deleted"]);
  });

  test("gives the same answer to a node agent, which the node-agent authorizer lets GET only its own Node", async () => {
    env.sim.setMachineNode("machine-gone-agent", "gone-agent");
    const agent = client(
      await env.sim.issueClientCert("gardener.cloud:node-agent:machine:machine-gone-agent", ["gardener.cloud:node-agents"]),
    );
    try {
      const gone = await new PoolNodes(realClock, 0).gone(
        agent,
        pool,
        ["gone-labelled", "gone-unlabelled", "gone-deleted"],
        AbortSignal.timeout(10_000),
      );
      expect([...gone]).toEqual(["gone-deleted"]);
    } finally {
      agent.close();
    }
  });

  test("a pool that cannot be listed is an error naming the label, and a lone own slot needs no list", async () => {
    // A bootstrap token's user may not list Nodes (system:node-bootstrapper).
    const bootstrapper = client({ token: env.sim.addBootstrapToken("gone01", "0123456789abcdef") });
    try {
      const nodes = new PoolNodes(realClock, 0);
      expect(await nodes.gone(bootstrapper, pool, [], AbortSignal.timeout(10_000))).toEqual(new Set());
      const err = await nodes.gone(bootstrapper, pool, ["gone-deleted"], AbortSignal.timeout(10_000)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).name).toBe("PoolListError");
      expect((err as Error).message).toBe(`cannot list the Nodes labelled worker.gardener.cloud/gardener-node-agent-secret-name=${pool}`);
    } finally {
      bootstrapper.close();
    }
  });

  test("keeps the pool list and the answers by name for the ttl", async () => {
    const clock = new FakeClock();
    const nodes = new PoolNodes(clock, 30_000);
    const start = env.sim.requests.length;
    const ask = () => nodes.gone(env.kube, pool, ["gone-labelled", "gone-unlabelled", "gone-deleted"], AbortSignal.timeout(10_000));
    const lists = () => env.sim.requests.slice(start).filter((r) => r.resource === "nodes" && r.verb === "list").length;
    expect([...(await ask())]).toEqual(["gone-deleted"]);
    // One pool list and one question per unlisted name.
    expect(lists()).toBe(3);
    expect([...(await ask())]).toEqual(["gone-deleted"]);
    expect(lists()).toBe(3);
    clock.step(30_000);
    expect([...(await ask())]).toEqual(["gone-deleted"]);
    expect(lists()).toBe(6);
  });
});
