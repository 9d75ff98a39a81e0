// The serial lock (9.2) and the static pod gate (9.1) of the OSC reconcile, in-process against the
// API-server simulator (scenarios 13, 18, 19 of the osc-controller spec).
import { describe, expect, test } from "bun:test";
import type { Plain } from "../fixtures/osc/acceptance-osc.ts";
import type { OscWorld } from "../fixtures/osc/harness.ts";
import { createReconciler } from "../../src/controllers/operatingsystemconfig/index.ts";
import type { Logger } from "../../src/log/types.ts";
import { useOscWorlds } from "../harness/osc-worlds.ts";

const env = useOscWorlds();
const world = env.world;

const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
const b64 = (s: string) => Buffer.from(s).toString("base64");

function smallOsc(files: Plain[] = []): Plain {
  return {
    apiVersion: "extensions.gardener.cloud/v1alpha1",
    kind: "OperatingSystemConfig",
    spec: {
      files: [{ path: "/etc/demo/hello", permissions: 0o644, content: { inline: { data: "hello" } } }, ...files],
      units: [{ name: "demo.service", content: "[Service]\nExecStart=/bin/true\n", filePaths: ["/etc/demo/hello"] }],
    },
  };
}

function makeSerial(w: OscWorld): void {
  env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", {
    metadata: { annotations: { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" } },
  });
}

function putLease(w: OscWorld, spec: Plain): void {
  env.sim.store.create("leases", {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: w.secretName, namespace: "kube-system" },
    spec,
  });
}

const lease = (w: OscWorld) => env.sim.store.get("leases", "kube-system", w.secretName) as Plain | undefined;
const nodeChecksum = (w: OscWorld) => w.node()["metadata"]?.annotations?.["checksum/cloud-config-data"];
const reasons = (w: OscWorld) =>
  w
    .events()
    .filter((e) => !String(e["reason"]).startsWith("SystemDUnit"))
    .map((e) => `${e["type"]} ${e["reason"]}`);
const gateEvents = (w: OscWorld) => w.events().filter((e) => !String(e["reason"]).startsWith("SystemDUnit"));

