import { describe, expect, test } from "bun:test";
import { SimStore } from "./store.ts";
import { WatchHub } from "./watch.ts";
import { parseFieldSelector } from "./selectors.ts";
import { resolveDef } from "./resources.ts";

const node = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: "v1", kind: "Node", metadata: { name, labels } });

describe("SimStore peek", () => {
  test("answers the stored object as it is now (no copy), and undefined for a missing one", () => {
    const store = new SimStore(100);
    store.create("nodes", node("a"));
    const seen = store.peek("nodes", "", "a");
    expect(seen).toBe(store.peek("nodes", "", "a"));
    expect(seen).toEqual(store.get("nodes", "", "a"));
    store.patch("nodes", "", "a", "merge", { metadata: { labels: { x: "y" } } });
    expect((store.peek("nodes", "", "a")?.["metadata"] as { labels: unknown }).labels).toEqual({ x: "y" });
    expect(store.peek("nodes", "", "b")).toBeUndefined();
  });
});

describe("WatchHub delivery by resource", () => {
  test("a watch of one Node by name gets that Node's events only, and none once closed", async () => {
    const store = new SimStore(100);
    const hub = new WatchHub(store, 0);
    store.create("nodes", node("a"));
    store.create("nodes", node("b"));
    const w = hub.open({
      def: resolveDef("nodes"),
      namespace: "",
      selector: { labels: [], fields: parseFieldSelector("metadata.name=a") },
      fromRv: store.resourceVersion,
      bookmarks: false,
      sendInitialEvents: false,
      timeoutMs: 60_000,
    });
    store.patch("nodes", "", "b", "merge", { metadata: { labels: { x: "1" } } });
    store.create("namespaces", { metadata: { name: "other" } });
    store.patch("nodes", "", "a", "merge", { metadata: { labels: { x: "2" } } });
    w.close();
    store.patch("nodes", "", "a", "merge", { metadata: { labels: { x: "3" } } });
    const text = await new Response(w.stream).text();
    const events = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string; labels: Record<string, string> } } });
    expect(events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.labels["x"]])).toEqual([["MODIFIED", "a", "2"]]);
  });

  test("a stopped hub leaves no subscription in the store", () => {
    const store = new SimStore(100);
    const hub = new WatchHub(store, 0);
    hub.open({
      def: resolveDef("nodes"),
      namespace: "",
      selector: { labels: [], fields: parseFieldSelector("") },
      fromRv: store.resourceVersion,
      bookmarks: false,
      sendInitialEvents: false,
      timeoutMs: 60_000,
    });
    expect(store.subscriptions).toBe(1);
    hub.stop();
    expect(store.subscriptions).toBe(0);
  });
});
