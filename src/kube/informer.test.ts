import { afterEach, describe, expect, test } from "bun:test";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import type { Logger } from "../log/index.ts";
import { ApiError, isNotFound, TransportError } from "./errors.ts";
import { Informer, type ObjectTransform } from "./informer.ts";
import { InformerSet } from "./informer-set.ts";
import { CachedReader, NotCachedError } from "./readers.ts";
import { nodes, secrets } from "./resources.ts";
import type { Kube, KubeList, KubeObject, WatchEvent, WatchOptions } from "./types.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

type Item = WatchEvent<KubeObject> | Error | "close";

/** One scripted watch stream: the test pushes events, errors or a close. */
class ScriptedWatch {
  readonly #items: Item[] = [];
  #wake: (() => void) | undefined;
  constructor(readonly opts: WatchOptions) {}
  push(item: Item): void {
    this.#items.push(item);
    this.#wake?.();
  }
  async *stream(): AsyncGenerator<WatchEvent<KubeObject>> {
    const signal = this.opts.signal;
    for (;;) {
      while (this.#items.length === 0) {
        if (signal?.aborted) return;
        await new Promise<void>((r) => {
          this.#wake = r;
          signal?.addEventListener("abort", () => r(), { once: true });
        });
      }
      const item = this.#items.shift();
      if (item === "close" || item === undefined) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  }
}

/** A Kube whose list answers come from `objects`/`rv` and whose watches are scripted by the test. */
class ScriptedKube implements Partial<Kube> {
  objects: KubeObject[] = [];
  rv = "10";
  lists = 0;
  listError: Error | undefined;
  readonly watches: ScriptedWatch[] = [];
  async list<T extends KubeObject>(): Promise<KubeList<T>> {
    this.lists++;
    if (this.listError !== undefined) throw this.listError;
    return { metadata: { resourceVersion: this.rv }, items: [...this.objects] as T[] };
  }
  watch<T extends KubeObject>(_r: unknown, _ns: string, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    const w = new ScriptedWatch(opts);
    this.watches.push(w);
    return w.stream() as AsyncIterable<WatchEvent<T>>;
  }
}

const node = (name: string, rv: string, labels: Record<string, string> = {}): KubeObject => ({
  kind: "Node",
  metadata: { name, resourceVersion: rv, labels },
});

async function until(cond: () => boolean, turns = 5000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise<void>((r) => setImmediate(r));
  }
  throw new Error("condition not reached");
}

let stop = new AbortController();
let runs: Promise<void>[] = [];
afterEach(async () => {
  stop.abort();
  await Promise.all(runs);
  runs = [];
  stop = new AbortController();
});

function setup(extra: { resyncPeriodMs?: number; initialList?: KubeList<KubeObject>; transform?: ObjectTransform<KubeObject> } = {}) {
  const kube = new ScriptedKube();
  const clock = new FakeClock();
  const inf = new Informer<KubeObject>({
    kube: kube as unknown as Kube,
    resource: nodes,
    namespace: "",
    selectors: { fieldSelector: "metadata.name=n1" },
    clock,
    log: silent,
    random: () => 0,
    watchTimeoutSeconds: () => 300,
    ...extra,
  });
  const events: string[] = [];
  inf.addHandler({
    onAdd: (o) => events.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
    onUpdate: (a, b) => events.push(`update ${a.metadata.name}@${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`),
    onDelete: (o) => events.push(`delete ${o.metadata.name}`),
  });
  const start = () => runs.push(inf.run(stop.signal));
  return { kube, clock, inf, events, start };
}

