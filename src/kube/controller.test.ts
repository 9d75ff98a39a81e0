import { afterEach, describe, expect, test } from "bun:test";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import type { LogFields, Logger } from "../log/index.ts";
import { Controller, type ControllerOptions, newController } from "./controller.ts";
import { enqueueObject } from "./handler.ts";
import { funcs } from "./predicate.ts";
import { RestartRequested, TerminalError, type ObjectKey, type Result } from "./reconcile.ts";
import { Channel } from "./source.ts";
import type { KubeObject } from "./types.ts";

interface Line {
  level: string;
  msg: string;
  fields: LogFields;
}
function recordingLogger(lines: Line[] = [], base: LogFields = {}): Logger {
  const at =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      lines.push({ level, msg, fields: { ...base, ...fields } });
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (f) => recordingLogger(lines, { ...base, ...f }),
  };
}

/** Poll the event loop until `cond` holds (bounded), without sleeping on wall time. */
async function until(cond: () => boolean, turns = 2000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise<void>((r) => setImmediate(r));
  }
  throw new Error("condition not reached");
}

const key = (name: string): ObjectKey => ({ namespace: "kube-system", name });

let stop: AbortController;
let running: Promise<void> | undefined;
afterEach(async () => {
  stop.abort();
  await running;
  running = undefined;
});

function setup(over: Partial<ControllerOptions> & Pick<ControllerOptions, "reconcile">) {
  stop = new AbortController();
  const clock = new FakeClock();
  const lines: Line[] = [];
  const c = new Controller({ name: "test", clock, log: recordingLogger(lines), ...over });
  running = c.start(stop.signal);
  return { c, clock, lines };
}

