// make test-long (`*.long.test.ts`): the informer against a 30 s API-server outage in real time, with
// the production backoff (200 ms doubling to 30 s, +50 % jitter). It means something only at that
// length: the retries reach the real cap and the first one after the outage can come up to 45 s after
// it began. make test runs the same scenario with the cap shortened tenfold (kube-client.test.ts).
import { afterAll, expect, test } from "bun:test";
import { realClock } from "../../src/clock/index.ts";
import type { Logger } from "../../src/log/types.ts";
import { InformerSet, secrets, type KubeObject } from "../../src/kube/index.ts";
import { startApiServer } from "../doubles/apiserver/index.ts";
import { eventually } from "../harness/eventually.ts";
import { adminKube } from "../harness/admin-kube.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const sim = await startApiServer({ bookmarkIntervalMs: 0 });
const kube = adminKube(sim);
const ac = new AbortController();
afterAll(async () => {
  ac.abort();
  kube.close();
  await sim.stop();
});

const v = (n: number) => Buffer.from(String(n)).toString("base64");
const setV = (n: number) => sim.store.patch("secrets", "kube-system", "outage", "merge", { data: { v: v(n) } });

test("the informer survives a 30 s outage of the API server with the production backoff and still sees the next change", async () => {
  sim.store.create("secrets", { metadata: { name: "outage", namespace: "kube-system" }, data: { v: v(0) } });
  const set = new InformerSet({ kube, clock: realClock, log: silent });
  const inf = set.informerFor<KubeObject>(secrets, "kube-system", { fieldSelector: "metadata.name=outage" });
  const seen: string[] = [];
  inf.addHandler({
    onAdd: (o) => seen.push(`add ${String((o["data"] as Record<string, string> | undefined)?.["v"] ?? "")}`),
    onUpdate: (_a, o) => seen.push(`update ${String((o["data"] as Record<string, string> | undefined)?.["v"] ?? "")}`),
  });
  set.start(ac.signal);
  await inf.waitForSync(ac.signal);
  await eventually("an open watch", () => sim.openWatches() > 0);
  await sim.faults.refuseConnections(30_000);
  setV(1);
  await eventually("two events", () => seen.length, { until: (n) => n === 2, timeoutMs: 90_000 });
  setV(2);
  await eventually("three events", () => seen.length, { until: (n) => n === 3, timeoutMs: 5_000 });
  expect(seen).toEqual([`add ${v(0)}`, `update ${v(1)}`, `update ${v(2)}`]);
  expect(sim.faults.reopenFailure).toBeUndefined();
}, 120_000);
