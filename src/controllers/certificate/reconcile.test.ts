import { describe, expect, test } from "bun:test";
import { endpointOf } from "./reconcile.ts";

describe("endpointOf", () => {
  test("should reference the CA by path when the REST config was loaded with a CA file", () => {
    expect(
      endpointOf({
        server: "https://api:443",
        caFile: "/var/lib/gardener-node-agent/cluster-ca.crt",
        caPem: "PEM",
        credentials: { kind: "none" },
      }),
    ).toEqual({ server: "https://api:443", caFile: "/var/lib/gardener-node-agent/cluster-ca.crt" });
  });
  test("should carry the CA bundle when there is no CA file", () => {
    expect(endpointOf({ server: "https://api:443", caPem: "PEM", credentials: { kind: "none" } })).toEqual({
      server: "https://api:443",
      caPem: "PEM",
    });
  });
  test("should leave the CA out when the REST config trusts the system store", () => {
    expect(endpointOf({ server: "https://api:443", credentials: { kind: "none" } })).toEqual({ server: "https://api:443" });
  });
});
