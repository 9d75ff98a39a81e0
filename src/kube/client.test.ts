import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KubeClient, defaultUserAgent } from "./client.ts";
import { isNotFound, TransportError } from "./errors.ts";
import { nodes, secrets } from "./resources.ts";

// A plain-HTTP loopback server that records what the client sends (TLS is covered by the
// integration suite against the API server simulator).
interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}
const seen: Seen[] = [];
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      seen.push({ method: req.method, url: url.pathname + url.search, headers: Object.fromEntries(req.headers), body: await req.text() });
      if (url.pathname.endsWith("/missing")) {
        return Response.json(
          { kind: "Status", status: "Failure", reason: "NotFound", code: 404, message: 'secrets "missing" not found' },
          { status: 404 },
        );
      }
      if (url.pathname.endsWith("/html")) return new Response("<html>bad gateway</html>", { status: 502 });
      if (url.pathname.endsWith("/garbage")) return new Response("[1,2,3]");
      if (url.searchParams.get("watch") === "true") {
        const lines = [
          { type: "ADDED", object: { kind: "Node", metadata: { name: "n", resourceVersion: "2" } } },
          { type: "BOOKMARK", object: { kind: "Node", metadata: { resourceVersion: "3" } } },
        ];
        const text = lines.map((l) => JSON.stringify(l)).join("\n");
        const mid = Math.floor(text.length / 2);
        return new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode(text.slice(0, mid)));
              c.enqueue(new TextEncoder().encode(`${text.slice(mid)}\n`));
              c.close();
            },
          }),
        );
      }
      return Response.json({ kind: "Secret", metadata: { name: "s", namespace: "ns", resourceVersion: "1" } });
    },
  });
});
afterAll(() => server.stop(true));

const newClient = () =>
  new KubeClient({
    config: { server: `http://127.0.0.1:${server.port}`, credentials: { kind: "token", token: "tok" } },
    qps: 1000,
    burst: 1000,
    userAgent: "gardener-node-agent/v9.9.9 (linux/amd64)",
  });

describe("KubeClient", () => {
  test("should send JSON, the bearer token and the user agent", async () => {
    seen.length = 0;
    await newClient().get(secrets, "ns", "s");
    expect(seen[0]?.url).toBe("/api/v1/namespaces/ns/secrets/s");
    expect(seen[0]?.headers["accept"]).toBe("application/json");
    expect(seen[0]?.headers["authorization"]).toBe("Bearer tok");
    expect(seen[0]?.headers["user-agent"]).toBe("gardener-node-agent/v9.9.9 (linux/amd64)");
  });

  test.each([
    ["merge", "application/merge-patch+json"],
    ["strategic", "application/strategic-merge-patch+json"],
    ["json", "application/json-patch+json"],
  ] as const)("should send a %s patch as %s", async (type, contentType) => {
    seen.length = 0;
    await newClient().patch(nodes, "", "n1", type, { a: 1 }, { subresource: "status" });
    expect(seen[0]?.method).toBe("PATCH");
    expect(seen[0]?.url).toBe("/api/v1/nodes/n1/status");
    expect(seen[0]?.headers["content-type"]).toBe(contentType);
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ a: 1 });
  });

  test("should fill in apiVersion and kind on create", async () => {
    seen.length = 0;
    await newClient().create(secrets, "ns", { metadata: { name: "s" } });
    expect(JSON.parse(seen[0]?.body ?? "")).toEqual({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" } });
  });

  test("should put selectors into the list query", async () => {
    seen.length = 0;
    await newClient()
      .list(secrets, "ns", { fieldSelector: "metadata.name=x", labelSelector: "a=b" })
      .catch(() => undefined);
    expect(seen[0]?.url).toBe("/api/v1/namespaces/ns/secrets?fieldSelector=metadata.name%3Dx&labelSelector=a%3Db");
  });

  test("should parse a Status body into a typed error", async () => {
    const err = await newClient()
      .get(secrets, "ns", "missing")
      .catch((e: unknown) => e);
    expect(isNotFound(err)).toBe(true);
    expect((err as Error).message).toBe('secrets "missing" not found');
  });

  test("should keep a non-JSON error page as the message and derive the reason from the code", async () => {
    const err = await newClient()
      .get(secrets, "ns", "html")
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, reason: "Unknown", message: "<html>bad gateway</html>" });
  });

  test("should reject a response that is not a Kubernetes object", async () => {
    const err = await newClient()
      .get(secrets, "ns", "garbage")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
  });

  test("should read a watch whose lines are split across chunks, then end when the server closes", async () => {
    const types: string[] = [];
    for await (const ev of newClient().watch(nodes, "", { fieldSelector: "metadata.name=n", allowWatchBookmarks: true })) {
      types.push(`${ev.type}@${ev.object.metadata.resourceVersion}`);
    }
    expect(types).toEqual(["ADDED@2", "BOOKMARK@3"]);
  });

  test("should fail with a TransportError when nothing listens", async () => {
    const c = new KubeClient({ config: { server: "http://127.0.0.1:1", credentials: { kind: "none" } } });
    await expect(c.get(secrets, "ns", "s")).rejects.toBeInstanceOf(TransportError);
  });

  test("should name the program, version and Go architecture in the default user agent", () => {
    expect(defaultUserAgent()).toMatch(/^gardener-node-agent\/v\S+ \(linux\/(amd64|arm64)\)$/);
  });
});
