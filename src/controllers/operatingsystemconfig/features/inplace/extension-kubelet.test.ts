import { describe, expect, test } from "bun:test";
import { annotations, failure, inPlaceWorld, labels, osc } from "../../../../../test/fixtures/osc/in-place.ts";
import { useOscWorlds } from "../../../../../test/harness/osc-worlds.ts";

const env = useOscWorlds();
const world = (reason?: string | null) => inPlaceWorld(env, reason);

describe("in-place update steps", () => {
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
