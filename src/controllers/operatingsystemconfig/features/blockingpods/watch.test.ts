import { afterEach, describe, expect, test } from "bun:test";
import { FakeClock } from "../../../../../test/doubles/fake-clock.ts";
import { eventually } from "../../../../../test/harness/eventually.ts";
import type { Kube, KubeList, KubeObject, WatchEvent } from "../../../../kube/index.ts";
import type { Logger } from "../../../../log/index.ts";
import type { EventRecorder } from "../../../events.ts";
import { BlockingPodsWatch } from "./watch.ts";

type ListOptions = NonNullable<Parameters<Kube["list"]>[2]>;
type WatchOptions = NonNullable<Parameters<Kube["watch"]>[2]>;

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** Records every list and watch; lists answer `pods`, watches deliver what the test pushes until aborted. */
class RecordingKube implements Partial<Kube> {
  readonly lists: ListOptions[] = [];
  readonly watches: { opts: WatchOptions; push(e: WatchEvent<KubeObject>): void }[] = [];
  pods: KubeObject[] = [];
  async list<T extends KubeObject>(_r: unknown, _ns: string, opts: ListOptions = {}): Promise<KubeList<T>> {
    this.lists.push(opts);
    return { metadata: { resourceVersion: "1" }, items: [...this.pods] as T[] };
  }
  watch<T extends KubeObject>(_r: unknown, _ns: string, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    const queue: WatchEvent<KubeObject>[] = [];
    let wake: (() => void) | undefined;
    this.watches.push({ opts, push: (e) => (queue.push(e), wake?.()) });
    return (async function* () {
      for (;;) {
        while (queue.length === 0) {
          if (opts.signal?.aborted) return;
          await new Promise<void>((r) => {
            wake = r;
            opts.signal?.addEventListener("abort", () => r(), { once: true });
          });
        }
        yield queue.shift() as WatchEvent<T>;
      }
    })();
  }
  get open(): number {
    return this.watches.filter((w) => w.opts.signal?.aborted !== true).length;
  }
}

const node = (selector?: string): KubeObject => ({
  metadata: { name: "n1", annotations: selector === undefined ? {} : { "node-agent.gardener.cloud/blocking-pods": selector } },
});
const pod = (name: string): KubeObject => ({ metadata: { name, namespace: "data", resourceVersion: "2" } });

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

function setup() {
  const kube = new RecordingKube();
  const notes: string[] = [];
  const events: EventRecorder = { event: async (_o, type, reason, _a, note) => void notes.push(`${type} ${reason}: ${note}`) };
  const stop = new AbortController();
  stops.push(stop);
  const watch = new BlockingPodsWatch({
    kube: kube as unknown as Kube,
    clock: new FakeClock(),
    log: silent,
    events,
    nodeName: "n1",
    signal: stop.signal,
  });
  let wakes = 0;
  watch.attach({ add: () => wakes++ }, { subscribe: () => () => {} }, { namespace: "kube-system", name: "osc" });
  return { kube, notes, watch, wakes: () => wakes };
}

const openWatches = (kube: RecordingKube, n: number) => eventually(`${n} open pod watches`, () => (kube.open === n ? true : undefined));

describe("BlockingPodsWatch", () => {
  test("lists and watches only this node's running pods, and only while the annotation is set", async () => {
    const { kube, watch } = setup();
    watch.follow(node());
    expect(kube.lists).toEqual([]);

    watch.follow(node("app=db"));
    expect(await watch.matching("app=db", AbortSignal.timeout(5_000))).toEqual([]);
    expect(kube.lists.map((l) => [l.fieldSelector, l.labelSelector])).toEqual([["spec.nodeName=n1,status.phase=Running", "app=db"]]);
    await openWatches(kube, 1);

    // A new selector: a new watch, the old one gone.
    watch.follow(node("app=web"));
    await watch.matching("app=web", AbortSignal.timeout(5_000));
    expect(kube.lists.at(-1)?.labelSelector).toBe("app=web");
    await eventually("the new watch", () => (kube.watches.length === 2 ? true : undefined));
    expect(kube.watches[0]?.opts.labelSelector).toBe("app=db");
    expect(kube.watches[0]?.opts.signal?.aborted).toBe(true);
    await openWatches(kube, 1);

    watch.follow(node());
    await openWatches(kube, 0);
    expect(watch.selector).toBeUndefined();
  });

  test("a pod event wakes the OSC Secret only while a disruptive apply waits", async () => {
    const { kube, watch, wakes } = setup();
    kube.pods = [pod("db-0")];
    watch.follow(node("app=db"));
    expect((await watch.matching("app=db", AbortSignal.timeout(5_000))).map((p) => p.metadata.name)).toEqual(["db-0"]);
    await openWatches(kube, 1);
    const stream = kube.watches[0];
    stream?.push({ type: "ADDED", object: pod("db-1") });
    await eventually("db-1 in the cache", async () =>
      (await watch.matching("app=db", AbortSignal.timeout(5_000))).length === 2 ? true : undefined,
    );
    expect(wakes()).toBe(0);

    watch.waiting(true);
    stream?.push({ type: "DELETED", object: pod("db-0") });
    await eventually("a wake", () => (wakes() === 1 ? true : undefined));
    expect((await watch.matching("app=db", AbortSignal.timeout(5_000))).map((p) => p.metadata.name)).toEqual(["db-1"]);
  });

  test("an invalid selector: one Warning per value, no watch", async () => {
    const { kube, notes, watch } = setup();
    watch.follow(node("app in (db"));
    watch.follow(node("app in (db"));
    expect(kube.lists).toEqual([]);
    expect(notes).toEqual([
      "Warning InvalidBlockingPodsSelector: Node annotation node-agent.gardener.cloud/blocking-pods is not a valid label selector (parentheses do not match); it is ignored",
    ]);
  });
});
