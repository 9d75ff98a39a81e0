import { afterAll, afterEach, beforeAll } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock/index.ts";
import { createEventRecorder, type EventRecorder } from "../../src/controllers/events.ts";
import { createHostFs, type HostFs } from "../../src/host/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { InformerSet } from "../../src/kube/informer-set.ts";
import type { RestConfig } from "../../src/kube/kubeconfig.ts";
import type { Logger } from "../../src/log/types.ts";
import { createDbusSystemd } from "../../src/systemd/dbus.ts";
import type { Systemd } from "../../src/systemd/types.ts";
import { type ApiServerSim, startApiServer } from "../doubles/apiserver/index.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { FakeSystemd, startSystemdDouble, type UnitSeed } from "../doubles/systemd/index.ts";
import { eventually } from "./eventually.ts";

/**
 * The set-up every controller integration suite shares: the API-server simulator (one per test file),
 * and per test a fresh Node, an admin client, an informer set, an event recorder, a temporary --root,
 * a FakeClock and systemd (the in-memory fake, or the D-Bus double behind the real D-Bus client).
 * The suite builds its controller from these pieces and hands it to `run`; everything is torn down
 * after each test.
 */

type Plain = Record<string, any>;

/** A logger that drops everything (controllers log a lot; the suites assert on state, not on lines). */
export const quietLog: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quietLog };

export interface ControllerSandboxOptions {
  /** Names: the Node is `<prefix>-node-<n>` on host `<prefix>-host-<n>` (n: the `id` the caller passes). */
  readonly prefix: string;
  /** The host name is the node name (as kubelet registers most nodes). */
  readonly hostIsNodeName?: boolean;
  /** Create the Node (default); with `nodeStatus` it is written through the status subresource. */
  readonly createNode?: boolean;
  readonly nodeStatus?: Plain;
  /** The controller's time; default a FakeClock at its own default start. */
  readonly clock?: FakeClock;
  /** How the sandbox's client connects (default: as the simulator's admin, by token). */
  readonly restConfig?: RestConfig;
  /** The client's rate limit (default: the client's own, 5 qps with bursts of 10, as client-go). */
  readonly kubeRate?: { readonly qps: number; readonly burst: number };
  /**
   * Units of the fake systemd; `overDbus` serves them from the D-Bus double through the real client;
   * `realClock` runs the fake's job timers on real time instead of the sandbox's FakeClock.
   */
  readonly systemd?: { readonly units?: UnitSeed[]; readonly overDbus?: boolean; readonly realClock?: boolean };
}

export interface ControllerSandbox {
  readonly sim: ApiServerSim;
  /** Counts the file's sandboxes: the suffix of the names, for other per-test objects. */
  readonly id: number;
  readonly nodeName: string;
  readonly hostName: string;
  /** The node identity controllers take as `node`. */
  readonly node: { readonly hostName: string; readonly nodeName: string };
  readonly clock: FakeClock;
  /** A client authenticated as the simulator's admin, or as `restConfig` says. */
  readonly kube: KubeClient;
  /** Informers on the real clock (watches and relists are real I/O). */
  readonly informers: InformerSet;
  /** Events as the agent records them: component gardener-node-agent, host `hostName`, time from `clock`. */
  readonly events: EventRecorder;
  readonly root: string;
  readonly host: HostFs;
  /** The in-memory systemd (also when `overDbus`: then it is not the one the controller talks to). */
  readonly fake: FakeSystemd;
  /** What the controller should talk to: `fake`, or the D-Bus client of the double. */
  readonly systemd: Systemd;
  /** Aborted on dispose. */
  readonly signal: AbortSignal;
  /** Starts the informers, waits for their sync, then starts `controller` (if any). */
  run(controller?: Startable): Promise<void>;
  /** Starts `controller` without the informers (for controllers that do not watch). */
  startController(controller: Startable): void;
  /** Creates the Node (labelled with the host name), with `status` through the status subresource. */
  createNode(status?: Plain): void;
  /** The Node as stored. */
  nodeObject(): Plain;
  /** Events about this Node in the order they were created, as "type reason action: message". */
  nodeEvents(): string[];
  /** Runs `fn` on dispose, after the controller and the client stopped (last registered first). */
  onDispose(fn: () => Promise<void> | void): void;
  dispose(): Promise<void>;
}

interface Startable {
  start(signal: AbortSignal): Promise<void>;
}

