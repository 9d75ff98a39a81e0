import { describe, expect, test } from "bun:test";
import { decodeObject } from "./decode.ts";
import { findDef } from "./resources.ts";
import { SimApiError } from "./status.ts";

const leases = findDef("leases")!;
const nodes = findDef("nodes")!;
const secrets = findDef("secrets")!;

describe("decodeObject", () => {
  test("should keep a MicroTime with 6 fractional digits and normalise its zone to Z", () => {
    const o = decodeObject(leases, { metadata: {}, spec: { renewTime: "2026-01-02T05:04:05.123456+02:00" } });
    expect((o["spec"] as { renewTime: string }).renewTime).toBe("2026-01-02T03:04:05.123456Z");
  });

  test.each(["2026-01-02T03:04:05.123Z", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05.1234567Z", "yesterday"])(
    "should reject MicroTime %p with 400",
    (t) => {
      expect(() => decodeObject(leases, { metadata: {}, spec: { acquireTime: t } })).toThrow(SimApiError);
    },
  );

  test("should store condition times at second precision", () => {
    const o = decodeObject(nodes, {
      metadata: {},
      status: { conditions: [{ type: "Ready", lastTransitionTime: "2026-01-02T03:04:05.987654321Z" }] },
    });
    expect((o["status"] as { conditions: { lastTransitionTime: string }[] }).conditions[0]!.lastTransitionTime).toBe(
      "2026-01-02T03:04:05Z",
    );
  });

  test("should reject Secret data that is not base64", () => {
    expect(() => decodeObject(secrets, { metadata: {}, data: { k: "not base64!" } })).toThrow("illegal base64 data");
  });

  test("should reject a body of another kind", () => {
    expect(() => decodeObject(secrets, { kind: "ConfigMap", metadata: {} })).toThrow(SimApiError);
  });
});
