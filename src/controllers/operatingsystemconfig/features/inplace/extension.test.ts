import { describe, expect, test } from "bun:test";
import { TerminalError } from "../../../../kube/index.ts";
import type { Plain } from "../../../../../test/fixtures/osc/acceptance-osc.ts";
import type { OscWorld } from "../../../../../test/fixtures/osc/harness.ts";
import { createReconciler } from "../../reconcile.ts";
import type { CommandOutput, InPlaceDeps } from "./deps.ts";
import { useOscWorlds } from "../../../../../test/harness/osc-worlds.ts";

const env = useOscWorlds();

interface Opts {
  os?: string;
  kubelet?: string;
  command?: string | null;
  sa?: string;
}
function osc(o: Opts = {}): Plain {
  return {
    spec: {
      units: [
        {
          name: "kubelet.service",
          content: `[Service]\nExecStart=/opt/bin/kubelet-${o.kubelet ?? "1.31.2"}\n`,
          filePaths: ["/var/lib/kubelet/config/kubelet"],
        },
      ],
      files: [{ path: "/var/lib/kubelet/config/kubelet", content: { inline: { data: "cpuManagerPolicy: none\n" } } }],
      inPlaceUpdates: {
        operatingSystemVersion: o.os ?? "1.2.3",
        kubelet: o.kubelet ?? "1.31.2",
        ...(o.sa !== undefined ? { credentialsRotation: { serviceAccountKey: { lastInitiationTime: o.sa } } } : {}),
      },
    },
    status:
      o.command === null
        ? {}
        : { inPlaceUpdates: { osUpdate: { command: o.command ?? "/opt/bin/update-os", args: ["--to", o.os ?? "1.2.3"] } } },
  };
}

class Fakes {
  readonly commands: (readonly string[])[] = [];
  outputs: CommandOutput[] = [];
  healthy = true;
  deps(): InPlaceDeps {
    return {
      runCommand: async (argv) => {
        this.commands.push(argv);
        return this.outputs.shift() ?? { code: 0, output: "" };
      },
      kubeletHealthy: async () => this.healthy,
      renewAgentCredentials: async () => undefined,
      apiServer: { server: "https://api", caFile: "/var/lib/gardener-node-agent/cluster-ca.crt" },
      timing: { osUpdateRetryIntervalMs: 1, osUpdateRetryWindowMs: 20, kubeletHealthIntervalMs: 1, kubeletHealthTimeoutMs: 5 },
    };
  }
}

/** A node on 1.2.3 that applied the base in-place OSC; the Node carries the given condition reason. */
async function world(reason: string | null = "ReadyForUpdate"): Promise<{ w: OscWorld; f: Fakes }> {
  const w = await env.world();
  await w.host.writeFileAtomic("/etc/os-release", 'PRETTY_NAME="Garden Linux 1.2.3"\n', 0o644);
  const f = new Fakes();
  w.setOsc(osc());
  await w.reconcile({ inPlace: f.deps() });
  if (reason !== null) {
    env.sim.store.patch(
      "nodes",
      "",
      w.nodeName,
      "merge",
      { status: { conditions: [{ type: "InPlaceUpdate", status: "True", reason }] } },
      { subresource: "status" },
    );
  }
  return { w, f };
}

const labels = (w: OscWorld): Record<string, string> => w.node()["metadata"]["labels"] ?? {};
const annotations = (w: OscWorld): Record<string, string> => w.node()["metadata"]["annotations"] ?? {};
/** The TerminalError in an error's cause chain (what the controller runtime looks for). */
function findInChain(err: unknown, cls: typeof TerminalError): TerminalError | undefined {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof cls) return e;
  return undefined;
}
const failure = async (p: Promise<unknown>): Promise<Error> =>
  p.then(
    () => new Error("no failure"),
    (e: unknown) => e as Error,
  );