/** Starts one sandbox on `sim` (which it does not stop). `n` makes the names unique within the simulator. */
export async function startControllerSandbox(sim: ApiServerSim, n: number, opts: ControllerSandboxOptions): Promise<ControllerSandbox> {
  const nodeName = `${opts.prefix}-node-${n}`;
  const hostName = opts.hostIsNodeName === true ? nodeName : `${opts.prefix}-host-${n}`;
  const root = await mkdtemp(join(tmpdir(), `${opts.prefix}-`));
  const clock = opts.clock ?? new FakeClock();
  const units = opts.systemd?.units;
  const fake = new FakeSystemd({ ...(opts.systemd?.realClock === true ? {} : { clock }), ...(units !== undefined ? { units } : {}) });
  const disposers: Array<() => Promise<void> | void> = [];
  let systemd: Systemd = fake;
  if (opts.systemd?.overDbus === true) {
    const double = await startSystemdDouble({ clock, ...(units !== undefined ? { units } : {}) });
    const dbus = await createDbusSystemd({ address: double.address, log: quietLog });
    systemd = dbus;
    disposers.push(async () => {
      dbus.close();
      await double.stop();
    });
  }
  const kube = new KubeClient({
    config: opts.restConfig ?? { server: sim.url, caPem: sim.caPem, credentials: { kind: "token", token: sim.adminToken } },
    ...(opts.kubeRate !== undefined ? { qps: opts.kubeRate.qps, burst: opts.kubeRate.burst } : {}),
  });
  const informers = new InformerSet({ kube, clock: realClock, log: quietLog });
  const events = createEventRecorder({ kube, clock, log: quietLog, component: "gardener-node-agent", host: hostName });
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let disposed = false;

  const sandbox: ControllerSandbox = {
    sim,
    id: n,
    nodeName,
    hostName,
    node: { hostName, nodeName },
    clock,
    kube,
    informers,
    events,
    root,
    host: createHostFs(root),
    fake,
    systemd,
    signal: stop.signal,
    async run(controller) {
      informers.start(stop.signal);
      await informers.waitForSync(stop.signal);
      if (controller !== undefined) sandbox.startController(controller);
    },
    startController(controller) {
      running = controller.start(stop.signal);
    },
    createNode(status) {
      sim.store.create("nodes", {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: nodeName, labels: { "kubernetes.io/hostname": hostName } },
      });
      if (status === undefined) return;
      const node = sim.store.get("nodes", "", nodeName) as Plain;
      node["status"] = status;
      sim.store.update("nodes", node, { subresource: "status" });
    },
    nodeObject: () => sim.store.get("nodes", "", nodeName) as Plain,
    nodeEvents: () =>
      (sim.store.list("events", { namespace: "default" }) as Plain[])
        .filter((e) => e["involvedObject"]?.name === nodeName)
        // Creation order: names carry the (fake, often equal) time plus a random suffix.
        .sort((x, y) => Number(x["metadata"]["resourceVersion"]) - Number(y["metadata"]["resourceVersion"]))
        .map((e) => `${e["type"]} ${e["reason"]} ${e["action"]}: ${e["message"]}`),
    onDispose: (fn) => disposers.push(fn),
    async dispose() {
      if (disposed) return;
      disposed = true;
      stop.abort();
      await running;
      await informers.stopped();
      kube.close();
      for (const fn of disposers.splice(0).reverse()) await fn();
      await rm(root, { recursive: true, force: true });
    },
  };
  if (opts.createNode !== false) sandbox.createNode(opts.nodeStatus);
  return sandbox;
}

export interface ControllerSandboxes {
  /** The file's simulator (started before the first test). */
  readonly sim: ApiServerSim;
  /** A fresh sandbox on the file's simulator, disposed after the current test. */
  start(opts: ControllerSandboxOptions): Promise<ControllerSandbox>;
  /** Runs `fn` after the current test, before the sandboxes are disposed. */
  afterTest(fn: () => Promise<void> | void): void;
}

/**
 * Call at a test file's top level: starts the simulator before the file's tests and stops it after;
 * after each test clears the simulator's faults and disposes what the test started (last first).
 */
export function useControllerSandboxes(): ControllerSandboxes {
  let sim: ApiServerSim | undefined;
  let n = 0;
  const cleanups: Array<() => Promise<void> | void> = [];
  beforeAll(async () => {
    sim = await startApiServer();
  });
  afterAll(async () => {
    await sim?.stop();
  });
  afterEach(async () => {
    await sim?.faults.clear();
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const env: ControllerSandboxes = {
    get sim() {
      if (sim === undefined) throw new Error("the simulator starts in beforeAll: use env.sim inside tests");
      return sim;
    },
    async start(opts) {
      const sandbox = await startControllerSandbox(env.sim, ++n, opts);
      cleanups.push(() => sandbox.dispose());
      return sandbox;
    },
    afterTest: (fn) => cleanups.push(fn),
  };
  return env;
}

/** What the suites look at in a controller's work queue. */
interface QueueCounts {
  len(): number;
  processingLen(): number;
  delayedLen(): number;
}

/**
 * Waits until a controller's queue has nothing queued and nothing in flight (with `delayed`, nothing
 * scheduled for later either); the failure shows the counts.
 */
export async function waitForIdleQueue(
  queue: QueueCounts,
  opts: { readonly delayed?: boolean; readonly timeoutMs?: number } = {},
): Promise<void> {
  const counts = () => ({
    queued: queue.len(),
    processing: queue.processingLen(),
    delayed: opts.delayed === true ? queue.delayedLen() : 0,
  });
  await eventually("the controller to go idle", counts, {
    until: (c) => c.queued === 0 && c.processing === 0 && c.delayed === 0,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  });
}
