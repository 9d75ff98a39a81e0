import { describe, expect, test } from "bun:test";
import { enqueueMapped, enqueueObject, handlerFuncs } from "./handler.ts";
import type { ObjectKey } from "./reconcile.ts";
import { Channel } from "./source.ts";
import type { KubeObject } from "./types.ts";

const recorder = () => {
  const keys: ObjectKey[] = [];
  return { keys, add: (k: ObjectKey) => keys.push(k) };
};
const secret = (name: string): KubeObject => ({ metadata: { namespace: "kube-system", name } });

describe("handler", () => {
  describe("enqueueObject", () => {
    test("should enqueue the object's own key for every event kind", () => {
      const q = recorder();
      const h = enqueueObject<KubeObject>();
      h.create(secret("a"), q);
      h.delete(secret("b"), q);
      h.generic(secret("c"), q);
      h.update(secret("d"), secret("d"), q);
      // An update enqueues once: a second add could run the key again right after a waiting worker took it.
      expect(q.keys.map((k) => k.name)).toEqual(["a", "b", "c", "d"]);
      expect(q.keys[0]).toEqual({ namespace: "kube-system", name: "a" });
    });

    test("should use an empty namespace for cluster-scoped objects", () => {
      const q = recorder();
      enqueueObject<KubeObject>().create({ metadata: { name: "node-1" } }, q);
      expect(q.keys).toEqual([{ namespace: "", name: "node-1" }]);
    });
  });

  describe("enqueueMapped", () => {
    test("should enqueue a key once when old and new objects map to it", () => {
      const q = recorder();
      enqueueMapped<KubeObject>((o) => [
        { namespace: "", name: o.metadata.name ?? "" },
        { namespace: "", name: "shared" },
      ]).update(secret("x"), secret("x"), q);
      expect(q.keys.map((k) => k.name)).toEqual(["x", "shared"]);
    });

    test("should enqueue every key the map function returns", () => {
      const q = recorder();
      const h = enqueueMapped<KubeObject>((o) => [
        { namespace: "", name: `${o.metadata.name}-1` },
        { namespace: "", name: `${o.metadata.name}-2` },
      ]);
      h.generic(secret("s"), q);
      expect(q.keys.map((k) => k.name)).toEqual(["s-1", "s-2"]);
    });
  });

  describe("handlerFuncs", () => {
    test("should enqueue only for the members given (token controller: generic only)", () => {
      const q = recorder();
      const h = handlerFuncs<KubeObject>({ generic: (o, qq) => qq.add({ namespace: "x", name: o.metadata.name ?? "" }) });
      h.create(secret("a"), q);
      h.update(secret("a"), secret("a"), q);
      h.delete(secret("a"), q);
      h.generic(secret("g"), q);
      expect(q.keys).toEqual([{ namespace: "x", name: "g" }]);
    });
  });
});

describe("Channel", () => {
  test("should deliver sent objects as generic events to subscribers", () => {
    const ch = new Channel<string>();
    const got: string[] = [];
    const off = ch.subscribe({ create: () => {}, update: () => {}, delete: () => {}, generic: (s) => got.push(s) });
    ch.send("a");
    off();
    ch.subscribe({ create: () => {}, update: () => {}, delete: () => {}, generic: (s) => got.push(`late:${s}`) });
    ch.send("b");
    expect(got).toEqual(["a", "late:b"]);
  });

  test("should buffer events sent before anyone subscribed, dropping the oldest beyond capacity", () => {
    const ch = new Channel<number>(2);
    ch.send(1);
    ch.send(2);
    ch.send(3);
    const got: number[] = [];
    ch.subscribe({ create: () => {}, update: () => {}, delete: () => {}, generic: (n) => got.push(n) });
    expect(got).toEqual([2, 3]);
  });
});
