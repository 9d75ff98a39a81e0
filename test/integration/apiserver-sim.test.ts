import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startApiServer } from "../doubles/apiserver/index.ts";
import type { ApiServerSim } from "../doubles/apiserver/index.ts";
import { SimClient } from "../doubles/apiserver/test-client.ts";
import type { WatchStream } from "../doubles/apiserver/test-client.ts";

let sim: ApiServerSim;
let admin: SimClient;
const watches: WatchStream[] = [];

beforeAll(async () => {
  sim = await startApiServer({ watchHistory: 50, bookmarkIntervalMs: 0, extraSans: ["10.0.2.100"] });
  admin = new SimClient(sim.url, sim.caPem, { token: sim.adminToken });
});
afterEach(async () => {
  for (const w of watches.splice(0)) w.close();
  await sim.faults.clear();
});
afterAll(async () => {
  await sim.stop();
});

async function watch(path: string, client = admin): Promise<WatchStream> {
  const w = await client.watch(path);
  watches.push(w);
  return w;
}

const SECRETS = "/api/v1/namespaces/kube-system/secrets";
const LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
const meta = (b: unknown) => (b as { metadata: Record<string, unknown> }).metadata;

describe("apiserver simulator CRUD", () => {
  test("creates, reads, lists and deletes a secret with real Status bodies", async () => {
    const created = await admin.call("POST", SECRETS, { body: { metadata: { name: "crud-a" }, data: { k: "dg==" } } });
    expect(created.status).toBe(201);
    expect(meta(created.body)["uid"]).toBeString();
    expect(meta(created.body)["creationTimestamp"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect((created.body as { type: string }).type).toBe("Opaque");

    const again = await admin.call("POST", SECRETS, { body: { metadata: { name: "crud-a" } } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: 'secrets "crud-a" already exists',
      reason: "AlreadyExists", details: { name: "crud-a", kind: "secrets" }, code: 409,
    });

    const list = await admin.call("GET", `${SECRETS}?fieldSelector=metadata.name%3Dcrud-a`);
    const lb = list.body as { kind: string; metadata: { resourceVersion: string }; items: unknown[] };
    expect(lb.kind).toBe("SecretList");
    expect(lb.items).toHaveLength(1);
    expect(Number(lb.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(meta(created.body)["resourceVersion"]));

    const del = await admin.call("DELETE", `${SECRETS}/crud-a`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({
      kind: "Status", apiVersion: "v1", metadata: {}, status: "Success",
      details: { name: "crud-a", kind: "secrets", uid: meta(created.body)["uid"] },
    });
    const gone = await admin.call("GET", `${SECRETS}/crud-a`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({
      kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: 'secrets "crud-a" not found',
      reason: "NotFound", details: { name: "crud-a", kind: "secrets" }, code: 404,
    });
  });

  test("names a group in NotFound of grouped resources", async () => {
    const r = await admin.call("GET", `${LEASES}/nope`);
    expect(r.body).toMatchObject({ message: 'leases.coordination.k8s.io "nope" not found', details: { name: "nope", group: "coordination.k8s.io", kind: "leases" } });
  });

  test("fills in generateName and rejects a missing name with 422 naming the Kind", async () => {
    const g = await admin.call("POST", SECRETS, { body: { metadata: { generateName: "gen-" } } });
    expect(String(meta(g.body)["name"])).toMatch(/^gen-[a-z0-9]{5}$/);
    const bad = await admin.call("POST", SECRETS, { body: { metadata: {} } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ reason: "Invalid", details: { kind: "Secret" }, message: 'Secret "" is invalid: metadata.name: Required value: name or generateName is required' });
  });

  test("rejects a body namespace that differs from the URL with 400", async () => {
    const r = await admin.call("POST", SECRETS, { body: { metadata: { name: "x", namespace: "default" } } });
    expect(r.status).toBe(400);
  });

  test("answers a stale update with 409 Conflict and accepts an update without resourceVersion", async () => {
    const c = await admin.call("POST", SECRETS, { body: { metadata: { name: "upd" } } });
    const rv = meta(c.body)["resourceVersion"];
    const u1 = await admin.call("PUT", `${SECRETS}/upd`, { body: { metadata: { name: "upd", resourceVersion: rv, labels: { a: "1" } } } });
    expect(u1.status).toBe(200);
    const stale = await admin.call("PUT", `${SECRETS}/upd`, { body: { metadata: { name: "upd", resourceVersion: rv, labels: { a: "2" } } } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: "Conflict", details: { name: "upd", kind: "secrets" },
      message: 'Operation cannot be fulfilled on secrets "upd": the object has been modified; please apply your changes to the latest version and try again',
    });
    const unconditional = await admin.call("PUT", `${SECRETS}/upd`, { body: { metadata: { name: "upd", labels: { a: "3" } } } });
    expect(unconditional.status).toBe(200);
    expect(meta(unconditional.body)["labels"]).toEqual({ a: "3" });
  });

  test("keeps the resourceVersion on a no-op update and sends no watch event", async () => {
    const c = await admin.call("POST", SECRETS, { body: { metadata: { name: "noop", labels: { x: "y" } } } });
    const rv = meta(c.body)["resourceVersion"];
    const w = await watch(`${SECRETS}?watch=1&fieldSelector=metadata.name%3Dnoop&resourceVersion=${rv}`);
    const same = await admin.call("PUT", `${SECRETS}/noop`, { body: c.body });
    expect(meta(same.body)["resourceVersion"]).toBe(rv);
    const p = await admin.call("PATCH", `${SECRETS}/noop`, { body: { metadata: { labels: { x: "y" } } }, contentType: "application/merge-patch+json" });
    expect(meta(p.body)["resourceVersion"]).toBe(rv);
    await admin.call("PATCH", `${SECRETS}/noop`, { body: { metadata: { labels: { x: "z" } } }, contentType: "application/merge-patch+json" });
    const ev = await w.next();
    expect(ev.type).toBe("MODIFIED");
    expect(meta(ev.object)["labels"]).toEqual({ x: "z" });
  });
});