describe("serial reconciliation (9.2)", () => {
  test("should take the Lease named like the Secret, apply, and release it", async () => {
    const w = await world();
    const sum = w.setOsc(smallOsc());
    makeSerial(w);
    const start = env.sim.requests.length;
    const res = await w.reconcile();
    expect(res).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);
    expect(await w.text("/etc/demo/hello")).toBe("hello");
    const l = lease(w);
    const secret = env.sim.store.get("secrets", "kube-system", w.secretName) as Plain;
    expect(l?.["metadata"].ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Secret", name: w.secretName, uid: secret["metadata"].uid, controller: true, blockOwnerDeletion: true },
    ]);
    // Released: the four lock fields are gone.
    expect(l?.["spec"]).toEqual({});
    // The Lease was held while the host was written: created with us as holder.
    const writes = env.sim.requests.slice(start).filter((r) => r.resource === "leases" && r.verb !== "get");
    expect(writes.map((r) => `${r.verb} ${r.code}`)).toEqual(["create 201", "update 200"]);
  });

  test("should wait for a live holder without touching the host, then apply once it released", async () => {
    const w = await world();
    const sum = w.setOsc(smallOsc());
    makeSerial(w);
    const renewed = Date.now() - 100_000;
    putLease(w, {
      holderIdentity: "other-host",
      leaseDurationSeconds: 600,
      acquireTime: microTime(renewed),
      renewTime: microTime(renewed),
    });
    const reconcile = createReconciler(w.deps());
    const key = { namespace: "kube-system", name: w.secretName };
    const res = await reconcile(key, AbortSignal.timeout(30_000));
    expect(res.requeueAfterMs).toBeGreaterThan(495_000);
    expect(res.requeueAfterMs).toBeLessThanOrEqual(500_000);
    expect(await w.exists("/etc/demo/hello")).toBe(false);
    expect(w.systemd.actions).toHaveLength(0);
    expect(nodeChecksum(w)).toBeUndefined();
    expect(reasons(w)).toEqual(["Normal WaitingForSerialLock"]);
    expect(gateEvents(w)[0]?.["message"]).toBe(
      `Waiting for the serial reconciliation lock (Lease kube-system/${w.secretName}) held by other-host until ${new Date(renewed + 600_000).toISOString().replace(/\.\d{3}Z$/, "Z")}`,
    );
    // A second wait for the same checksum does not repeat the event.
    await reconcile(key, AbortSignal.timeout(30_000));
    expect(reasons(w)).toEqual(["Normal WaitingForSerialLock"]);

    // The holder releases.
    const held = lease(w) as Plain;
    env.sim.store.update("leases", { ...held, spec: {} });
    const after = await reconcile(key, AbortSignal.timeout(30_000));
    expect(after).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);
    expect(lease(w)?.["spec"]).toEqual({});
  });

  test("should take over a Lease whose holder expired", async () => {
    const w = await world();
    const sum = w.setOsc(smallOsc());
    makeSerial(w);
    putLease(w, {
      holderIdentity: "dead-host",
      leaseDurationSeconds: 600,
      acquireTime: microTime(Date.now() - 700_000),
      renewTime: microTime(Date.now() - 700_000),
    });
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);
    expect(lease(w)?.["spec"]).toEqual({});
  });

  test("should resume as the holder after a crash (the Lease still names this host)", async () => {
    const w = await world();
    const sum = w.setOsc(smallOsc());
    makeSerial(w);
    const acquired = microTime(Date.now() - 5_000);
    putLease(w, { holderIdentity: w.hostName, leaseDurationSeconds: 600, acquireTime: acquired, renewTime: acquired });
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);
    expect(lease(w)?.["spec"]).toEqual({});
  });

  test("should apply without the Lease while the Node was unknown at process start (2.3)", async () => {
    const w = await world({ withNode: false });
    w.setOsc(smallOsc());
    makeSerial(w);
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 5_000 });
    expect(await w.text("/etc/demo/hello")).toBe("hello");
    expect(lease(w)).toBeUndefined();
  });

  test("should not read or write the Lease when the Node is up to date", async () => {
    const w = await world();
    w.setOsc(smallOsc());
    makeSerial(w);
    await w.reconcile();
    const before = env.sim.requests.filter((r) => r.resource === "leases").length;
    expect(await w.reconcile()).toEqual({});
    expect(env.sim.requests.filter((r) => r.resource === "leases").length).toBe(before);
  });

  test("should fail the reconcile when the release fails, leaving the Node patched", async () => {
    const w = await world();
    const sum = w.setOsc(smallOsc());
    makeSerial(w);
    let updates = 0;
    const failingRelease = {
      ...w.kube,
      get: w.kube.get.bind(w.kube),
      list: w.kube.list.bind(w.kube),
      create: w.kube.create.bind(w.kube),
      patch: w.kube.patch.bind(w.kube),
      delete: w.kube.delete.bind(w.kube),
      watch: w.kube.watch.bind(w.kube),
      update: ((res, ns, obj, opts) => {
        if (res.resource === "leases") {
          updates++;
          return Promise.reject(new Error("injected release failure"));
        }
        return w.kube.update(res, ns, obj, opts);
      }) as typeof w.kube.update,
    };
    await expect(w.reconcile({ kube: failingRelease })).rejects.toThrow(
      "failed releasing serial reconciliation lock: injected release failure",
    );
    expect(updates).toBe(1);
    expect(nodeChecksum(w)).toBe(sum);
    expect(lease(w)?.["spec"]?.holderIdentity).toBe(w.hostName);
  });
});

