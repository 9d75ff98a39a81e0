import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { startApiServer } from "../doubles/apiserver/index.ts";
import type { ApiServerSim } from "../doubles/apiserver/index.ts";
import { SimClient } from "../doubles/apiserver/test-client.ts";
import type { WatchStream } from "../doubles/apiserver/test-client.ts";
import { eventually } from "../harness/eventually.ts";

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
/** base64 of an empty list of `kind` as kube's JSON encoder writes it (nil items, trailing newline). */
const blueprint = (kind: string, apiVersion: string) =>
  Buffer.from(`${JSON.stringify({ kind: `${kind}List`, apiVersion, metadata: {}, items: null })}\n`).toString("base64");
const LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
const NODES = "/api/v1/nodes";
const MERGE = "application/merge-patch+json";
const SMP = "application/strategic-merge-patch+json";
const JSONPATCH = "application/json-patch+json";
/** NodeSystemInfo as Go serialises its zero value: ten empty strings. */
const EMPTY_NODE_INFO = {
  machineID: "",
  systemUUID: "",
  bootID: "",
  kernelVersion: "",
  osImage: "",
  containerRuntimeVersion: "",
  kubeletVersion: "",
  kubeProxyVersion: "",
  operatingSystem: "",
  architecture: "",
};
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
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'secrets "crud-a" already exists',
      reason: "AlreadyExists",
      details: { name: "crud-a", kind: "secrets" },
      code: 409,
    });

    const list = await admin.call("GET", `${SECRETS}?fieldSelector=metadata.name%3Dcrud-a`);
    const lb = list.body as { kind: string; metadata: { resourceVersion: string }; items: unknown[] };
    expect(lb.kind).toBe("SecretList");
    expect(lb.items).toHaveLength(1);
    expect(Number(lb.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(meta(created.body)["resourceVersion"]));

    const del = await admin.call("DELETE", `${SECRETS}/crud-a`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: { name: "crud-a", kind: "secrets", uid: meta(created.body)["uid"] },
    });
    const gone = await admin.call("GET", `${SECRETS}/crud-a`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'secrets "crud-a" not found',
      reason: "NotFound",
      details: { name: "crud-a", kind: "secrets" },
      code: 404,
    });
  });

  test("names a group in NotFound of grouped resources", async () => {
    const r = await admin.call("GET", `${LEASES}/nope`);
    expect(r.body).toMatchObject({
      message: 'leases.coordination.k8s.io "nope" not found',
      details: { name: "nope", group: "coordination.k8s.io", kind: "leases" },
    });
  });

  test("fills in generateName and rejects a missing name with 422 naming the Kind", async () => {
    const g = await admin.call("POST", SECRETS, { body: { metadata: { generateName: "gen-" } } });
    expect(String(meta(g.body)["name"])).toMatch(/^gen-[a-z0-9]{5}$/);
    const bad = await admin.call("POST", SECRETS, { body: { metadata: {} } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({
      reason: "Invalid",
      details: { kind: "Secret" },
      message: 'Secret "" is invalid: metadata.name: Required value: name or generateName is required',
    });
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
    const stale = await admin.call("PUT", `${SECRETS}/upd`, {
      body: { metadata: { name: "upd", resourceVersion: rv, labels: { a: "2" } } },
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: "Conflict",
      details: { name: "upd", kind: "secrets" },
      message:
        'Operation cannot be fulfilled on secrets "upd": the object has been modified; please apply your changes to the latest version and try again',
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
    const p = await admin.call("PATCH", `${SECRETS}/noop`, {
      body: { metadata: { labels: { x: "y" } } },
      contentType: "application/merge-patch+json",
    });
    expect(meta(p.body)["resourceVersion"]).toBe(rv);
    await admin.call("PATCH", `${SECRETS}/noop`, {
      body: { metadata: { labels: { x: "z" } } },
      contentType: "application/merge-patch+json",
    });
    const ev = await w.next();
    expect(ev.type).toBe("MODIFIED");
    expect(meta(ev.object)["labels"]).toEqual({ x: "z" });
  });
});

describe("apiserver simulator watch", () => {
  test("replays existing objects as ADDED, then the initial-events-end BOOKMARK (WatchList defaults), then live events", async () => {
    await admin.call("POST", SECRETS, { body: { metadata: { name: "w-replay", labels: { set: "replay" } } } });
    const w = await watch(`${SECRETS}?watch=1&allowWatchBookmarks=true&labelSelector=set%3Dreplay`);
    const first = await w.next();
    expect(first.type).toBe("ADDED");
    expect(meta(first.object)["name"]).toBe("w-replay");
    const bm = await w.next();
    expect(bm.type).toBe("BOOKMARK");
    expect(bm.object).toEqual({
      kind: "Secret",
      apiVersion: "v1",
      metadata: {
        resourceVersion: String(sim.store.resourceVersion),
        creationTimestamp: null,
        annotations: { "k8s.io/initial-events-end": "true", "kubernetes.io/initial-events-list-blueprint": blueprint("Secret", "v1") },
      },
    });
    await admin.call("DELETE", `${SECRETS}/w-replay`);
    const del = await w.next();
    expect(del.type).toBe("DELETED");
    expect(Number(meta(del.object)["resourceVersion"])).toBe(sim.store.resourceVersion);
  });

  test("marks the end of initial events when sendInitialEvents is used", async () => {
    await admin.call("POST", SECRETS, { body: { metadata: { name: "w-initial" } } });
    const w = await watch(
      `${SECRETS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dw-initial`,
    );
    expect((await w.next()).type).toBe("ADDED");
    const bm = await w.next();
    expect(bm.type).toBe("BOOKMARK");
    expect(meta(bm.object)["annotations"]).toEqual({
      "k8s.io/initial-events-end": "true",
      "kubernetes.io/initial-events-list-blueprint": blueprint("Secret", "v1"),
    });
  });

  test.each([
    ["resourceVersion=0&allowWatchBookmarks=true", ["ADDED", "BOOKMARK:end"]],
    ["allowWatchBookmarks=1", ["ADDED", "BOOKMARK:end"]],
    ["", ["ADDED"]],
    ["allowWatchBookmarks=false", ["ADDED"]],
    ["sendInitialEvents=true&resourceVersionMatch=NotOlderThan", ["ADDED"]],
    ["sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", []],
    ["resourceVersion=0&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", []],
    ["resourceVersion=CURRENT&allowWatchBookmarks=true", []],
  ])(
    "a watch with %p starts with %p (bookmark end only for sendInitialEvents, given or defaulted, with bookmarks)",
    async (query, expected) => {
      const name = `w-dflt-${Bun.hash(query).toString(36)}`;
      await admin.call("POST", SECRETS, { body: { metadata: { name } } });
      const q = query.replace("CURRENT", String(sim.store.resourceVersion));
      const w = await watch(`${SECRETS}?watch=1&fieldSelector=metadata.name%3D${name}${q === "" ? "" : `&${q}`}`);
      // a marker written after the watch opened ends the initial part: whatever came before it is the replay
      await admin.call("PATCH", `${SECRETS}/${name}`, { body: { metadata: { labels: { marker: "1" } } }, contentType: MERGE });
      const seen: string[] = [];
      for (;;) {
        const ev = await w.next();
        if (ev.type === "MODIFIED") break;
        const end = ev.type === "BOOKMARK" && meta(ev.object)["annotations"] !== undefined;
        seen.push(end ? "BOOKMARK:end" : ev.type);
      }
      expect(seen).toEqual(expected);
    },
  );

  test("sends the bookmark as an empty object of the watched type, with the type's zero-value fields", async () => {
    const w = await watch(`${NODES}?watch=1&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dno-such-node`);
    const bm = await w.next();
    expect(bm).toEqual({
      type: "BOOKMARK",
      object: {
        kind: "Node",
        apiVersion: "v1",
        metadata: {
          resourceVersion: String(sim.store.resourceVersion),
          creationTimestamp: null,
          annotations: { "k8s.io/initial-events-end": "true", "kubernetes.io/initial-events-list-blueprint": blueprint("Node", "v1") },
        },
        spec: {},
        status: { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: EMPTY_NODE_INFO },
      },
    });
    const lw = await watch(`${LEASES}?watch=1&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dnone`);
    const lbm = (await lw.next()).object;
    expect(lbm["spec"]).toEqual({});
    expect(
      Buffer.from(
        String(
          meta(lbm)["annotations"] && (meta(lbm)["annotations"] as Record<string, string>)["kubernetes.io/initial-events-list-blueprint"],
        ),
        "base64",
      ).toString(),
    ).toBe('{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{},"items":null}\n');
  });

  test("rejects sendInitialEvents without resourceVersionMatch=NotOlderThan with 422", async () => {
    const r = await admin.call("GET", `${SECRETS}?watch=1&sendInitialEvents=false&allowWatchBookmarks=true`);
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({
      reason: "Invalid",
      details: { group: "meta.k8s.io", kind: "ListOptions" },
      message:
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    });
    const noMatch = await admin.call("GET", `${SECRETS}?watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan`);
    expect(noMatch.body).toMatchObject({
      message:
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    });
  });

  test("reports every invalid LIST option at once, sendInitialEvents included", async () => {
    const r = await admin.call("GET", `${SECRETS}?resourceVersionMatch=Bogus&sendInitialEvents=true`);
    expect(r.status).toBe(422);
    expect((r.body as { details: { causes: unknown[] } }).details.causes).toEqual([
      {
        reason: "FieldValueForbidden",
        message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        field: "resourceVersionMatch",
      },
      {
        reason: "FieldValueNotSupported",
        message: 'Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""',
        field: "resourceVersionMatch",
      },
      { reason: "FieldValueForbidden", message: "Forbidden: sendInitialEvents is forbidden for list", field: "sendInitialEvents" },
    ]);
    const exactZero = await admin.call("GET", `${SECRETS}?resourceVersion=0&resourceVersionMatch=Exact`);
    expect(exactZero.body).toMatchObject({
      message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`,
    });
  });

  test("resumes from a resourceVersion and delivers every later event in order", async () => {
    const c = await admin.call("POST", SECRETS, { body: { metadata: { name: "w-resume" } } });
    const rv = String(meta(c.body)["resourceVersion"]);
    await admin.call("PATCH", `${SECRETS}/w-resume`, {
      body: { metadata: { labels: { n: "1" } } },
      contentType: "application/merge-patch+json",
    });
    await admin.call("PATCH", `${SECRETS}/w-resume`, {
      body: { metadata: { labels: { n: "2" } } },
      contentType: "application/merge-patch+json",
    });
    const w = await watch(`${SECRETS}?watch=1&fieldSelector=metadata.name%3Dw-resume&resourceVersion=${rv}`);
    const e1 = await w.next();
    const e2 = await w.next();
    expect([e1.type, meta(e1.object)["labels"]]).toEqual(["MODIFIED", { n: "1" }]);
    expect([e2.type, meta(e2.object)["labels"]]).toEqual(["MODIFIED", { n: "2" }]);
  });

  test("answers an expired resourceVersion with 200 and a single ERROR 410 event, then ends", async () => {
    const c = await admin.call("POST", SECRETS, { body: { metadata: { name: "w-expired" } } });
    const rv = String(meta(c.body)["resourceVersion"]);
    await admin.call("PATCH", `${SECRETS}/w-expired`, {
      body: { metadata: { labels: { a: "b" } } },
      contentType: "application/merge-patch+json",
    });
    sim.compact();
    const w = await watch(`${SECRETS}?watch=1&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    const ev = await w.next();
    expect(ev.type).toBe("ERROR");
    expect(ev.object).toMatchObject({ kind: "Status", status: "Failure", reason: "Expired", code: 410 });
    expect(await w.waitEnd()).toBe(true);
  });

  test("answers an exact LIST at a compacted resourceVersion with 410 and reconstructs a retained one", async () => {
    const c = await admin.call("POST", SECRETS, { body: { metadata: { name: "l-exact", labels: { v: "1" } } } });
    const rv = String(meta(c.body)["resourceVersion"]);
    await admin.call("PATCH", `${SECRETS}/l-exact`, {
      body: { metadata: { labels: { v: "2" } } },
      contentType: "application/merge-patch+json",
    });
    const old = await admin.call(
      "GET",
      `${SECRETS}?fieldSelector=metadata.name%3Dl-exact&resourceVersion=${rv}&resourceVersionMatch=Exact`,
    );
    expect((old.body as { items: { metadata: { labels: unknown } }[] }).items[0]!.metadata.labels).toEqual({ v: "1" });
    sim.compact();
    const gone = await admin.call("GET", `${SECRETS}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ reason: "Expired", code: 410 });
  });

  test("pages a list with limit and continue at one consistent resourceVersion", async () => {
    for (const n of ["page-a", "page-b", "page-c"])
      sim.store.create("configmaps", { metadata: { name: n, namespace: "default", labels: { page: "x" } } });
    const base = "/api/v1/namespaces/default/configmaps?labelSelector=page%3Dx&limit=2";
    const p1 = (await admin.call("GET", base)).body as {
      metadata: { continue: string; remainingItemCount?: number; resourceVersion: string };
      items: { metadata: { name: string } }[];
    };
    expect(p1.items.map((i) => i.metadata.name)).toEqual(["page-a", "page-b"]);
    // a selected list's remaining count is unknown to the server: left unset (ListMeta), an unfiltered one has it
    expect(p1.metadata.remainingItemCount).toBeUndefined();
    const all = (await admin.call("GET", "/api/v1/namespaces/default/configmaps")).body as { items: unknown[] };
    const unfiltered = (await admin.call("GET", "/api/v1/namespaces/default/configmaps?limit=2")).body as {
      metadata: { remainingItemCount?: number };
    };
    expect(unfiltered.metadata.remainingItemCount).toBe(all.items.length - 2);
    sim.store.delete("configmaps", "default", "page-c");
    const p2 = (await admin.call("GET", `${base}&continue=${p1.metadata.continue}`)).body as {
      metadata: Record<string, unknown>;
      items: { metadata: { name: string } }[];
    };
    expect(p2.items.map((i) => i.metadata.name)).toEqual(["page-c"]);
    expect(p2.metadata["continue"]).toBeUndefined();
    sim.compact();
    const expiredPage = await admin.call("GET", `${base}&continue=${p1.metadata.continue}`);
    expect(expiredPage.status).toBe(410);
  });

  test("sends DELETED with the old labels when an object stops matching a label selector, ADDED when it matches again", async () => {
    await admin.call("POST", SECRETS, { body: { metadata: { name: "w-sel", labels: { role: "a" } } } });
    const w = await watch(`${SECRETS}?watch=1&labelSelector=role%20in%20(a)`);
    expect((await w.next()).type).toBe("ADDED");
    await admin.call("PATCH", `${SECRETS}/w-sel`, {
      body: { metadata: { labels: { role: "b" } } },
      contentType: "application/merge-patch+json",
    });
    const del = await w.next();
    expect(del.type).toBe("DELETED");
    expect(meta(del.object)["labels"]).toEqual({ role: "a" });
    expect(meta(del.object)["resourceVersion"]).toBe(String(sim.store.resourceVersion));
    await admin.call("PATCH", `${SECRETS}/w-sel`, {
      body: { metadata: { labels: { role: "a" } } },
      contentType: "application/merge-patch+json",
    });
    expect((await w.next()).type).toBe("ADDED");
  });

  test("forgets a watch the client closed", async () => {
    const w = await watch(`${SECRETS}?watch=1&resourceVersion=${sim.store.resourceVersion}`);
    expect(sim.openWatches()).toBe(1);
    w.close();
    await eventually("the watch to close", () => sim.openWatches(), { until: (n) => n === 0, timeoutMs: 5_000 });
    expect(sim.openWatches()).toBe(0);
  });

  test("waits for a future resourceVersion on list and watch, and ends the watch with ERROR 504 when it never comes", async () => {
    const next = sim.store.resourceVersion + 1;
    const listing = admin.call("GET", `${SECRETS}?resourceVersion=${next}`);
    const w = await watch(`${SECRETS}?watch=1&resourceVersion=${next}`);
    sim.store.create("secrets", { metadata: { name: "future-1", namespace: "kube-system" } });
    sim.store.create("secrets", { metadata: { name: "future-2", namespace: "kube-system" } });
    const listed = await listing;
    expect(listed.status).toBe(200);
    expect(Number(meta(listed.body)["resourceVersion"])).toBeGreaterThanOrEqual(next);
    const ev = await w.next();
    expect([ev.type, meta(ev.object)["name"]]).toEqual(["ADDED", "future-2"]);
    const far = await watch(`${SECRETS}?watch=1&resourceVersion=${sim.store.resourceVersion + 100}`);
    const err = await far.next(6000);
    expect(err.type).toBe("ERROR");
    expect(err.object).toMatchObject({ reason: "Timeout", code: 504, details: { causes: [{ reason: "ResourceVersionTooLarge" }] } });
    expect(await far.waitEnd()).toBe(true);
  });

  test("ends a watch after timeoutSeconds", async () => {
    const w = await watch(`${SECRETS}?watch=1&timeoutSeconds=1&resourceVersion=${sim.store.resourceVersion}`);
    expect(await w.waitEnd(5000)).toBe(true);
    expect(sim.openWatches()).toBe(0);
  });

  test("sends periodic bookmarks when an interval is configured", async () => {
    const own = await startApiServer({ bookmarkIntervalMs: 50 });
    try {
      const c = new SimClient(own.url, own.caPem, { token: own.adminToken });
      const w = await c.watch(`/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=${own.store.resourceVersion}`);
      expect((await w.next()).type).toBe("BOOKMARK");
      expect((await w.next()).type).toBe("BOOKMARK");
      w.close();
    } finally {
      await own.stop();
    }
  });
});

describe("apiserver simulator selectors", () => {
  test.each([
    ["tier=web", ["sel-web"]],
    ["tier==web", ["sel-web"]],
    ["tier!=web", ["sel-db", "sel-none"]],
    ["tier in (web,db)", ["sel-db", "sel-web"]],
    ["tier notin (web)", ["sel-db", "sel-none"]],
    ["tier", ["sel-db", "sel-web"]],
    ["!tier", ["sel-none"]],
    ["tier=web,zone=a", ["sel-web"]],
  ])("label selector %p selects %p", async (selector, names) => {
    if (sim.store.get("configmaps", "default", "sel-web") === undefined) {
      sim.store.create("configmaps", { metadata: { name: "sel-web", namespace: "default", labels: { tier: "web", zone: "a", sel: "x" } } });
      sim.store.create("configmaps", { metadata: { name: "sel-db", namespace: "default", labels: { tier: "db", sel: "x" } } });
      sim.store.create("configmaps", { metadata: { name: "sel-none", namespace: "default", labels: { sel: "x" } } });
    }
    const r = await admin.call("GET", `/api/v1/namespaces/default/configmaps?labelSelector=${encodeURIComponent(`sel=x,${selector}`)}`);
    expect((r.body as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name)).toEqual(names);
  });

  test("filters pods by spec.nodeName across namespaces and rejects unknown fields with 400", async () => {
    sim.store.create("pods", {
      metadata: { name: "p-on-a", namespace: "default" },
      spec: { nodeName: "node-a", containers: [{ name: "c", image: "i" }] },
    });
    sim.store.create("pods", {
      metadata: { name: "p-on-b", namespace: "kube-system" },
      spec: { nodeName: "node-b", containers: [{ name: "c", image: "i" }] },
    });
    const r = await admin.call("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a");
    expect((r.body as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name)).toEqual(["p-on-a"]);
    const neq = await admin.call("GET", "/api/v1/pods?fieldSelector=spec.nodeName!%3Dnode-a,metadata.namespace%3Dkube-system");
    expect((neq.body as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name)).toEqual(["p-on-b"]);
    const bad = await admin.call("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx");
    expect(bad.status).toBe(400);
  });

  test("a pod watch by node, phase and label sends ADDED when a pod starts running and DELETED when it stops", async () => {
    sim.store.create("pods", {
      metadata: { name: "w-db", namespace: "default", labels: { app: "db" } },
      spec: { nodeName: "node-w", containers: [{ name: "c", image: "i" }] },
    });
    sim.store.create("pods", {
      metadata: { name: "w-web", namespace: "default", labels: { app: "web" } },
      spec: { nodeName: "node-w", containers: [{ name: "c", image: "i" }] },
    });
    const fields = encodeURIComponent("spec.nodeName=node-w,status.phase=Running");
    const w = await watch(
      `/api/v1/pods?watch=1&fieldSelector=${fields}&labelSelector=${encodeURIComponent("app in (db)")}&resourceVersion=${sim.store.resourceVersion}`,
    );
    expect(w.status).toBe(200);
    sim.store.patch("pods", "default", "w-web", "merge", { status: { phase: "Running" } }, { subresource: "status" });
    sim.store.patch("pods", "default", "w-db", "merge", { status: { phase: "Running" } }, { subresource: "status" });
    const added = await w.next();
    expect([added.type, (added.object as { metadata: { name: string } }).metadata.name]).toEqual(["ADDED", "w-db"]);
    sim.store.patch("pods", "default", "w-db", "merge", { status: { phase: "Succeeded" } }, { subresource: "status" });
    const gone = await w.next();
    expect([gone.type, (gone.object as unknown as { status: { phase: string } }).status.phase]).toEqual(["DELETED", "Running"]);
  });
});

describe("apiserver simulator patch", () => {
  test("applies a strategic merge patch by merge key, with $patch: delete and null removal", async () => {
    sim.store.create("nodes", {
      metadata: { name: "smp-node", labels: { keep: "1", drop: "1" } },
      status: {
        conditions: [
          { type: "Ready", status: "False" },
          { type: "Custom", status: "True" },
        ],
        addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
      },
    });
    const patch = {
      metadata: { labels: { drop: null, added: "1" } },
      status: {
        conditions: [
          { type: "Ready", status: "True" },
          { type: "Custom", $patch: "delete" },
          { type: "New", status: "True" },
        ],
      },
    };
    const r = await admin.call("PATCH", `${NODES}/smp-node/status`, { body: patch, contentType: SMP });
    expect(r.status).toBe(200);
    const o = r.body as { metadata: { labels: unknown }; status: { conditions: unknown[]; addresses: unknown[] } };
    expect(o.metadata.labels).toEqual({ keep: "1", added: "1" });
    const untimed = { lastHeartbeatTime: null, lastTransitionTime: null };
    expect(o.status.conditions).toEqual([
      { type: "Ready", status: "True", ...untimed },
      { type: "New", status: "True", ...untimed },
    ]);
    expect(o.status.addresses).toEqual([{ type: "InternalIP", address: "10.0.0.1" }]);
  });

  test("merges ownerReferences by uid under strategic merge and replaces lists under merge patch", async () => {
    const ref = (uid: string) => ({ apiVersion: "v1", kind: "Node", name: uid, uid });
    sim.store.create("configmaps", { metadata: { name: "owners", namespace: "default", ownerReferences: [ref("u1")] } });
    const s = await admin.call("PATCH", "/api/v1/namespaces/default/configmaps/owners", {
      body: { metadata: { ownerReferences: [ref("u2")] } },
      contentType: SMP,
    });
    expect(meta(s.body)["ownerReferences"]).toEqual([ref("u1"), ref("u2")]);
    const m = await admin.call("PATCH", "/api/v1/namespaces/default/configmaps/owners", {
      body: { metadata: { ownerReferences: [ref("u3")] } },
      contentType: MERGE,
    });
    expect(meta(m.body)["ownerReferences"]).toEqual([ref("u3")]);
  });

  test("applies a JSON patch and answers a failing test op with 422 and a malformed one with 400", async () => {
    sim.store.create("configmaps", { metadata: { name: "jp", namespace: "default" }, data: { a: "1" } });
    const ok = await admin.call("PATCH", "/api/v1/namespaces/default/configmaps/jp", {
      body: [
        { op: "test", path: "/data/a", value: "1" },
        { op: "replace", path: "/data/a", value: "2" },
        { op: "add", path: "/data/b", value: "3" },
      ],
      contentType: JSONPATCH,
    });
    expect((ok.body as { data: unknown }).data).toEqual({ a: "2", b: "3" });
    const failed = await admin.call("PATCH", "/api/v1/namespaces/default/configmaps/jp", {
      body: [{ op: "test", path: "/data/a", value: "1" }],
      contentType: JSONPATCH,
    });
    expect(failed.status).toBe(422);
    expect(failed.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server rejected our request due to an error in our request",
      reason: "Invalid",
      details: {},
      code: 422,
    });
    const missing = await admin.call("PATCH", "/api/v1/namespaces/default/configmaps/jp", {
      body: [{ op: "remove", path: "/data/zzz" }],
      contentType: JSONPATCH,
    });
    expect(missing.status).toBe(422);
    const malformed = await admin.call("PATCH", "/api/v1/namespaces/default/configmaps/jp", { body: "{not json", contentType: JSONPATCH });
    expect(malformed.status).toBe(400);
  });

  test.each(["application/json", "text/plain", "application/json-patch+json+x"])(
    "answers a PATCH with Content-Type %p like go-restful: 415 with empty details",
    async (ct) => {
      sim.store.create("configmaps", { metadata: { name: `ct-${Bun.hash(ct).toString(36)}`, namespace: "default" } });
      const r = await admin.call("PATCH", `/api/v1/namespaces/default/configmaps/ct-${Bun.hash(ct).toString(36)}`, {
        body: { data: { a: "1" } },
        contentType: ct,
      });
      expect(r.status).toBe(415);
      expect(r.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "415: Unsupported Media Type",
        reason: "UnsupportedMediaType",
        details: {},
        code: 415,
      });
    },
  );

  test("treats a resourceVersion inside a patch as a precondition", async () => {
    sim.store.create("configmaps", { metadata: { name: "pre", namespace: "default" } });
    const r = await admin.call("PATCH", "/api/v1/namespaces/default/configmaps/pre", {
      body: { metadata: { resourceVersion: "1", labels: { a: "b" } } },
      contentType: MERGE,
    });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ reason: "Conflict" });
  });
});

describe("apiserver simulator type rules", () => {
  test("drops unknown fields with a warning, and rejects them with 400 under fieldValidation=Strict", async () => {
    const body = { metadata: { name: "unknown-fields" }, spec: { holderIdentity: "h", holdrIdentity: "typo" } };
    const warned = await admin.call("POST", LEASES, { body });
    expect(warned.status).toBe(201);
    expect((warned.body as { spec: unknown }).spec).toEqual({ holderIdentity: "h" });
    expect(warned.headers.get("warning")).toBe('299 - "unknown field \\"spec.holdrIdentity\\""');
    const strict = await admin.call("POST", `${LEASES}?fieldValidation=Strict`, {
      body: { ...body, metadata: { name: "unknown-strict" } },
    });
    expect(strict.status).toBe(400);
    expect(strict.body).toMatchObject({
      reason: "BadRequest",
      message: 'Lease in version "v1" cannot be handled as a Lease: strict decoding error: unknown field "spec.holdrIdentity"',
    });
  });

  test("adds the not-ready taint to a new Node", async () => {
    const r = await admin.call("POST", NODES, { body: { metadata: { name: "taint-node" } } });
    expect((r.body as { spec: unknown }).spec).toEqual({ taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }] });
  });

  test("serialises a Node without status with Go's zero NodeStatus, on create, get, list and watch", async () => {
    const w = await watch(`${NODES}?watch=1&resourceVersion=${sim.store.resourceVersion}&fieldSelector=metadata.name%3Dbare-node`);
    const r = await admin.call("POST", NODES, { body: { metadata: { name: "bare-node" } } });
    const zero = { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: EMPTY_NODE_INFO };
    expect(r.body).toMatchObject({ kind: "Node", apiVersion: "v1", status: zero });
    expect(Object.keys(r.body as object)).toEqual(["kind", "apiVersion", "metadata", "spec", "status"]);
    expect((await admin.call("GET", `${NODES}/bare-node`)).body).toEqual(r.body);
    const list = (await admin.call("GET", `${NODES}?fieldSelector=metadata.name%3Dbare-node`)).body as { items: Record<string, unknown>[] };
    expect(list.items[0]!["status"]).toEqual(zero);
    expect((await w.next()).object["status"]).toEqual(zero);
    const lease = await admin.call("POST", LEASES, { body: { metadata: { name: "bare-lease" } } });
    expect((lease.body as { spec: unknown }).spec).toEqual({});
  });

  test("keeps the resourceVersion when a Node is written back with its zero-value fields left out", async () => {
    const c = await admin.call("POST", NODES, { body: { metadata: { name: "noop-node" } } });
    const { status: _s, ...noStatus } = c.body as Record<string, unknown>;
    const u = await admin.call("PUT", `${NODES}/noop-node/status`, { body: { ...noStatus, status: { nodeInfo: {} } } });
    expect(meta(u.body)["resourceVersion"]).toBe(meta(c.body)["resourceVersion"]);
  });

  test("stores status and labels but not spec through nodes/status, and drops status sent to the main resource", async () => {
    sim.store.create("nodes", { metadata: { name: "status-node" }, spec: { podCIDR: "10.1.0.0/24" } });
    const s = await admin.call("PATCH", `${NODES}/status-node/status`, {
      body: {
        metadata: { labels: { l: "v" } },
        spec: { unschedulable: true },
        status: { conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: "2026-01-02T03:04:05.999Z" }] },
      },
      contentType: SMP,
    });
    const so = s.body as {
      metadata: { labels: unknown };
      spec: Record<string, unknown>;
      status: { conditions: { lastHeartbeatTime: string }[] };
    };
    expect(so.metadata.labels).toEqual({ l: "v" });
    expect(so.spec["unschedulable"]).toBeUndefined();
    expect(so.status.conditions[0]!.lastHeartbeatTime).toBe("2026-01-02T03:04:05Z");
    const m = await admin.call("PATCH", `${NODES}/status-node`, {
      body: { spec: { unschedulable: true }, status: { conditions: [] } },
      contentType: MERGE,
    });
    const mo = m.body as { spec: Record<string, unknown>; status: { conditions: unknown[] } };
    expect(mo.spec["unschedulable"]).toBe(true);
    expect(mo.status.conditions).toHaveLength(1);
  });

  test.each([
    ["2026-01-02T03:04:05.123456Z", 201],
    ["2026-01-02T03:04:05.123Z", 400],
    ["2026-01-02T03:04:05.123456789Z", 400],
    ["2026-01-02T03:04:05Z", 400],
  ])("accepts a Lease renewTime of %p with %p", async (renewTime, code) => {
    const name = `mt-${code}-${renewTime.length}`;
    const r = await admin.call("POST", LEASES, {
      body: { metadata: { name }, spec: { holderIdentity: "x", leaseDurationSeconds: 40, renewTime } },
    });
    expect(r.status).toBe(code);
    if (code === 400) expect(r.body).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
    else expect((r.body as { spec: { renewTime: string } }).spec.renewTime).toBe(renewTime);
  });

  test.each([
    ["default", 201],
    ["kube-system", 422],
  ])("creating an Event about a Node in namespace %p answers %p", async (ns, code) => {
    const r = await admin.call("POST", `/api/v1/namespaces/${ns}/events`, {
      body: {
        metadata: { name: `ev-${ns}` },
        involvedObject: { kind: "Node", name: "n1", apiVersion: "v1" },
        reason: "R",
        message: "m",
        type: "Normal",
        source: { component: "gardener-node-agent" },
      },
    });
    expect(r.status).toBe(code);
    if (code === 422)
      expect(r.body).toMatchObject({
        reason: "Invalid",
        details: { name: "ev-kube-system", kind: "Event" },
        message: 'Event "ev-kube-system" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace',
      });
  });

  test("gives a minimal core/v1 Event the zero values Go serialises, in field order", async () => {
    const r = await admin.call("POST", "/api/v1/namespaces/default/events", { body: { metadata: { name: "ev-min" } } });
    expect(r.status).toBe(201);
    const { metadata: _m, ...rest } = r.body as Record<string, unknown>;
    expect(rest).toEqual({
      kind: "Event",
      apiVersion: "v1",
      involvedObject: {},
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: null,
      reportingComponent: "",
      reportingInstance: "",
    });
    expect(Object.keys(rest)).toEqual([
      "kind",
      "apiVersion",
      "involvedObject",
      "source",
      "firstTimestamp",
      "lastTimestamp",
      "eventTime",
      "reportingComponent",
      "reportingInstance",
    ]);
    const view = await admin.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events/ev-min");
    const { metadata: _vm, ...viewRest } = view.body as Record<string, unknown>;
    expect(viewRest).toEqual({
      kind: "Event",
      apiVersion: "events.k8s.io/v1",
      regarding: {},
      deprecatedSource: {},
      deprecatedFirstTimestamp: null,
      deprecatedLastTimestamp: null,
      eventTime: null,
    });
  });

  test("names each failing field of a core/v1 Event with eventTime in validation order, the reporting component first", async () => {
    const r = await admin.call("POST", "/api/v1/namespaces/default/events", {
      body: {
        metadata: { name: "ev-new-style" },
        eventTime: "2026-01-02T03:04:05.000001Z",
        involvedObject: { kind: "Node", name: "n1" },
        type: "Normal",
      },
    });
    expect(r.status).toBe(422);
    const body = r.body as { message: string; details: { causes: unknown[] } };
    expect(body.details.causes).toEqual([
      { reason: "FieldValueRequired", message: "Required value", field: "reportingComponent" },
      { reason: "FieldValueInvalid", message: 'Invalid value: "": name part must be non-empty', field: "reportingComponent" },
      {
        reason: "FieldValueInvalid",
        field: "reportingComponent",
        message:
          "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      },
      { reason: "FieldValueRequired", message: "Required value", field: "reportingInstance" },
      { reason: "FieldValueRequired", message: "Required value", field: "action" },
      { reason: "FieldValueRequired", message: "Required value", field: "reason" },
    ]);
    expect(body.message).toStartWith(
      'Event "ev-new-style" is invalid: [reportingComponent: Required value, reportingComponent: Invalid value: "": name part must be non-empty, ',
    );
  });

  test("checks a core/v1 Event name only as a path segment, after the Event rules", async () => {
    const ok = await admin.call("POST", "/api/v1/namespaces/default/events", { body: { metadata: { name: "Node_A.17f0" } } });
    expect(ok.status).toBe(201);
    const bad = await admin.call("POST", "/api/v1/namespaces/default/events", { body: { metadata: { name: "a%b" } } });
    expect(bad.body).toMatchObject({
      code: 422,
      message: `Event "a%b" is invalid: metadata.name: Invalid value: "a%b": may not contain '%'`,
    });
  });

  test("stores events.k8s.io/v1 Events as core Events and shows each in its own shape", async () => {
    const v1 = "/apis/events.k8s.io/v1/namespaces/default/events";
    const body = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "ev-new" },
      eventTime: "2026-01-02T03:04:05.000001Z",
      regarding: { kind: "Node", name: "n1", apiVersion: "v1" },
      reason: "OSCApplied",
      action: "Reconcile",
      note: "done",
      type: "Normal",
      reportingController: "gardener.cloud/node-agent",
      reportingInstance: "n1",
    };
    const w = await watch(`/api/v1/namespaces/default/events?watch=1&resourceVersion=${sim.store.resourceVersion}`);
    const created = await admin.call("POST", v1, { body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: "events.k8s.io/v1", regarding: { name: "n1" }, note: "done" });
    const core = await admin.call("GET", "/api/v1/namespaces/default/events/ev-new");
    expect(core.body).toMatchObject({
      apiVersion: "v1",
      involvedObject: { name: "n1" },
      message: "done",
      reportingComponent: "gardener.cloud/node-agent",
    });
    expect((await w.next()).object).toMatchObject({ apiVersion: "v1", message: "done" });
    const { action: _a, ...noAction } = body;
    const bad = await admin.call("POST", v1, { body: { ...noAction, metadata: { name: "ev-bad" } } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({
      details: { group: "events.k8s.io", kind: "Event" },
      message: 'Event.events.k8s.io "ev-bad" is invalid: action: Required value',
    });
  });

  test("deletes a pod bound to a node gracefully and removes it with gracePeriodSeconds=0", async () => {
    sim.store.create("pods", {
      metadata: { name: "graceful", namespace: "default" },
      spec: { nodeName: "node-a", containers: [{ name: "c", image: "i" }] },
    });
    const first = await admin.call("DELETE", "/api/v1/namespaces/default/pods/graceful");
    expect(first.status).toBe(200);
    expect(meta(first.body)["deletionTimestamp"]).toBeString();
    expect(sim.store.get("pods", "default", "graceful")).toBeDefined();
    const forced = await admin.call("DELETE", "/api/v1/namespaces/default/pods/graceful", { body: { gracePeriodSeconds: 0 } });
    expect((forced.body as { kind: string }).kind).toBe("Pod");
    expect(sim.store.get("pods", "default", "graceful")).toBeUndefined();
  });
});

const MACHINE = "machine-1";
const AGENT_USER = `gardener.cloud:node-agent:machine:${MACHINE}`;

async function makeCsrPem(cn: string, org: string): Promise<{ csrPem: string; keyPem: string }> {
  const dir = await Bun.$`mktemp -d`.text();
  const keyFile = `${dir.trim()}/key.pem`;
  const csrPem =
    await Bun.$`openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ${keyFile} -subj ${`/O=${org}/CN=${cn}`}`
      .quiet()
      .text();
  const keyPem = await Bun.file(keyFile).text();
  await Bun.$`rm -rf ${dir.trim()}`;
  return { csrPem, keyPem };
}

const csrBody = (name: string, csrPem: string) => ({
  apiVersion: "certificates.k8s.io/v1",
  kind: "CertificateSigningRequest",
  metadata: { name },
  spec: {
    request: Buffer.from(csrPem).toString("base64"),
    signerName: "kubernetes.io/kube-apiserver-client",
    usages: ["digital signature", "key encipherment", "client auth"],
    expirationSeconds: 2592000,
  },
});
const CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

describe("apiserver simulator authentication", () => {
  test("rejects missing, unknown and malformed credentials with 401", async () => {
    const none = await admin.with({}).call("GET", NODES);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Unauthorized",
      reason: "Unauthorized",
      code: 401,
    });
    expect((await admin.with({ token: "nope" }).call("GET", NODES)).status).toBe(401);
  });

  test("maps a static token to its user and groups", async () => {
    sim.addToken("viewer-token", "viewer", ["some-group"]);
    const r = await admin.with({ token: "viewer-token" }).call("GET", NODES);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      message: 'nodes is forbidden: User "viewer" cannot list resource "nodes" in API group "" at the cluster scope',
      details: { kind: "nodes" },
    });
  });

  test("authenticates bootstrap tokens from their Secret and rejects a wrong or expired secret", async () => {
    const token = sim.addBootstrapToken("abcdef", "0123456789abcdef");
    expect((await admin.with({ token }).call("GET", "/version")).status).toBe(200);
    expect((await admin.with({ token: "abcdef.0123456789abcdee" }).call("GET", "/version")).status).toBe(401);
    const expiredToken = sim.addBootstrapToken("zzzzzz", "0123456789abcdef", { expiration: "2020-01-01T00:00:00Z" });
    expect((await admin.with({ token: expiredToken }).call("GET", "/version")).status).toBe(401);
  });

  test("takes user and groups of a client certificate from CN and O, and ignores certificates of another CA", async () => {
    const cert = await sim.issueClientCert("cert-admin", ["system:masters"]);
    expect((await admin.with({ cert }).call("GET", NODES)).status).toBe(200);
    expect(sim.requests.at(-1)).toMatchObject({
      user: "cert-admin",
      groups: ["system:masters", "system:authenticated"],
      verb: "list",
      resource: "nodes",
    });
    const dir = (await Bun.$`mktemp -d`.text()).trim();
    await Bun.$`openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ${dir}/k -out ${dir}/c -days 1 -subj /O=system:masters/CN=evil`.quiet();
    const certPem = await Bun.file(`${dir}/c`).text();
    const keyPem = await Bun.file(`${dir}/k`).text();
    await Bun.$`rm -rf ${dir}`;
    expect((await admin.with({ cert: { certPem, keyPem } }).call("GET", NODES)).status).toBe(401);
  });
});

describe("apiserver simulator CSR flow and node-agent authorizer", () => {
  let agent: SimClient;

  beforeAll(async () => {
    const token = sim.addBootstrapToken("boot01", "secretsecret0001");
    const boot = admin.with({ token });
    const { csrPem, keyPem } = await makeCsrPem(AGENT_USER, "gardener.cloud:node-agents");
    const created = await boot.call("POST", CSRS, { body: csrBody("node-agent-csr-test", csrPem) });
    expect(created.status).toBe(201);
    const spec = (created.body as { spec: Record<string, unknown> }).spec;
    expect(spec).toMatchObject({ username: "system:bootstrap:boot01", groups: ["system:bootstrappers", "system:authenticated"] });
    // bootstrap-token users have neither uid nor extra
    expect(spec["uid"]).toBeUndefined();
    expect(spec["extra"]).toBeUndefined();
    sim.approveCsr("node-agent-csr-test");
    const certPem = await sim.signCsr("node-agent-csr-test");
    const got = await boot.call("GET", `${CSRS}/node-agent-csr-test`);
    const status = (got.body as { status: { certificate: string; conditions: { type: string }[] } }).status;
    expect(Buffer.from(status.certificate, "base64").toString()).toBe(certPem);
    expect(status.conditions.map((c) => c.type)).toEqual(["Approved"]);
    agent = admin.with({ cert: { certPem, keyPem } });
    sim.setMachineNode(MACHINE, "agent-node");
    sim.allowSecret(MACHINE, "osc-secret");
    sim.store.create("nodes", { metadata: { name: "agent-node" } });
    sim.store.create("nodes", { metadata: { name: "other-node" } });
    sim.store.create("secrets", { metadata: { name: "osc-secret", namespace: "kube-system" } });
    sim.store.create("secrets", { metadata: { name: "private", namespace: "kube-system" } });
  });

  test("signs with the CSR subject and the requested validity", async () => {
    const csr = sim.store.get("certificatesigningrequests", "", "node-agent-csr-test")!;
    const pem = Buffer.from(String((csr["status"] as { certificate: string }).certificate), "base64").toString();
    const { X509Certificate } = await import("node:crypto");
    const c = new X509Certificate(pem);
    expect(c.subject).toBe(`O=gardener.cloud:node-agents\nCN=${AGENT_USER}`);
    const days = (Date.parse(c.validTo) - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(30);
  });

  test("lets a bootstrapper read registry-ca-bundle but no other configmap", async () => {
    const boot = admin.with({ token: "boot01.secretsecret0001" });
    sim.store.create("configmaps", { metadata: { name: "registry-ca-bundle", namespace: "kube-system" } });
    sim.store.create("configmaps", { metadata: { name: "other", namespace: "kube-system" } });
    expect((await boot.call("GET", "/api/v1/namespaces/kube-system/configmaps/registry-ca-bundle")).status).toBe(200);
    expect((await boot.call("GET", "/api/v1/namespaces/kube-system/configmaps/other")).status).toBe(403);
    expect((await boot.call("GET", NODES)).status).toBe(403);
  });

  test.each([
    ["GET", `${NODES}/agent-node`, 200],
    ["GET", `${NODES}/other-node`, 403],
    ["GET", NODES, 200],
    ["PATCH", `${NODES}/agent-node/status`, 200],
    ["DELETE", `${NODES}/agent-node`, 403],
    ["GET", `${SECRETS}/osc-secret`, 200],
    ["GET", `${SECRETS}/private`, 403],
    ["GET", `${SECRETS}?fieldSelector=metadata.name%3Dosc-secret`, 200],
    ["GET", SECRETS, 403],
    ["GET", `${LEASES}/gardener-node-agent-agent-node`, 404],
    ["GET", `${LEASES}/gardener-node-agent-other-node`, 403],
    ["GET", "/api/v1/pods", 403],
    ["GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dagent-node", 200],
    ["GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dagent-node,status.phase%3DRunning&labelSelector=app%3Ddb", 200],
    ["GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning&labelSelector=app%3Ddb", 403],
    ["GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dother-node", 403],
    ["GET", "/api/v1/namespaces/kube-system/configmaps/registry-ca-bundle", 403],
  ])("node agent %s %s → %p", async (method, path, code) => {
    const r = await agent.call(method, path, method === "PATCH" ? { body: { status: {} }, contentType: MERGE } : {});
    expect(r.status).toBe(code);
  });

  test("names the own node in the denial of another node", async () => {
    const r = await agent.call("GET", `${NODES}/other-node`);
    expect(r.body).toMatchObject({
      reason: "Forbidden",
      details: { name: "other-node", kind: "nodes" },
      message: `nodes "other-node" is forbidden: User "${AGENT_USER}" cannot get resource "nodes" in API group "" at the cluster scope: this gardener-node-agent can only access node "agent-node"`,
    });
  });

  test("refuses an unscoped secret watch with 403 before any stream, and streams a name-scoped one", async () => {
    const denied = await watch(`${SECRETS}?watch=1`, agent);
    expect(denied.status).toBe(403);
    expect(await denied.response.json()).toMatchObject({ kind: "Status", reason: "Forbidden", code: 403 });
    const ok = await watch(`${SECRETS}?watch=1&fieldSelector=metadata.name%3Dosc-secret`, agent);
    expect(ok.status).toBe(200);
    expect((await ok.next()).type).toBe("ADDED");
  });

  test("lets the agent create and update its own Lease but not patch it", async () => {
    const body = {
      metadata: { name: "gardener-node-agent-agent-node" },
      spec: { holderIdentity: "gardener-node-agent-agent-node", leaseDurationSeconds: 40, renewTime: "2026-01-02T03:04:05.123456Z" },
    };
    const c = await agent.call("POST", LEASES, { body });
    expect(c.status).toBe(201);
    const u = await agent.call("PUT", `${LEASES}/gardener-node-agent-agent-node`, {
      body: { ...body, metadata: { ...body.metadata, resourceVersion: meta(c.body)["resourceVersion"] } },
    });
    expect(u.status).toBe(200);
    expect((await agent.call("PATCH", `${LEASES}/gardener-node-agent-agent-node`, { body: {}, contentType: MERGE })).status).toBe(403);
  });

  test("lets the agent read only CSRs of its own user", async () => {
    expect((await agent.call("GET", `${CSRS}/node-agent-csr-test`)).status).toBe(403);
    const { csrPem } = await makeCsrPem(AGENT_USER, "gardener.cloud:node-agents");
    expect((await agent.call("POST", CSRS, { body: csrBody("renewal", csrPem) })).status).toBe(201);
    expect((await agent.call("GET", `${CSRS}/renewal`)).status).toBe(200);
  });

  test("records the requester's uid and extra in a CSR, never the body's", async () => {
    const { csrPem } = await makeCsrPem("uid-user", "o");
    const forged = { uid: "forged", username: "forged", groups: ["forged"], extra: { x: ["y"] } };
    sim.addToken("uid-token", "uid-user", ["system:masters"], "3b6a0f7e-uid");
    const byToken = await admin
      .with({ token: "uid-token" })
      .call("POST", CSRS, { body: { ...csrBody("uid-csr", csrPem), spec: { ...csrBody("uid-csr", csrPem).spec, ...forged } } });
    expect(byToken.status).toBe(201);
    const tokenSpec = (byToken.body as { spec: Record<string, unknown> }).spec;
    expect(tokenSpec).toMatchObject({ username: "uid-user", uid: "3b6a0f7e-uid", groups: ["system:masters", "system:authenticated"] });
    expect(tokenSpec["extra"]).toBeUndefined();
    // x509 users carry the certificate's credential ID (kube-apiserver ≥ 1.32) but no uid
    const byCert = await agent.call("POST", CSRS, { body: csrBody("cert-csr", csrPem) });
    const certSpec = (byCert.body as { spec: Record<string, unknown> }).spec;
    const { X509Certificate, createHash } = await import("node:crypto");
    const der = new X509Certificate(agent.creds.cert!.certPem).raw;
    expect(certSpec["uid"]).toBeUndefined();
    expect(certSpec["extra"]).toEqual({
      "authentication.kubernetes.io/credential-id": [`X509SHA256=${createHash("sha256").update(der).digest("hex")}`],
    });
  });

  test("fills in the uid of a token user, whose token-file line always has one, in a created and an approved CSR", async () => {
    const { csrPem } = await makeCsrPem("token-uid", "o");
    const uidOf = (r: { body: unknown }) => (r.body as { spec: Record<string, unknown> }).spec["uid"];
    // the admin token and a token added without a uid, as kube-apiserver's token file needs one per line
    sim.addToken("no-uid-given", "csr-maker", ["system:masters"]);
    for (const [who, client] of [
      ["admin", admin],
      ["csr-maker", admin.with({ token: "no-uid-given" })],
    ] as const) {
      const created = await client.call("POST", CSRS, { body: csrBody(`by-${who}`, csrPem) });
      expect(created.status).toBe(201);
      const uid = uidOf(created);
      expect(uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const approved = { type: "Approved", status: "True", reason: "AutoApproved", message: "ok" };
      const body = { ...(created.body as Record<string, unknown>), status: { conditions: [approved] } };
      const r = await client.call("PUT", `${CSRS}/by-${who}/approval`, { body });
      expect(r.status).toBe(200);
      expect(uidOf(r)).toBe(uid);
    }
    // an empty uid column gives none
    sim.addToken("empty-uid", "no-uid", ["system:masters"], "");
    const none = await admin.with({ token: "empty-uid" }).call("POST", CSRS, { body: csrBody("by-no-uid", csrPem) });
    expect(uidOf(none)).toBeUndefined();
  });

  test("stamps approval conditions written without times through the approval subresource", async () => {
    const { csrPem } = await makeCsrPem("stamp", "o");
    const c = await admin.call("POST", CSRS, { body: csrBody("to-stamp", csrPem) });
    const approved = { type: "Approved", status: "True", reason: "AutoApproved", message: "ok" };
    const r = await admin.call("PUT", `${CSRS}/to-stamp/approval`, { body: { ...(c.body as object), status: { conditions: [approved] } } });
    expect(r.status).toBe(200);
    const [cond] = (r.body as { status: { conditions: Record<string, unknown>[] } }).status.conditions;
    expect(Object.keys(cond!)).toEqual(["type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime"]);
    expect(cond!["lastUpdateTime"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(cond!["lastTransitionTime"]).toBe(cond!["lastUpdateTime"]);
  });

  test("denies node, lease and pod access while the own Node does not exist", async () => {
    sim.setMachineNode("machine-2", "missing-node");
    const cert = await sim.issueClientCert("gardener.cloud:node-agent:machine:machine-2", ["gardener.cloud:node-agents"]);
    const c = admin.with({ cert });
    expect((await c.call("GET", NODES)).status).toBe(200);
    const r = await c.call("GET", `${NODES}/missing-node`);
    expect(r.status).toBe(403);
    expect((r.body as { message: string }).message).toEndWith('no node for "machine-2" found');
  });

  test("denies a CSR and rejects signing an unapproved one", async () => {
    const { csrPem } = await makeCsrPem("x", "y");
    sim.store.create("certificatesigningrequests", csrBody("to-deny", csrPem));
    expect(sim.signCsr("to-deny")).rejects.toThrow("not approved");
    const denied = sim.denyCsr("to-deny");
    expect((denied["status"] as { conditions: { type: string }[] }).conditions.map((c) => c.type)).toEqual(["Denied"]);
  });
});

describe("apiserver simulator faults", () => {
  test("answers the next matching requests with 429 and Retry-After, then normally", async () => {
    sim.faults.failNext(2, { verb: "list", resource: "nodes", retryAfterSeconds: 3 });
    expect((await admin.call("GET", `${NODES}/taint-node`)).status).toBe(200);
    const r = await admin.call("GET", NODES);
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("3");
    expect(r.body).toMatchObject({ kind: "Status", reason: "TooManyRequests", code: 429, details: { retryAfterSeconds: 3 } });
    expect((await admin.call("GET", NODES)).status).toBe(429);
    expect((await admin.call("GET", NODES)).status).toBe(200);
  });

  test.each([
    [500, "InternalError"],
    [503, "ServiceUnavailable"],
    [504, "Timeout"],
  ])("injects a %p server error", async (status, reason) => {
    sim.faults.failNext(1, { status, path: "/api/v1/nodes" });
    const r = await admin.call("GET", NODES);
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ kind: "Status", status: "Failure", reason, code: status });
  });

  describe("hung requests", () => {
    const lease = (name: string, holder: string) => ({
      metadata: { name, namespace: "kube-system" },
      spec: { holderIdentity: holder },
    });
    const holderOf = (name: string) =>
      (sim.store.get("leases", "kube-system", name) as { spec: { holderIdentity: string } }).spec.holderIdentity;

    test("holds a matching request without effect until the client gives up, then serves the next one", async () => {
      const stored = sim.store.create("leases", lease("hang-a", "before")) as { metadata: Record<string, unknown> };
      sim.faults.hangNext(1, { verb: "update", resource: "leases" });
      const giveUp = new AbortController();
      const body = { ...lease("hang-a", "hung"), metadata: stored.metadata };
      const hung = admin.call("PUT", `${LEASES}/hang-a`, { body, signal: giveUp.signal }).catch((e: unknown) => e);
      await eventually("the PUT to hang", () => sim.faults.held, { until: (n) => n === 1, timeoutMs: 5_000 });
      expect((await admin.call("GET", `${LEASES}/hang-a`)).status).toBe(200); // other requests pass
      giveUp.abort();
      expect(await hung).toMatchObject({ name: "AbortError" });
      await eventually("the hang to end with the client", () => sim.faults.held, { until: (n) => n === 0, timeoutMs: 5_000 });
      expect(holderOf("hang-a")).toBe("before");
      const next = await admin.call("PUT", `${LEASES}/hang-a`, { body: { ...body, spec: { holderIdentity: "after" } } });
      expect(next.status).toBe(200);
      expect(holderOf("hang-a")).toBe("after");
    });

    test("answers 504 Timeout without effect after `ms`, or when the faults are cleared", async () => {
      sim.faults.hangNext(1, { verb: "create", resource: "leases", ms: 100 });
      sim.faults.hangNext(1, { verb: "create", resource: "leases" });
      const timedOut = await admin.call("POST", LEASES, { body: lease("hang-b", "x") });
      expect(timedOut.status).toBe(504);
      expect(timedOut.body).toMatchObject({ kind: "Status", reason: "Timeout", code: 504 });
      expect(sim.requests.at(-1)!.durationMs).toBeGreaterThanOrEqual(100);
      // no `ms`: the second one hangs until clear()
      const cleared = admin.call("POST", LEASES, { body: lease("hang-b", "y") });
      await eventually("the second POST to hang", () => sim.faults.held, { until: (n) => n === 1, timeoutMs: 5_000 });
      await sim.faults.clear();
      expect((await cleared).body).toMatchObject({ kind: "Status", reason: "Timeout", code: 504 });
      expect(sim.store.get("leases", "kube-system", "hang-b")).toBeUndefined();
      expect((await admin.call("POST", LEASES, { body: lease("hang-b", "z") })).status).toBe(201);
    });
  });

  test("adds latency to matching requests", async () => {
    sim.faults.setLatency(150, { resource: "nodes" });
    await admin.call("GET", NODES);
    expect(sim.requests.at(-1)!.durationMs).toBeGreaterThanOrEqual(150);
  });

  test("holds matching requests until released, and only those", async () => {
    const release = sim.faults.hold({ verb: "create", resource: "configmaps" });
    let answered = false;
    const held = admin
      .call("POST", "/api/v1/namespaces/default/configmaps", { body: { metadata: { name: "held" } } })
      .then((r) => ((answered = true), r));
    // a request that does not match passes meanwhile; the held one is not answered and not stored
    expect((await admin.call("GET", NODES)).status).toBe(200);
    expect(answered).toBe(false);
    expect(sim.store.get("configmaps", "default", "held")).toBeUndefined();
    release();
    expect((await held).status).toBe(201);
  });

  test("drops open watches cleanly or abruptly", async () => {
    const clean = await watch(`${NODES}?watch=1&resourceVersion=${sim.store.resourceVersion}`);
    expect(sim.faults.dropWatches()).toBe(1);
    expect(await clean.waitEnd()).toBe(true);
    expect(clean.broken).toBe(false);
    const abrupt = await watch(`${NODES}?watch=1&resourceVersion=${sim.store.resourceVersion}`);
    sim.faults.dropWatches(true);
    expect(await abrupt.waitEnd()).toBe(true);
    expect(abrupt.broken).toBe(true);
    expect(sim.openWatches()).toBe(0);
  });

  test("stalls watches without closing them and delivers the backlog afterwards", async () => {
    const w = await watch(`${NODES}?watch=1&resourceVersion=${sim.store.resourceVersion}`);
    sim.faults.stallWatches(60_000);
    sim.store.create("nodes", { metadata: { name: "during-stall" } });
    await expect(w.next(200)).rejects.toThrow("no watch event");
    expect(sim.openWatches()).toBe(1);
    await sim.faults.clear();
    const ev = await w.next();
    expect([ev.type, meta(ev.object)["name"]]).toEqual(["ADDED", "during-stall"]);
  });

  test("refuses connections on the same port and accepts them again", async () => {
    const port = sim.port;
    const w = await watch(`${NODES}?watch=1&resourceVersion=${sim.store.resourceVersion}`);
    await sim.faults.refuseConnections();
    expect(await w.waitEnd()).toBe(true);
    const err = await admin.call("GET", NODES).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "ECONNREFUSED" });
    await sim.faults.acceptConnections();
    expect(sim.port).toBe(port);
    expect((await admin.call("GET", NODES)).status).toBe(200);
  });

  test("reopens by itself after the refusal period", async () => {
    await sim.faults.refuseConnections(100);
    const status = await eventually(
      "the simulator to answer again",
      () =>
        admin.call("GET", NODES).then(
          (r) => r.status,
          () => 0,
        ),
      {
        until: (s) => s === 200,
        timeoutMs: 5_000,
        intervalMs: 0,
      },
    );
    expect(status).toBe(200);
  });
});

describe("apiserver simulator test API", () => {
  test("waits for a condition on the store", async () => {
    const waiting = sim.waitFor(
      "configmaps",
      "default",
      "awaited",
      (o) => o !== undefined && (o["data"] as Record<string, string> | undefined)?.["k"] === "2",
      5000,
    );
    sim.store.create("configmaps", { metadata: { name: "awaited", namespace: "default" }, data: { k: "1" } });
    sim.store.patch("configmaps", "default", "awaited", "merge", { data: { k: "2" } });
    const o = await waiting;
    expect((o!["data"] as Record<string, string>)["k"]).toBe("2");
  });

  test("writes kubeconfigs a client can use", async () => {
    const { parse } = await import("yaml");
    const kc = parse(sim.kubeconfig({ token: "abc" })) as {
      clusters: { cluster: Record<string, string> }[];
      users: { user: Record<string, string> }[];
    };
    expect(kc.clusters[0]!.cluster["server"]).toBe(sim.url);
    expect(Buffer.from(kc.clusters[0]!.cluster["certificate-authority-data"]!, "base64").toString()).toBe(sim.caPem);
    expect(kc.users[0]!.user).toEqual({ token: "abc" });
    const cert = parse(sim.kubeconfig({ clientCert: { certPem: "C", keyPem: "K" } })) as { users: { user: Record<string, string> }[] };
    expect(cert.users[0]!.user).toEqual({
      "client-certificate-data": Buffer.from("C").toString("base64"),
      "client-key-data": Buffer.from("K").toString("base64"),
    });
  });

  test("logs requests with user, verb, resource, namespace, name and code", async () => {
    await admin.call("GET", `${SECRETS}/logged`);
    expect(sim.requests.at(-1)).toMatchObject({
      user: "admin",
      verb: "get",
      resource: "secrets",
      namespace: "kube-system",
      name: "logged",
      subresource: "",
      code: 404,
      watch: false,
    });
    expect(sim.counters().requests).toBe(sim.requests.length);
  });
});

describe("apiserver simulator standalone", () => {
  test("prints its connection facts and serves the control API", async () => {
    const proc = Bun.spawn([process.execPath, "run", "test/doubles/apiserver/main.ts", "--port", "0", "--san", "10.0.2.100"], {
      stdout: "pipe",
      stderr: "inherit",
    });
    try {
      const reader = proc.stdout.getReader();
      let line = "";
      while (!line.includes("\n")) {
        const { done, value } = await reader.read();
        if (done) break;
        line += new TextDecoder().decode(value);
      }
      const info = JSON.parse(line) as { url: string; caFile: string; adminToken: string; controlUrl: string };
      const created = await fetch(`${info.controlUrl}/_sim/objects/nodes`, {
        method: "POST",
        body: JSON.stringify({ metadata: { name: "via-control" } }),
      });
      expect(created.status).toBe(201);
      const c = new SimClient(info.url, await Bun.file(info.caFile).text(), { token: info.adminToken });
      expect((await c.call("GET", `${NODES}/via-control`)).status).toBe(200);
      const log = (await (await fetch(`${info.controlUrl}/_sim/requests`)).json()) as { name: string }[];
      expect(log.map((r) => r.name)).toEqual(["via-control"]);
      const post = (path: string, body: unknown) =>
        fetch(`${info.controlUrl}/_sim/${path}`, { method: "POST", body: JSON.stringify(body) });
      expect((await post("faults/fail", { count: 1, status: 503 })).status).toBe(200);
      expect((await c.call("GET", NODES)).status).toBe(503);
      const { csrPem } = await makeCsrPem("remote", "group");
      expect((await post("objects/certificatesigningrequests", csrBody("remote-csr", csrPem))).status).toBe(201);
      expect((await post("csrs/remote-csr/sign", {})).status).toBe(409);
      expect((await post("csrs/remote-csr/approve", {})).status).toBe(200);
      const signed = (await (await post("csrs/remote-csr/sign", {})).json()) as { certPem: string };
      expect(signed.certPem).toStartWith("-----BEGIN CERTIFICATE-----");
      const waited = await post("wait", {
        resource: "certificatesigningrequests",
        name: "remote-csr",
        field: "spec.username",
        equals: "remote",
        timeoutMs: 100,
      });
      expect(waited.status).toBe(408);
    } finally {
      proc.kill();
      await proc.exited;
    }
  });
});
