import { describe, expect, test } from "bun:test";
import type { Kube } from "../../kube/index.ts";
import { acceptanceOsc } from "../../../test/fixtures/osc/acceptance-osc.ts";
import { useOscWorlds } from "../../../test/harness/osc-worlds.ts";

const env = useOscWorlds();

class PatchRefused extends Error {
  override readonly name = "PatchRefused";
}

/** The world's client, except that every patch fails after `delayMs` (the planning runs meanwhile). */
function refusingPatches(kube: Kube, delayMs: number): Kube {
  const patch = async (): Promise<never> => {
    await Bun.sleep(delayMs); // lets the overlapping planning finish first, not a wait for a condition
    throw new PatchRefused("node patch refused");
  };
  return new Proxy(kube, {
    get(target, prop) {
      if (prop === "patch") return patch;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

describe("createReconciler", () => {
  describe("node label patch", () => {
    test.each([0, 50])("should fail with the patch error and leave the host untouched when the patch fails after %d ms", async (delayMs) => {
      const w = await env.world();
      w.setOsc(acceptanceOsc());
      await expect(w.reconcile({ kube: refusingPatches(w.kube, delayMs) })).rejects.toThrow("failed patching node labels: node patch refused");
      expect(await w.exists("/example/file")).toBe(false);
      expect(await w.exists("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml")).toBe(false);
      expect(w.actions()).toEqual([]);
      expect(w.events().filter((e) => e["reason"] === "OSCApplyFailed")).toEqual([]);
    });

    test("should fail with the patch error when planning fails too", async () => {
      const w = await env.world();
      const osc = acceptanceOsc();
      osc["spec"]["files"].push({ path: "relative/path", content: { inline: { data: "x" } } });
      w.setOsc(osc);
      await expect(w.reconcile({ kube: refusingPatches(w.kube, 20) })).rejects.toThrow("failed patching node labels");
      expect(w.events().filter((e) => e["reason"] === "OSCApplyFailed")).toEqual([]);
    });
  });
});
