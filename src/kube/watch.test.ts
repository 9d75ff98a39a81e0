import { describe, expect, test } from "bun:test";
import { ApiError, isGone, TransportError } from "./errors.ts";
import { decodeWatchLine, watchQuery } from "./watch.ts";

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

    test.each(["not json", '{"type":"WHAT","object":{}}', '{"type":"ADDED","object":{"kind":"Node"}}'])(
      "should reject an undecodable line as a TransportError: %s",
      (line) => {
        expect(decodeWatchLine(line)).toBeInstanceOf(TransportError);
      },
    );

    test("should not quote an undecodable line (a Secret's event carries its data)", () => {
      const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
      const ev = decodeWatchLine(`{"type":"MODIFIED","object":{"kind":"Secret","data":{"token":"${secret}"`);
      expect(ev).toBeInstanceOf(TransportError);
      expect((ev as Error).message).toBe("watch: undecodable event (94 characters)");
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
