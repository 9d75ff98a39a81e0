import { describe, expect, test } from "bun:test";
import { secrets, type Kube, type KubeObject } from "../../kube/index.ts";
import { acceptanceOsc } from "../../../test/fixtures/osc/acceptance-osc.ts";
import { useOscWorlds } from "../../../test/harness/osc-worlds.ts";
import { zonePath } from "./constants.ts";
import { oscSecretTransform } from "./input/secret.ts";

const env = useOscWorlds();

class PatchRefused extends Error {
  override readonly name = "PatchRefused";
}

/**
 * The world's client, except that every patch is refused: at once, or (`refuseAfterPlanningRead`) only
 * after the planning's read of the file's referenced Secret (`file9-secret`) answered — or failed, with
 * `failPlanningRead`. The order of the two failures is set by that promise, not by time.
 */
function refusingPatches(kube: Kube, opts: { refuseAfterPlanningRead: boolean; failPlanningRead?: boolean }) {
  const planningRead = Promise.withResolvers<void>();
  const patch = async (): Promise<never> => {
    if (opts.refuseAfterPlanningRead) await planningRead.promise;
    throw new PatchRefused("node patch refused");
  };
  const get = async (...args: Parameters<Kube["get"]>) => {
    if (args[2] !== "file9-secret") return kube.get(...args);
    try {
      if (opts.failPlanningRead) throw new Error("secret read refused");
      return await kube.get(...args);
    } finally {
      planningRead.resolve();
    }
  };
  const client = new Proxy(kube, {
    get(target, prop) {
      if (prop === "patch") return patch;
      if (prop === "get") return get;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return client;
}

describe("createReconciler", () => {
  describe("node label patch", () => {
    test.each([
      ["before the planning read the API server", false],
      ["after the planning's last API read answered", true],
    ])("should fail with the patch error and leave the host untouched when the patch fails %s", async (_when, late) => {
      const w = await env.world();
      w.setOsc(acceptanceOsc());
      await expect(w.reconcile({ kube: refusingPatches(w.kube, { refuseAfterPlanningRead: late }) })).rejects.toThrow(
        "failed patching node labels: node patch refused",
      );
      expect(await w.exists("/example/file")).toBe(false);
      expect(await w.exists("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml")).toBe(false);
      expect(w.actions()).toEqual([]);
      expect(w.events().filter((e) => e["reason"] === "OSCApplyFailed")).toEqual([]);
    });

    test("should fail with the patch error when planning failed first", async () => {
      const w = await env.world();
      w.setOsc(acceptanceOsc());
      await expect(
        w.reconcile({ kube: refusingPatches(w.kube, { refuseAfterPlanningRead: true, failPlanningRead: true }) }),
      ).rejects.toThrow("failed patching node labels: node patch refused");
      expect(await w.exists("/example/file")).toBe(false);
      expect(w.events().filter((e) => e["reason"] === "OSCApplyFailed")).toEqual([]);
    });
  });
  test("should not send the label patch when the Node carries the labels already", async () => {
    const w = await env.world();
    w.setOsc(acceptanceOsc());
    await w.reconcile();
    expect((w.node()["metadata"] as { labels: Record<string, string> }).labels["node-role.kubernetes.io/worker"]).toBe("");
    const patched: unknown[] = [];
    const kube = new Proxy(w.kube, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop, target);
        if (prop !== "patch" || typeof v !== "function") return typeof v === "function" ? v.bind(target) : v;
        return (...args: unknown[]) => {
          patched.push(args[4]);
          return v.apply(target, args);
        };
      },
    });
    const next = acceptanceOsc();
    (next["spec"] as { files: { content: { inline: { data: string } } }[] }).files[0]!.content.inline.data = "changed";
    w.setOsc(next);
    await w.reconcile({ kube });
    const labelPatches = patched.filter((body) => JSON.stringify(body).includes("node-role.kubernetes.io/worker"));
    expect(labelPatches).toEqual([]);
  });

  test("should ask for a systemd unit check once after an apply, and not when the Node is up to date", async () => {
    const w = await env.world();
    w.setOsc(acceptanceOsc());
    const asked: string[] = [];
    const requestUnitCheck = (nodeName: string) => void asked.push(nodeName);
    await w.reconcile({ requestUnitCheck });
    const name = (w.node()["metadata"] as { name: string }).name;
    expect(asked).toEqual([name]);
    await w.reconcile({ requestUnitCheck });
    expect(asked).toEqual([name]);
  });

  test("should apply nothing and look again shortly when a newer Secret version starts arriving during the read", async () => {
    const w = await env.world();
    w.setOsc(acceptanceOsc());
    // The informer's cache: the transform's object, whose OSC a big event arriving drops (input/secret.ts).
    const transform = oscSecretTransform(w.secretName);
    let cached = transform(await w.kube.get<KubeObject>(secrets, "kube-system", w.secretName));
    const readSecret = async () => cached;
    // The event starts while the read stage reads the zone for the Node labels: past the decode, before step 8.
    const host = new Proxy(w.host, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop, target);
        if (prop !== "readText" || typeof v !== "function") return typeof v === "function" ? v.bind(target) : v;
        return (path: string) => {
          if (path === zonePath) transform.bigEventArriving?.();
          return v.call(target, path);
        };
      },
    });
    expect(await w.reconcile({ readSecret, host })).toEqual({ requeueAfterMs: 1_000 });
    expect(await w.exists("/example/file")).toBe(false);
    expect(w.events().filter((e) => e["reason"] === "OSCApplyFailed")).toEqual([]);

    // The event arrived (the cache holds its object): the next reconcile applies it.
    cached = transform(await w.kube.get<KubeObject>(secrets, "kube-system", w.secretName));
    await w.reconcile({ readSecret });
    expect(await w.exists("/example/file")).toBe(true);
  });
});
