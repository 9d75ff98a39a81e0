import { describe, expect, test } from "bun:test";
import { TerminalError } from "../../../../kube/index.ts";
import { annotations, failure, findInChain, inPlaceWorld, labels, osc } from "../../../../../test/fixtures/osc/in-place.ts";
import { useOscWorlds } from "../../../../../test/harness/osc-worlds.ts";
import { createReconciler } from "../../reconcile.ts";
import type { InPlaceDeps } from "./deps.ts";

const env = useOscWorlds();
const world = (reason?: string | null) => inPlaceWorld(env, reason);

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
});
