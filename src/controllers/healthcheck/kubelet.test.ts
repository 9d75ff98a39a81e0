import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../test/doubles/fake-clock.ts";
import { FakeSystemd } from "../../../test/doubles/systemd/index.ts";
import { ApiError } from "../../kube/index.ts";
import type { Kube, KubeObject } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { EventRecorder } from "../events.ts";
import { KubeletChecker, KubeletCheckError } from "./kubelet.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };

const node = (opts: { ready?: boolean; addresses?: Array<{ type: string; address: string }> } = {}): KubeObject => ({
  metadata: { name: "node-a", resourceVersion: "7" },
  status: {
    conditions: opts.ready === undefined ? [] : [{ type: "Ready", status: opts.ready ? "True" : "False" }],
    addresses: opts.addresses ?? [{ type: "InternalIP", address: "10.0.0.5" }],
  },
});

function setup(
  opts: {
    healthz?: () => Promise<Response>;
    addresses?: () => string[];
    update?: (o: KubeObject) => Promise<KubeObject>;
    firstProbeAfter?: Promise<void>;
  } = {},
) {
  const clock = new FakeClock();
  const systemd = new FakeSystemd({ clock });
  const events: string[] = [];
  const updates: KubeObject[] = [];
  const recorder: EventRecorder = {
    event: async (_o, type, reason, action, note) => void events.push(`${type} ${reason} ${action}: ${note}`),
  };
  const kube = {
    update: async (_res: unknown, _ns: string, o: KubeObject) => {
      updates.push(o);
      return opts.update ? opts.update(o) : o;
    },
  } as unknown as Kube;
  let healthz = opts.healthz ?? (async () => new Response("ok"));
  const checker = new KubeletChecker({
    kube,
    systemd,
    events: recorder,
    clock,
    log,
    listAddresses: opts.addresses ?? (() => ["127.0.0.1/8", "10.0.0.5/24", "fe80::1/64"]),
    fetch: () => healthz(),
    healthUrl: "http://127.0.0.1:10248/healthz",
    ...(opts.firstProbeAfter !== undefined ? { firstProbeAfter: opts.firstProbeAfter } : {}),
  });
  const signal = new AbortController().signal;
  return {
    clock,
    systemd,
    events,
    updates,
    check: (n: KubeObject = node()) => checker.check(n, signal),
    setHealthz: (f: () => Promise<Response>) => (healthz = f),
  };
}

