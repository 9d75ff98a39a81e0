import { describe, expect, test } from "bun:test";
import { DuplicateCheckError, HealthChecks, reportBody } from "./health.ts";

describe("HealthChecks", () => {
  test("should always have a passing ping on healthz", async () => {
    expect(await new HealthChecks().run("healthz")).toEqual({ ok: true, results: [{ name: "ping", ok: true }] });
  });

  test("should fail when any check throws and report its reason", async () => {
    const checks = new HealthChecks();
    checks.addReadyzCheck("informer-sync", () => {
      throw new Error("caches not synced");
    });
    checks.addReadyzCheck("started", async () => {});
    expect(await checks.run("readyz")).toEqual({
      ok: false,
      results: [
        { name: "informer-sync", ok: false, reason: "caches not synced" },
        { name: "started", ok: true },
      ],
    });
  });

  test("should run a single named check and return undefined for an unknown name", async () => {
    const checks = new HealthChecks();
    expect(await checks.run("healthz", "ping")).toEqual({ ok: true, results: [{ name: "ping", ok: true }] });
    expect(await checks.run("healthz", "nope")).toBeUndefined();
  });

  test("should refuse a duplicate name", () => {
    expect(() => new HealthChecks().addHealthzCheck("ping", () => {})).toThrow(DuplicateCheckError);
  });
});

describe("reportBody", () => {
  test("should answer ok when healthy", () => {
    expect(reportBody("healthz", { ok: true, results: [{ name: "ping", ok: true }] }, false)).toBe("ok");
  });

  test("should list checks like controller-runtime when unhealthy", () => {
    expect(
      reportBody(
        "readyz",
        {
          ok: false,
          results: [
            { name: "ping", ok: true },
            { name: "informer-sync", ok: false, reason: "x" },
          ],
        },
        false,
      ),
    ).toBe("[+]ping ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n");
  });
});
