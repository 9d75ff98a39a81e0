import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../test/doubles/fake-clock.ts";
import type { Controller, KubeObject, ObjectKey } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { createTokenResync, newTokenController, resyncPredicate, startKeys, workersFor } from "./watch.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const secret: KubeObject = { metadata: { namespace: "kube-system", name: "gardener-valitail" } };
const configs = [
  { secretName: "gardener-valitail", path: "/var/lib/valitail/auth-token" },
  { secretName: "shoot-access-cluster-admin", path: "/etc/kubernetes/admin-token" },
];

describe("resyncPredicate", () => {
  test("should pass generic events only", () => {
    expect(resyncPredicate.generic(secret)).toBe(true);
    expect(resyncPredicate.create(secret)).toBe(false);
    expect(resyncPredicate.update(secret, secret)).toBe(false);
    expect(resyncPredicate.delete(secret)).toBe(false);
  });
});

describe("startKeys", () => {
  test("should name every sync config's secret in kube-system, in config order", () => {
    expect(startKeys(configs)).toEqual([
      { namespace: "kube-system", name: "gardener-valitail" },
      { namespace: "kube-system", name: "shoot-access-cluster-admin" },
    ]);
  });
  test("should run one worker per sync config and at least one", () => {
    expect(workersFor(configs)).toBe(2);
    expect(workersFor([])).toBe(1);
  });
});

/** Runs a token controller whose reconcile only records keys; stops it afterwards. */
async function recordKeys(fn: (c: Controller, trigger: (k: ObjectKey) => void) => void | Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const resync = createTokenResync();
  const c = newTokenController({
    reconcile: async (k) => {
      seen.push(`${k.namespace}/${k.name}`);
      return {};
    },
    resync: resync.source,
    syncConfigs: configs,
    clock: new FakeClock(),
    log,
  });
  const stop = new AbortController();
  const running = c.start(stop.signal);
  await fn(c, resync.trigger);
  for (let i = 0; i < 50; i++) await new Promise<void>((r) => setImmediate(r));
  stop.abort();
  await running;
  return seen;
}

describe("newTokenController", () => {
  test("should reconcile every sync config once at start", async () => {
    expect((await recordKeys(() => {})).sort()).toEqual(["kube-system/gardener-valitail", "kube-system/shoot-access-cluster-admin"]);
  });
  test("should reconcile a secret again when the resync channel names it", async () => {
    const seen = await recordKeys(async (_c, trigger) => {
      for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
      trigger({ namespace: "kube-system", name: "gardener-valitail" });
    });
    expect(seen.filter((k) => k === "kube-system/gardener-valitail")).toHaveLength(2);
    expect(seen.filter((k) => k === "kube-system/shoot-access-cluster-admin")).toHaveLength(1);
  });
  test("should buffer triggers sent before the controller subscribes", async () => {
    const resync = createTokenResync();
    resync.trigger({ namespace: "kube-system", name: "early" });
    const got: string[] = [];
    resync.source.subscribe({ create() {}, update() {}, delete() {}, generic: (o) => got.push(o.metadata.name ?? "") });
    expect(got).toEqual(["early"]);
  });
});
