import { describe, expect, test } from "bun:test";
import { EnvError, parseAgentEnv } from "./env.ts";
import { defaultAgentTimings } from "./timings.ts";

const errorOf = (raw: Record<string, string>): unknown => {
  try {
    parseAgentEnv(raw);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe("parseAgentEnv", () => {
  describe("defaults", () => {
    test("should give containerd's socket and namespace, no overrides and upstream's timings when nothing is set", () => {
      expect(parseAgentEnv({})).toEqual({
        hostNameOverride: undefined,
        dbusAddress: undefined,
        containerd: { address: "/run/containerd/containerd.sock", namespace: "default" },
        kubeconfig: undefined,
        notifySocket: undefined,
        watchdogUsec: undefined,
        processPath: "",
        plainHttpRegistries: [],
        kubeletHealthUrl: undefined,
        timings: defaultAgentTimings,
      });
    });

    test("should treat empty values as unset", () => {
      const env = parseAgentEnv({
        GARDENER_NODE_AGENT_HOSTNAME: "",
        DBUS_SYSTEM_BUS_ADDRESS: "",
        CONTAINERD_ADDRESS: "",
        CONTAINERD_NAMESPACE: "",
        KUBECONFIG: "",
        GARDENER_NODE_AGENT_TIMINGS: "",
      });
      expect(env.hostNameOverride).toBeUndefined();
      expect(env.dbusAddress).toBeUndefined();
      expect(env.containerd).toEqual({ address: "/run/containerd/containerd.sock", namespace: "default" });
      expect(env.kubeconfig).toBeUndefined();
      expect(env.timings).toEqual(defaultAgentTimings);
    });
  });

  describe("values", () => {
    test("should take every variable the agent reads", () => {
      const env = parseAgentEnv({
        GARDENER_NODE_AGENT_HOSTNAME: "Worker-A",
        DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/run/bus",
        CONTAINERD_ADDRESS: "/x.sock",
        CONTAINERD_NAMESPACE: "k8s.io",
        KUBECONFIG: "/k",
        NOTIFY_SOCKET: "/run/notify",
        WATCHDOG_USEC: "30000000",
        PATH: "/usr/bin:/bin",
        GARDENER_NODE_AGENT_PLAIN_HTTP_REGISTRIES: "127.0.0.1:5000,,localhost:5001",
        GARDENER_NODE_AGENT_KUBELET_HEALTHZ_URL: "http://127.0.0.1:20001/healthz",
        GARDENER_NODE_AGENT_TIMINGS: "healthyFor=2s,staleAfter=10s,driftCheckPeriod=300ms,unitVerifyWindow=1500ms",
      });
      expect(env).toMatchObject({
        hostNameOverride: "Worker-A",
        dbusAddress: "unix:path=/run/bus",
        containerd: { address: "/x.sock", namespace: "k8s.io" },
        kubeconfig: "/k",
        notifySocket: "/run/notify",
        watchdogUsec: "30000000",
        processPath: "/usr/bin:/bin",
        plainHttpRegistries: ["127.0.0.1:5000", "localhost:5001"],
        kubeletHealthUrl: "http://127.0.0.1:20001/healthz",
        timings: { driftCheckPeriodMs: 300, unitVerifyWindowMs: 1500, unitCheckPeriodMs: undefined, oscBackoffMaxMs: 1_000_000 },
      });
      expect(env.timings.rollout).toMatchObject({ healthyForMs: 2_000, staleAfterMs: 10_000, verifyTimeoutMs: 600_000 });
    });
  });

  describe("bad values", () => {
    test.each([
      [
        "GARDENER_NODE_AGENT_TIMINGS",
        "driftCheckPeriod=s3cret-5m",
        "environment variable GARDENER_NODE_AGENT_TIMINGS: timing driftCheckPeriod is not a duration",
      ],
      [
        "GARDENER_NODE_AGENT_TIMINGS",
        "driftCheckPeriod=0s",
        "environment variable GARDENER_NODE_AGENT_TIMINGS: timing driftCheckPeriod must be positive",
      ],
      [
        "GARDENER_NODE_AGENT_TIMINGS",
        "unitVerifyWindow=-1500ms",
        "environment variable GARDENER_NODE_AGENT_TIMINGS: timing unitVerifyWindow must be positive",
      ],
      [
        "GARDENER_NODE_AGENT_TIMINGS",
        "healthyFor=s3cret",
        "environment variable GARDENER_NODE_AGENT_TIMINGS: timing healthyFor is not a duration",
      ],
    ])("should name %s but not its value %p", (name, value, message) => {
      const err = errorOf({ [name]: value });
      expect(err).toBeInstanceOf(EnvError);
      expect((err as EnvError).variable).toBe(name);
      expect((err as EnvError).message).toBe(message);
      expect((err as EnvError).cause).toBeUndefined();
    });
  });
});
