import { describe, expect, test } from "bun:test";
import { ApiError, isGone, TransportError } from "./errors.ts";
import { secrets } from "./resources.ts";
import { bigWatchLine, decodeWatchLine, watchQuery, watchStream } from "./watch.ts";
import type { KubeObject } from "./types.ts";

describe("watch", () => {
  describe("decodeWatchLine", () => {
    test("should decode an object event", () => {
      const ev = decodeWatchLine('{"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"n","resourceVersion":"7"}}}');
      expect(ev).toEqual({ type: "MODIFIED", object: { kind: "Node", metadata: { name: "n", resourceVersion: "7" } } });
    });

    test("should turn an ERROR event with an expired Status into a Gone ApiError", () => {
      const ev = decodeWatchLine(
        '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}',
      );
      expect(ev).toBeInstanceOf(ApiError);
      expect(isGone(ev)).toBe(true);
      expect((ev as ApiError).reason).toBe("Expired");
      expect((ev as ApiError).message).toBe("too old resource version: 1 (5)");
    });

    test.each([
      "not json",
      '{"type":"WHAT","object":{}}',
      '{"type":"ADDED","object":{"kind":"Node"}}',
      '["ADDED",{"metadata":{}}]',
      '{"type":"ADDED","object":[{"metadata":{}}]}',
      '{"type":"ADDED","object":{"metadata":"n"}}',
      '{"type":"ADDED"}',
      '{"type":7,"object":{"metadata":{}}}',
    ])("should reject an undecodable line as a TransportError: %s", (line) => {
      expect(decodeWatchLine(line)).toBeInstanceOf(TransportError);
    });

    test("should not quote an undecodable line (a Secret's event carries its data)", () => {
      const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
      const ev = decodeWatchLine(`{"type":"MODIFIED","object":{"kind":"Secret","data":{"token":"${secret}"`);
      expect(ev).toBeInstanceOf(TransportError);
      expect((ev as Error).message).toBe("watch: undecodable event (94 characters)");
    });
  });

  describe("bigWatchLine", () => {
    const long = Buffer.alloc(3 * 1024 * 1024, "osc ").toString("base64");
    const event = JSON.stringify({
      type: "MODIFIED",
      object: {
        kind: "Secret",
        metadata: { name: "osc", resourceVersion: "9", annotations: { note: long } },
        data: { "osc.yaml": long, other: long, small: "eA==" },
      },
    });
    const assembled = (dataAsBytes?: (o: KubeObject, key: string) => boolean, text = event) => {
      const line = bigWatchLine(dataAsBytes);
      const bytes = new TextEncoder().encode(text);
      for (let i = 0; i < bytes.length; i += 65_536) line.add(bytes.subarray(i, i + 65_536));
      return line.end();
    };

    test("should deliver the data values the caller asks for as their bytes, every other value as text", () => {
      const ev = assembled((o, key) => o.metadata.name === "osc" && key === "osc.yaml");
      const object = (ev as { object: KubeObject }).object;
      const data = object["data"] as Record<string, unknown>;
      expect(data["osc.yaml"]).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(data["osc.yaml"] as Uint8Array).equals(Buffer.alloc(3 * 1024 * 1024, "osc "))).toBe(true);
      expect({ ...object, data: { ...data, "osc.yaml": long } }).toEqual(JSON.parse(event).object);
    });

    test("should deliver what JSON.parse does when no data value is asked for as bytes", () => {
      expect(assembled()).toEqual({ type: "MODIFIED", object: JSON.parse(event).object });
    });

    test("should reject an undecodable event as a TransportError naming only its size", () => {
      const ev = assembled(undefined, event.slice(0, -2));
      expect(ev).toBeInstanceOf(TransportError);
      expect((ev as Error).message).toBe(`watch: undecodable event (${event.length - 2} bytes)`);
    });
  });

  describe("watchStream", () => {
    test("should tell onBigEvent as a big event starts, before it is delivered, and not for small ones", async () => {
      const secret = (rv: string, data: string) =>
        `${JSON.stringify({ type: "MODIFIED", object: { kind: "Secret", metadata: { name: "osc", resourceVersion: rv }, data: { "osc.yaml": data } } })}\n`;
      const big = Buffer.alloc(3 * 1024 * 1024, "osc ").toString("base64");
      const bytes = new TextEncoder().encode(secret("1", "eA==") + secret("2", big) + secret("3", "eQ=="));
      const seen: string[] = [];
      let sent = 0;
      // The body as a server sends it: in pieces, each when the reader asks for it.
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= bytes.length) return c.close();
          c.enqueue(bytes.slice(sent, sent + 65_536));
          sent += 65_536;
        },
      });
      const transport = {
        baseUrl: "http://127.0.0.1:1",
        headers: async () => ({}),
        fetch: async () => new Response(body),
        headerTimeoutMs: 1_000,
      };
      let sentAtStart = 0;
      const onBigEvent = () => {
        seen.push("big event starts");
        sentAtStart = sent;
      };
      for await (const ev of watchStream(secrets, "kube-system", { onBigEvent }, transport))
        seen.push(`event ${ev.object.metadata.resourceVersion}`);
      expect(seen).toEqual(["event 1", "big event starts", "event 2", "event 3"]);
      // Told once its first MiB is in (readLines' threshold), while most of its 4 MiB are still to come.
      expect(sentAtStart).toBeGreaterThan(1024 * 1024);
      expect(sentAtStart).toBeLessThan(2 * 1024 * 1024);
    });
  });

  describe("watchQuery", () => {
    test("should carry selectors, resume point, bookmarks and timeout", () => {
      const q = watchQuery({
        fieldSelector: "metadata.name=n1",
        labelSelector: "a=b",
        resourceVersion: "42",
        allowWatchBookmarks: true,
        timeoutSeconds: 300.7,
      });
      expect(q.toString()).toBe(
        "watch=true&fieldSelector=metadata.name%3Dn1&labelSelector=a%3Db&resourceVersion=42&allowWatchBookmarks=true&timeoutSeconds=300",
      );
    });

    test("should leave out an empty resourceVersion", () => {
      expect(watchQuery({ resourceVersion: "" }).toString()).toBe("watch=true");
    });
  });
});