describe("KubeletChecker", () => {
  describe("readiness toggles", () => {
    test("should warn on the fifth NotReady→Ready transition within ten minutes, and again on the sixth", async () => {
      const s = setup();
      for (let i = 0; i < 4; i++) {
        await s.check(node({ ready: true }));
        await s.check(node({ ready: false }));
        s.clock.step(60_000);
      }
      expect(s.events).toEqual([]);
      await s.check(node({ ready: true }));
      const warning =
        "Warning kubelet HealthCheck: Kubelet toggled between NotReady and Ready at least 5 times in a 10m0s time window. Rebooting the node might help";
      expect(s.events).toEqual([warning]);
      await s.check(node({ ready: true })); // still Ready: no transition
      expect(s.events).toHaveLength(1);
      await s.check(node({ ready: false }));
      await s.check(node({ ready: true }));
      expect(s.events).toEqual([warning, warning]);
      expect(s.systemd.actions).toEqual([]);
    });
    test("should count a node without a Ready condition as not ready", async () => {
      const s = setup();
      for (let i = 0; i < 5; i++) {
        await s.check(node({ ready: true }));
        await s.check(node());
      }
      expect(s.events).toHaveLength(1);
    });
  });

  describe("InternalIP recovery", () => {
    const noAddresses = () => node({ addresses: [] });

    test("should put back the last InternalIP the host still has with a status update", async () => {
      const s = setup();
      await s.check(node({ addresses: [{ type: "InternalIP", address: "10.0.0.5" }] }));
      await s.check(noAddresses());
      expect(s.updates).toHaveLength(1);
      expect(s.updates[0]?.metadata.resourceVersion).toBe("7");
      expect((s.updates[0]!["status"] as Record<string, unknown>)["addresses"]).toEqual([{ type: "InternalIP", address: "10.0.0.5" }]);
      expect(s.events).toEqual([
        "Warning kubelet HealthCheck: Node status does neither have an internal nor an external IP, try to recover from last known internal IP: 10.0.0.5",
        "Normal kubelet HealthCheck: Updated the lost internal IP address of node status to the previous known: 10.0.0.5 ",
      ]);
    });
    test("should only warn when no InternalIP was seen before", async () => {
      const s = setup();
      await s.check(noAddresses());
      expect(s.updates).toEqual([]);
      expect(s.events).toEqual(["Warning kubelet HealthCheck: Node status does neither have an internal nor an external IP"]);
    });
    test("should not touch the Node when the host lost the address too", async () => {
      const s = setup({ addresses: () => ["127.0.0.1/8"] });
      await s.check(node());
      await s.check(noAddresses());
      expect(s.updates).toEqual([]);
    });
    test("should leave a Node with only an ExternalIP alone", async () => {
      const s = setup();
      await s.check(node());
      await s.check(node({ addresses: [{ type: "ExternalIP", address: "1.2.3.4" }] }));
      expect(s.updates).toEqual([]);
      expect(s.events).toEqual([]);
    });
    test("should fail on an InternalIP that is not an address", async () => {
      const s = setup();
      const err = await s.check(node({ addresses: [{ type: "InternalIP", address: "10.0.0" }] })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KubeletCheckError);
      expect((err as Error).message).toBe('unable to parse internal IP address ParseAddr("10.0.0"): unable to parse IP');
    });
    test("should fail when the host addresses cannot be listed", async () => {
      const s = setup({
        addresses: () => {
          throw new Error("netlink");
        },
      });
      const err = await s.check(noAddresses()).catch((e: unknown) => e);
      expect((err as Error).message).toBe("unable to list all network interface IP addresses");
    });
    test("should return a conflict without restarting anything", async () => {
      const conflict = new ApiError(409, "Conflict", "the object has been modified");
      const s = setup({ update: () => Promise.reject(conflict) });
      await s.check(node());
      expect(await s.check(noAddresses()).catch((e: unknown) => e)).toBe(conflict);
      expect(s.systemd.actions).toEqual([]);
    });
    test("should restart the kubelet when the status update fails otherwise, then still probe", async () => {
      let probes = 0;
      const s = setup({
        update: () => Promise.reject(new ApiError(403, "Forbidden", "nodes is forbidden")),
        healthz: async () => (probes++, new Response("ok")),
      });
      await s.check(node());
      await s.check(noAddresses());
      expect(s.systemd.actions).toEqual([{ action: "Restart", units: ["kubelet.service"] }]);
      expect(s.events.slice(1)).toEqual([
        "Warning kubelet HealthCheck: Unable to update node status with internal IP: nodes is forbidden",
        "Normal SystemDUnitRestart restart: processed restart of unit kubelet.service",
      ]);
      expect(probes).toBe(2);
    });
  });

  describe("health probe", () => {
    test("should treat a non-200 answer as unhealthy and restart the kubelet after a minute", async () => {
      let cancelled = 0;
      const s = setup({
        healthz: async () =>
          new Response(
            new ReadableStream({
              cancel: () => void cancelled++,
            }),
            { status: 500 },
          ),
      });
      await s.check();
      s.clock.step(30_000);
      await s.check();
      expect(s.events).toEqual(["Warning kubelet HealthCheck: Kubelet is unhealthy, health check error: unexpected HTTP status code 500"]);
      s.clock.step(30_000);
      await s.check();
      expect(s.events.slice(1)).toEqual([
        "Warning kubelet HealthCheck: Kubelet is unhealthy for more than 1m0s, restarting it. Health check error: unexpected HTTP status code 500",
        "Normal SystemDUnitRestart restart: processed restart of unit kubelet.service",
      ]);
      expect(s.systemd.actions).toEqual([{ action: "Restart", units: ["kubelet.service"] }]);
      expect(cancelled).toBe(3);
      s.setHealthz(async () => new Response("ok"));
      await s.check();
      expect(s.events).toHaveLength(3); // the restart cleared the history: no "healthy" event
    });
    test("should report a transport error with the URL and announce recovery", async () => {
      const s = setup({ healthz: () => Promise.reject(new Error("Unable to connect. Is the computer able to access the url?")) });
      await s.check();
      expect(s.events).toEqual([
        'Warning kubelet HealthCheck: Kubelet is unhealthy, health check error: Get "http://127.0.0.1:10248/healthz": Unable to connect. Is the computer able to access the url?',
      ]);
      s.setHealthz(async () => new Response("ok"));
      await s.check();
      expect(s.events.at(-1)).toBe("Normal kubelet HealthCheck: Kubelet is healthy");
    });
    test("should send the first probe only once the agent has started", async () => {
      const started = Promise.withResolvers<void>();
      let probes = 0;
      const s = setup({ healthz: async () => (probes++, new Response("ok")), firstProbeAfter: started.promise });
      const first = s.check();
      await Bun.sleep(0);
      expect(probes).toBe(0);
      started.resolve();
      await first;
      expect(probes).toBe(1);
      await s.check();
      expect(probes).toBe(2);
    });
    test("should return the restart error and keep the failure history", async () => {
      const s = setup({ healthz: async () => new Response("", { status: 503 }) });
      s.systemd.failNextJob("kubelet.service");
      await s.check();
      s.clock.step(60_000);
      expect(((await s.check().catch((e: unknown) => e)) as Error).message).toBe("restart failed for kubelet.service, due failed");
      await s.check();
      expect(s.systemd.actions).toHaveLength(2);
    });
  });
});