describe("Controller", () => {
  test("should reconcile an enqueued key once and forget it on success", async () => {
    const seen: ObjectKey[] = [];
    const { c } = setup({ reconcile: async (k) => (seen.push(k), {}) });
    c.add(key("a"));
    await until(() => c.stats().reconcileTotal.success === 1);
    expect(seen).toEqual([key("a")]);
    expect(c.queue.numRequeues("kube-system/a")).toBe(0);
    expect(c.stats().queueDepth).toBe(0);
  });

  test("should retry a failing reconcile after 5 ms, then 10 ms of clock time", async () => {
    let calls = 0;
    const { c, clock, lines } = setup({
      reconcile: async () => {
        calls++;
        if (calls < 3) throw new Error("boom");
        return {};
      },
    });
    c.add(key("a"));
    await until(() => calls === 1 && clock.pending() === 1);
    clock.step(4);
    await clock.settle();
    expect(calls).toBe(1);
    clock.step(1);
    await until(() => calls === 2 && clock.pending() === 1);
    clock.step(9);
    await clock.settle();
    expect(calls).toBe(2);
    clock.step(1);
    await until(() => c.stats().reconcileTotal.success === 1);
    expect(calls).toBe(3);
    expect(c.stats().reconcileErrors).toBe(2);
    expect(c.stats().retries).toBe(2);
    const errs = lines.filter((l) => l.msg === "Reconciler error");
    expect(errs).toHaveLength(2);
    expect(errs[0]?.fields["controller"]).toBe("test");
    expect((errs[0]!.fields["err"] as Error).message).toBe("boom");
  });

  test("should requeue after the returned delay and reset the backoff", async () => {
    let calls = 0;
    const { c, clock } = setup({
      reconcile: async (): Promise<Result> => {
        calls++;
        if (calls === 1) throw new Error("first fails");
        return { requeueAfterMs: 60_000 };
      },
    });
    c.add(key("a"));
    await until(() => clock.pending() === 1);
    clock.step(5);
    await until(() => calls === 2 && clock.pending() === 1);
    expect(c.queue.numRequeues("kube-system/a")).toBe(0);
    clock.step(59_999);
    await clock.settle();
    expect(calls).toBe(2);
    clock.step(1);
    await until(() => calls === 3);
    expect(c.stats().reconcileTotal.requeue_after).toBeGreaterThanOrEqual(1);
  });

  test("should report a terminal error (even wrapped) and not retry it", async () => {
    const terminal: Array<[ObjectKey, string]> = [];
    let calls = 0;
    const { c, clock } = setup({
      reconcile: async () => {
        calls++;
        throw new Error("step failed", { cause: new TerminalError("bad spec") });
      },
      onTerminal: (k, err) => terminal.push([k, err.message]),
    });
    c.add(key("a"));
    await until(() => terminal.length === 1);
    await clock.settle();
    expect(clock.pending()).toBe(0);
    expect(calls).toBe(1);
    expect(terminal).toEqual([[key("a"), "bad spec"]]);
    expect(c.stats().terminalErrors).toBe(1);
  });

  test("should stop taking work and call the hook when a restart is requested", async () => {
    const why: string[] = [];
    let calls = 0;
    const { c } = setup({
      reconcile: async (k) => {
        calls++;
        if (k.name === "restart") throw new RestartRequested("node appeared");
        return {};
      },
      onRestartRequested: (w) => why.push(w),
    });
    c.add(key("restart"));
    await running;
    expect(why).toEqual(["node appeared"]);
    c.add(key("later"));
    expect(calls).toBe(1);
    expect(c.queue.shuttingDown).toBe(true);
  });

  test("should never run one key on two workers, and run it again when re-added meanwhile", async () => {
    let active = 0;
    let maxActive = 0;
    let calls = 0;
    const releases: Array<() => void> = [];
    const { c } = setup({
      workers: 3,
      reconcile: async () => {
        calls++;
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise<void>((r) => releases.push(r));
        active--;
        return {};
      },
    });
    c.add(key("a"));
    await until(() => releases.length === 1);
    c.add(key("a"));
    c.add(key("a"));
    await new Promise<void>((r) => setImmediate(r));
    expect(calls).toBe(1);
    releases.shift()?.();
    await until(() => releases.length === 1 && calls === 2);
    releases.shift()?.();
    await until(() => c.stats().reconcileTotal.success === 2);
    expect(maxActive).toBe(1);
  });

  test("should process different keys in parallel up to the worker count", async () => {
    const releases: Array<() => void> = [];
    const { c } = setup({ workers: 2, reconcile: async () => (await new Promise<void>((r) => releases.push(r)), {}) });
    c.add(key("a"));
    c.add(key("b"));
    c.add(key("c"));
    await until(() => releases.length === 2);
    expect(c.stats().activeWorkers).toBe(2);
    for (const r of releases.splice(0)) r();
    await until(() => releases.length === 1);
    releases.shift()?.();
    await until(() => c.stats().reconcileTotal.success === 3);
  });

  test("should abort a reconcile at its timeout and retry it", async () => {
    let calls = 0;
    const reasons: unknown[] = [];
    const { c } = setup({
      timeoutMs: 5,
      reconcile: (_k, signal) =>
        new Promise<Result>((resolve, reject) => {
          calls++;
          if (calls > 1) return resolve({});
          signal.addEventListener("abort", () => (reasons.push(signal.reason), reject(signal.reason)));
        }),
    });
    c.add(key("a"));
    await until(() => c.stats().reconcileErrors === 1, 1_000_000);
    expect((reasons[0] as Error).name).toBe("TimeoutError");
    expect(c.queue.delayedLen()).toBe(1);
  });

  test("should give each reconcile its own reconcileID on the logger", async () => {
    const ids: unknown[] = [];
    const { c, lines } = setup({ reconcile: async () => ({}) });
    c.add(key("a"));
    await until(() => c.stats().reconcileTotal.success === 1);
    c.add(key("a"));
    await until(() => c.stats().reconcileTotal.success === 2);
    for (const l of lines) if (l.msg === "Reconciling") ids.push(l.fields["reconcileID"]);
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
    expect(lines.find((l) => l.msg === "Reconciling")?.fields["object"]).toBe("kube-system/a");
  });

  test("should abort in-flight reconciles on shutdown and resolve start", async () => {
    let aborted = false;
    const { c } = setup({
      reconcile: (_k, signal) =>
        new Promise<Result>((_resolve, reject) => {
          signal.addEventListener("abort", () => ((aborted = true), reject(signal.reason)));
        }),
    });
    c.add(key("a"));
    await until(() => c.stats().activeWorkers === 1);
    stop.abort();
    await running;
    expect(aborted).toBe(true);
    expect(c.queue.delayedLen()).toBe(0);
  });

  test("should map watched events through predicates and the handler to keys", async () => {
    const seen: string[] = [];
    const { c } = setup({ reconcile: async (k) => (seen.push(k.name), {}) });
    const ch = new Channel<KubeObject>();
    c.watch(ch, enqueueObject(), funcs({ generic: (o) => o.metadata.name !== "skip" }));
    ch.send({ metadata: { namespace: "kube-system", name: "skip" } });
    ch.send({ metadata: { namespace: "kube-system", name: "take" } });
    await until(() => seen.length === 1);
    expect(seen).toEqual(["take"]);
  });
});

describe("newController", () => {
  test("should enqueue the start keys once and accept options passed as undefined", async () => {
    stop = new AbortController();
    const clock = new FakeClock();
    const seen: ObjectKey[] = [];
    const c = newController({
      name: "test",
      reconcile: async (k) => (seen.push(k), {}),
      clock,
      log: recordingLogger(),
      workers: undefined,
      timeoutMs: undefined,
      onRestartRequested: undefined,
      startKeys: [key("a"), key("b")],
    });
    expect(c.stats().queueDepth).toBe(2);
    running = c.start(stop.signal);
    await until(() => c.stats().reconcileTotal.success === 2);
    expect(seen).toEqual([key("a"), key("b")]);
    expect(c.stats().workers).toBe(1);
  });
});