describe("in-place update steps", () => {
  describe("drain gate", () => {
    test("should hold, persist the flags and record one Normal event for repeated looks", async () => {
      const { w, f } = await world(null);
      w.setOsc(osc({ os: "1.2.4" }));
      const reconcile = createReconciler(w.deps({ inPlace: f.deps() }));
      const key = { namespace: "kube-system", name: w.secretName };
      expect(await reconcile(key, AbortSignal.timeout(30_000))).toEqual({ requeueAfterMs: 60_000 });
      expect(await reconcile(key, AbortSignal.timeout(30_000))).toEqual({ requeueAfterMs: 60_000 });
      expect(w.events().filter((e) => e["reason"] === "WaitingForDrain")).toHaveLength(1);
      expect(await w.text("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml")).toContain("  operatingSystem: true\n");
      expect(f.commands).toEqual([]);
    });
  });

  describe("OS update command", () => {
    test("should annotate the node and update when the command succeeds", async () => {
      const { w, f } = await world();
      w.setOsc(osc({ os: "1.2.4" }));
      // The command "updates" without changing os-release: the agent waits for the reboot.
      const err = await failure(w.reconcile({ inPlace: f.deps() }));
      expect(findInChain(err, TerminalError)?.message).toStartWith(
        "stopping reconciliation until gardener-node-agent is restarted after the OS update",
      );
      expect(f.commands).toEqual([["/opt/bin/update-os", "--to", "1.2.4"]]);
      expect(annotations(w)["node-agent.gardener.cloud/updating-operating-system-version"]).toBe("1.2.4");
      expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBeUndefined();
    });

    describe("after a restart of the agent during an OS update", () => {
      const bootId = "/proc/sys/kernel/random/boot_id";
      const changesFile = "/var/lib/gardener-node-agent/last-computed-osc-changes.yaml";

      test("should wait for the reboot in the same boot once the command succeeded, without a failure", async () => {
        const { w, f } = await world();
        await w.host.writeFileAtomic(bootId, "boot-1\n", 0o444);
        w.setOsc(osc({ os: "1.2.4" }));
        await failure(w.reconcile({ inPlace: f.deps() }));
        expect(await w.text(changesFile)).toContain("  operatingSystemUpdate:\n    bootID: boot-1\n    state: succeeded\n");
        const err = await failure(w.reconcile({ inPlace: f.deps() }));
        expect(findInChain(err, TerminalError)?.message).toStartWith(
          "stopping reconciliation until gardener-node-agent is restarted after the OS update",
        );
        expect(f.commands).toHaveLength(1);
        expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBeUndefined();
      });

      test("should run an interrupted command again in the same boot", async () => {
        const { w, f } = await world();
        await w.host.writeFileAtomic(bootId, "boot-1\n", 0o444);
        w.setOsc(osc({ os: "1.2.4" }));
        // The first attempt dies with the process while the command runs.
        const killed = new AbortController();
        const inPlace = f.deps();
        const dying: InPlaceDeps = {
          ...inPlace,
          runCommand: async () => {
            killed.abort(new Error("killed"));
            throw new Error("killed");
          },
        };
        await failure(createReconciler(w.deps({ inPlace: dying }))({ namespace: "kube-system", name: w.secretName }, killed.signal));
        expect(await w.text(changesFile)).toContain("    state: running\n");
        expect(annotations(w)["node-agent.gardener.cloud/updating-operating-system-version"]).toBe("1.2.4");
        await failure(w.reconcile({ inPlace }));
        expect(f.commands).toEqual([["/opt/bin/update-os", "--to", "1.2.4"]]);
        expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBeUndefined();
      });

      test("should report a rollback after a reboot into the old version", async () => {
        const { w, f } = await world();
        await w.host.writeFileAtomic(bootId, "boot-1\n", 0o444);
        w.setOsc(osc({ os: "1.2.4" }));
        await failure(w.reconcile({ inPlace: f.deps() }));
        await w.host.writeFileAtomic(bootId, "boot-2\n", 0o444);
        const err = await failure(w.reconcile({ inPlace: f.deps() }));
        expect(findInChain(err, TerminalError)?.message).toBe(
          "operating system update to version 1.2.4 was started but the node runs version 1.2.3: suspected rollback of the OS update",
        );
        expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBe("failed");
        expect(f.commands).toHaveLength(1);
      });
    });

    test("should retry network problems, report them and try again after 10 minutes", async () => {
      const { w, f } = await world();
      w.setOsc(osc({ os: "1.2.4" }));
      f.outputs = Array.from({ length: 100 }, () => ({ code: 1, output: "error: network problems while downloading" }));
      expect(await w.reconcile({ inPlace: f.deps() })).toEqual({ requeueAfterMs: 600_000 });
      expect(f.commands.length).toBeGreaterThan(1);
      expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBe("failed");
      expect(annotations(w)["node.machine.sapcloud.io/update-failed-reason"]).toStartWith("retriable error detected");
      expect(annotations(w)["node-agent.gardener.cloud/updating-operating-system-version"]).toBeUndefined();
      // The retry runs the command again (it is no rollback).
      const before = f.commands.length;
      f.outputs = [];
      await failure(w.reconcile({ inPlace: f.deps() }));
      expect(f.commands.length).toBe(before + 1);
    });

    test("should fail for good on invalid arguments and never run the command again", async () => {
      const { w, f } = await world();
      w.setOsc(osc({ os: "1.2.4" }));
      f.outputs = [{ code: 2, output: "invalid arguments" }];
      const err = await failure(w.reconcile({ inPlace: f.deps() }));
      expect(findInChain(err, TerminalError)?.message).toStartWith(
        "non-retriable error detected while updating the operating system to 1.2.4: invalid arguments",
      );
      expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBe("failed");
      const again = await failure(w.reconcile({ inPlace: f.deps() }));
      expect(findInChain(again, TerminalError)?.message).toContain("failed before, not retrying: non-retriable error detected");
      expect(f.commands).toHaveLength(1);
      expect(w.events().filter((e) => e["reason"] === "OSCApplyFailed").length).toBe(2);
    });

    test("should fail for good when the command outlives the reconcile deadline", async () => {
      const { w, f } = await world();
      w.setOsc(osc({ os: "1.2.4" }));
      const inPlace: InPlaceDeps = {
        ...f.deps(),
        // Hangs until the reconcile's deadline kills it, like a real process would be.
        runCommand: (argv, signal) =>
          new Promise((resolve) => {
            f.commands.push(argv);
            signal.addEventListener("abort", () => resolve({ code: 137, output: "" }), { once: true });
          }),
      };
      const err = await failure(
        createReconciler(w.deps({ inPlace }))({ namespace: "kube-system", name: w.secretName }, AbortSignal.timeout(4_000)),
      );
      expect(findInChain(err, TerminalError)?.message).toContain("the update command did not finish within the reconcile deadline");
      expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBe("failed");
      expect(f.commands).toHaveLength(1);
    });

    test("should fail before anything runs without a command", async () => {
      const { w, f } = await world();
      w.setOsc(osc({ os: "1.2.4", command: null }));
      const err = await failure(w.reconcile({ inPlace: f.deps() }));
      expect(err.message).toContain("status.inPlaceUpdates.osUpdate.command is required");
      expect(f.commands).toEqual([]);
      expect(annotations(w)["node-agent.gardener.cloud/updating-operating-system-version"]).toBeUndefined();
    });
  });

  describe("kubelet health", () => {
    test("should label the node failed when kubelet stays unhealthy after its update", async () => {
      const { w, f } = await world();
      f.healthy = false;
      w.setOsc(osc({ kubelet: "1.32.0" }));
      const err = await failure(w.reconcile({ inPlace: f.deps() }));
      expect(err.message).toContain("kubelet is not healthy after in-place update");
      expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBe("failed");
      expect(annotations(w)["node.machine.sapcloud.io/update-failed-reason"]).toStartWith("kubelet is not healthy after in-place update: ");
      // Healthy again: the retry (gate open through the failed label) clears the flags and succeeds.
      f.healthy = true;
      await w.reconcile({ inPlace: f.deps() });
      expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBe("successful");
      expect(annotations(w)["checksum/cloud-config-data"]).toBe(w.checksum);
    });
  });

  describe("service account key rotation", () => {
    test("should resync every token sync secret and report success", async () => {
      const { w, f } = await world();
      w.setOsc(osc({ sa: "2026-11-24T10:00:00Z" }));
      await w.reconcile({ inPlace: f.deps() });
      expect(w.resyncs).toEqual([
        { namespace: "kube-system", name: "test-secret-1" },
        { namespace: "kube-system", name: "test-secret-2" },
      ]);
      expect(labels(w)["node.machine.sapcloud.io/update-result"]).toBe("successful");
      expect(annotations(w)["checksum/cloud-config-data"]).toBe(w.checksum);
    });
  });
});