const manifest = (name: string, hash: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  annotations:\n    gardener.cloud/config.mirror: ${hash}\n`;

function mirrorPod(w: OscWorld, name: string, hash: string): void {
  env.sim.store.create("pods", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `${name}-${w.nodeName}`,
      namespace: "kube-system",
      labels: { "static-pod": "true" },
      annotations: { "gardener.cloud/config.mirror": hash },
    },
    spec: { nodeName: w.nodeName, containers: [{ name: "c", image: "example.org/c:1" }] },
  });
}

function podStatus(w: OscWorld, name: string, phase: string, ready: boolean): void {
  env.sim.store.patch(
    "pods",
    "kube-system",
    `${name}-${w.nodeName}`,
    "merge",
    { status: { phase, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] } },
    { subresource: "status" },
  );
}

describe("static pods (9.1, scenario 13)", () => {
  const apiserverFile = (content: string) => ({
    path: "/etc/kubernetes/manifests/kube-apiserver.yaml",
    permissions: 0o600,
    content: { inline: { encoding: "b64", data: b64(content) } },
  });

  test.each([
    [
      "content that cannot be decoded",
      "{",
      'failed checking static pods: static pod manifest "/etc/kubernetes/manifests/kube-apiserver.yaml": cannot be decoded',
    ],
    [
      "a manifest that is not a Pod",
      "apiVersion: v1\nkind: Service\nmetadata: {name: foo}\n",
      'failed checking static pods: static pod manifest "/etc/kubernetes/manifests/kube-apiserver.yaml": is not a Pod (apiVersion "v1", kind "Service")',
    ],
  ])("should fail the reconcile with a Warning event for %s", async (_name, content, message) => {
    const w = await world();
    w.setOsc(smallOsc([apiserverFile(content)]));
    await expect(w.reconcile()).rejects.toThrow(message);
    expect(nodeChecksum(w)).toBeUndefined();
    expect(reasons(w)).toEqual(["Warning OSCApplyFailed"]);
    expect(gateEvents(w)[0]?.["message"]).toBe(message);
  });

  test("should hold the checksum until the mirror pod carries the hash and is Running and Ready, logging why", async () => {
    const w = await world();
    const sum = w.setOsc(
      smallOsc([
        apiserverFile(manifest("foo", "abc")),
        { path: "/etc/kubernetes/manifests/other.yaml", hostName: "some-other-hostname", content: { inline: { data: "{" } } },
      ]),
    );
    const whys: unknown[] = [];
    const log: Logger = {
      debug() {},
      info: (msg, fields) => {
        if (msg === "Holding the operating system config apply") whys.push(fields?.["why"]);
      },
      warn() {},
      error() {},
      child: () => log,
    };
    const reconcile = createReconciler(w.deps({ log }));
    const run = () => reconcile({ namespace: "kube-system", name: w.secretName }, AbortSignal.timeout(30_000));
    const waiting = async (why: string) => {
      expect(await run()).toEqual({ requeueAfterMs: 5_000 });
      expect(nodeChecksum(w)).toBeUndefined();
      expect(whys.at(-1)).toBe(`Waiting for static pods: ${why}`);
    };
    await waiting("static pod foo has no mirror pod yet");
    expect(reasons(w)).toEqual(["Normal WaitingForStaticPods"]);
    mirrorPod(w, "foo", "old");
    await waiting("static pod foo does not run the current manifest yet");
    // kubelet replaced the manifest's mirror pod with the current hash.
    env.sim.store.patch("pods", "kube-system", `foo-${w.nodeName}`, "merge", {
      metadata: { annotations: { "gardener.cloud/config.mirror": "abc" } },
    });
    podStatus(w, "foo", "Pending", false);
    await waiting("static pod foo is Pending");
    podStatus(w, "foo", "Running", false);
    await waiting("static pod foo is not Ready");
    podStatus(w, "foo", "Running", true);
    expect(await run()).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);
    expect(w.node()["metadata"]?.labels?.["worker.gardener.cloud/kubernetes-version"]).toBe("1.2.3");
    // One event per checksum and reason, however long it waits.
    expect(reasons(w)).toEqual(["Normal WaitingForStaticPods", "Normal OSCApplied"]);
  });
});