describe("Informer", () => {
  test("should list, sync, announce existing objects as adds and watch from the list's resourceVersion", async () => {
    const { kube, inf, events, start } = setup();
    kube.objects = [node("n1", "5")];
    start();
    await inf.waitForSync(stop.signal);
    expect(inf.hasSynced()).toBe(true);
    expect(events).toEqual(["add n1@5"]);
    await until(() => kube.watches.length === 1);
    const opts = kube.watches[0]?.opts;
    expect(opts?.resourceVersion).toBe("10");
    expect(opts?.allowWatchBookmarks).toBe(true);
    expect(opts?.fieldSelector).toBe("metadata.name=n1");
    expect(opts?.timeoutSeconds).toBe(300);
    expect(inf.get("n1")?.metadata.resourceVersion).toBe("5");
  });

  test("should start a stopped, forgotten informer from a fresh list, unsynced until then, emitting adds again", async () => {
    const { kube, inf, events } = setup();
    kube.objects = [node("n1", "5")];
    const first = new AbortController();
    const run = inf.run(first.signal);
    await inf.waitForSync(stop.signal);
    expect(() => inf.forget()).toThrow("forgotten while running");
    first.abort();
    await run;
    inf.forget();
    expect(inf.hasSynced()).toBe(false);
    expect(inf.get("n1")).toBeUndefined();
    kube.objects = [node("n1", "7")];
    runs.push(inf.run(stop.signal));
    await inf.waitForSync(stop.signal);
    expect(kube.lists).toBe(2);
    expect(events).toEqual(["add n1@5", "add n1@7"]);
    expect(inf.get("n1")?.metadata.resourceVersion).toBe("7");
  });

  test("should cache and hand out objects as the transform leaves them, from the list and from the watch", async () => {
    const seen: string[] = [];
    const transform = (o: KubeObject): KubeObject => {
      seen.push(`${o.metadata.name}@${o.metadata.resourceVersion}`);
      const labels = { ...o.metadata.labels };
      delete labels["big"];
      return { ...o, metadata: { ...o.metadata, labels } };
    };
    const { kube, inf, events, start } = setup({ transform });
    kube.objects = [node("n1", "5", { big: "x", keep: "y" })];
    start();
    await inf.waitForSync(stop.signal);
    expect(inf.get("n1")?.metadata.labels).toEqual({ keep: "y" });
    await until(() => kube.watches.length === 1);
    kube.watches[0]?.push({ type: "MODIFIED", object: node("n1", "6", { big: "z" }) });
    kube.watches[0]?.push({ type: "BOOKMARK", object: { metadata: { resourceVersion: "7" } } });
    await until(() => inf.resourceVersion === "7");
    expect(inf.get("n1")?.metadata.labels).toEqual({});
    expect(events).toEqual(["add n1@5", "update n1@5->6"]);
    // Bookmarks carry no object worth keeping: they are not transformed.
    expect(seen).toEqual(["n1@5", "n1@6"]);
  });

  test("should hand the transform's dataAsBytes and bigEventArriving to every watch it opens", async () => {
    const dataAsBytes = (_o: KubeObject, key: string) => key === "osc.yaml";
    const bigEventArriving = () => {};
    const transform = Object.assign((o: KubeObject) => o, { dataAsBytes, bigEventArriving });
    const { kube, inf, start } = setup({ transform });
    kube.objects = [node("n1", "5")];
    start();
    await inf.waitForSync(stop.signal);
    await until(() => kube.watches.length === 1);
    expect(kube.watches[0]?.opts.dataAsBytes).toBe(dataAsBytes);
    expect(kube.watches[0]?.opts.onBigEvent).toBe(bigEventArriving);
  });

  test("should start from a given initial list without listing, watch from its resourceVersion, and re-list on 410 Gone", async () => {
    const { kube, inf, events, start } = setup({ initialList: { metadata: { resourceVersion: "42" }, items: [node("n1", "40")] } });
    start();
    await inf.waitForSync(stop.signal);
    expect(events).toEqual(["add n1@40"]);
    await until(() => kube.watches.length === 1);
    expect(kube.lists).toBe(0);
    expect(kube.watches[0]?.opts.resourceVersion).toBe("42");
    expect(kube.watches[0]?.opts.fieldSelector).toBe("metadata.name=n1");
    kube.objects = [node("n1", "50")];
    kube.rv = "51";
    kube.watches[0]?.push(new ApiError(410, "Expired", "too old resource version"));
    await until(() => kube.watches.length === 2);
    expect(kube.lists).toBe(1);
    expect(kube.watches[1]?.opts.resourceVersion).toBe("51");
    expect(events).toEqual(["add n1@40", "update n1@40->50"]);
  });

  test("should apply watch events to the cache and handlers, and let bookmarks advance the resourceVersion", async () => {
    const { kube, inf, events, start } = setup();
    start();
    await until(() => kube.watches.length === 1);
    const w = kube.watches[0];
    w?.push({ type: "ADDED", object: node("n1", "11") });
    w?.push({ type: "MODIFIED", object: node("n1", "12") });
    w?.push({ type: "BOOKMARK", object: { kind: "Node", metadata: { resourceVersion: "15" } } });
    await until(() => inf.resourceVersion === "15");
    expect(inf.list().map((o) => o.metadata.resourceVersion)).toEqual(["12"]);
    w?.push({ type: "DELETED", object: node("n1", "16") });
    await until(() => events.length === 3);
    expect(events).toEqual(["add n1@11", "update n1@11->12", "delete n1"]);
    expect(inf.get("n1")).toBeUndefined();
  });

  test("should resume a closed watch from the last resourceVersion without re-listing", async () => {
    const { kube, events, start } = setup();
    start();
    await until(() => kube.watches.length === 1);
    kube.watches[0]?.push({ type: "ADDED", object: node("n1", "20") });
    kube.watches[0]?.push("close");
    await until(() => kube.watches.length === 2);
    expect(kube.watches[1]?.opts.resourceVersion).toBe("20");
    kube.watches[1]?.push({ type: "MODIFIED", object: node("n1", "21") });
    await until(() => events.length === 2);
    expect(events).toEqual(["add n1@20", "update n1@20->21"]);
    expect(kube.lists).toBe(1);
  });

  test("should re-list on 410 Gone and emit the difference to the cache", async () => {
    const { kube, inf, events, start } = setup();
    kube.objects = [node("a", "1"), node("b", "2"), node("c", "3")];
    start();
    await until(() => kube.watches.length === 1);
    kube.objects = [node("a", "1"), node("b", "7"), node("d", "8")];
    kube.rv = "30";
    kube.watches[0]?.push(new ApiError(410, "Expired", "too old resource version"));
    await until(() => kube.watches.length === 2);
    expect(kube.lists).toBe(2);
    expect(events.slice(3)).toEqual(["update b@2->7", "add d@8", "delete c"]);
    expect(kube.watches[1]?.opts.resourceVersion).toBe("30");
    expect(
      inf
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["a", "b", "d"]);
  });

  test("should back off 200 ms, then 400 ms on consecutive watch errors, then resume from the same resourceVersion", async () => {
    const { kube, clock, start } = setup();
    start();
    await until(() => kube.watches.length === 1);
    kube.watches[0]?.push(new TransportError("connection refused"));
    await clock.waitForSleepers(1);
    clock.step(199);
    await clock.settle();
    expect(kube.watches.length).toBe(1);
    clock.step(1);
    await until(() => kube.watches.length === 2);
    kube.watches[1]?.push(new TransportError("connection refused"));
    await clock.waitForSleepers(1);
    expect(clock.nextDeadline()).toBe(clock.now() + 400);
    clock.step(400);
    await until(() => kube.watches.length === 3);
    expect(kube.watches[2]?.opts.resourceVersion).toBe("10");
    expect(kube.lists).toBe(1);
  });

  test("should retry a failed initial list with backoff and stay unsynced meanwhile", async () => {
    const { kube, clock, inf, start } = setup();
    kube.listError = new TransportError("connection refused");
    start();
    await clock.waitForSleepers(1);
    expect(inf.hasSynced()).toBe(false);
    kube.listError = undefined;
    clock.step(200);
    await inf.waitForSync(stop.signal);
    expect(kube.lists).toBe(2);
  });

  test("should replay the cache as adds to a handler registered late", async () => {
    const { kube, inf, start } = setup();
    kube.objects = [node("n1", "5")];
    start();
    await inf.waitForSync(stop.signal);
    const late: string[] = [];
    inf.addHandler({ onAdd: (o) => late.push(o.metadata.name ?? "") });
    expect(late).toEqual(["n1"]);
  });

  test("should re-deliver cached objects as updates every resync period", async () => {
    const { kube, clock, events, start } = setup({ resyncPeriodMs: 60_000 });
    kube.objects = [node("n1", "5")];
    start();
    await until(() => kube.watches.length === 1);
    clock.step(60_000);
    await until(() => events.length === 2);
    expect(events).toEqual(["add n1@5", "update n1@5->5"]);
  });

  test("should keep running when a handler throws", async () => {
    const { kube, inf, events, start } = setup();
    inf.addHandler({
      onAdd: () => {
        throw new Error("handler bug");
      },
    });
    start();
    await until(() => kube.watches.length === 1);
    kube.watches[0]?.push({ type: "ADDED", object: node("n1", "11") });
    await until(() => events.length === 1);
    expect(inf.get("n1")).toBeDefined();
  });

  test("should reject waitForSync when the signal aborts first", async () => {
    const { inf } = setup();
    const ac = new AbortController();
    const p = inf.waitForSync(ac.signal);
    ac.abort(new Error("gave up"));
    await expect(p).rejects.toThrow("gave up");
  });
});

describe("InformerSet and CachedReader", () => {
  test("should share one informer per resource, namespace and selector and read through the caches", async () => {
    const kube = new ScriptedKube();
    kube.objects = [{ kind: "Secret", metadata: { namespace: "kube-system", name: "osc" } }];
    const set = new InformerSet({ kube: kube as unknown as Kube, clock: new FakeClock(), log: silent });
    const a = set.informerFor(secrets, "kube-system", { fieldSelector: "metadata.name=osc" });
    const b = set.informerFor(secrets, "kube-system", { fieldSelector: "metadata.name=osc" });
    expect(a).toBe(b);
    expect(set.hasSynced()).toBe(false);
    const reader = new CachedReader(set);
    // A cached read before the first list waits for the cache instead of reporting NotFound.
    const early = reader.get(secrets, "kube-system", "osc", { signal: stop.signal });
    set.start(stop.signal);
    runs.push(set.stopped());
    expect((await early).metadata.name).toBe("osc");
    await set.waitForSync(stop.signal);
    expect(set.hasSynced()).toBe(true);
    expect((await reader.get(secrets, "kube-system", "osc")).metadata.name).toBe("osc");
    expect((await reader.list(secrets, "kube-system")).items).toHaveLength(1);
    const missing = await reader.get(secrets, "kube-system", "other").catch((e: unknown) => e);
    expect(isNotFound(missing)).toBe(true);
    await expect(reader.get(nodes, "", "n1")).rejects.toBeInstanceOf(NotCachedError);
  });
});
