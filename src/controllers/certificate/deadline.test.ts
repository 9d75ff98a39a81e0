import { describe, expect, test } from "bun:test";
import { ClientCertificateError, clientCertificateValidity, renewalDeadline } from "./deadline.ts";

const hour = 3_600_000;

describe("renewalDeadline", () => {
  test.each([
    ["the lowest jitter", 0, 80],
    ["a middle jitter", 0.5, 84],
    ["the highest jitter", 0.999_999_999, 87.999_999_9],
  ])("should fall at the expected share of a 720 h lifetime for %s", (_what, r, percent) => {
    const notBeforeMs = Date.UTC(2026, 0, 1);
    const deadline = renewalDeadline({ notBeforeMs, notAfterMs: notBeforeMs + 720 * hour }, () => r);
    expect(((deadline - notBeforeMs) / (720 * hour)) * 100).toBeCloseTo(percent, 5);
  });
  test("should count the lifetime from NotBefore, not from now", () => {
    expect(renewalDeadline({ notBeforeMs: 1_000_000, notAfterMs: 1_000_000 + 100_000 }, () => 0)).toBe(1_080_000);
  });
});

describe("clientCertificateValidity", () => {
  test.each([
    ["no certificate", undefined, "k"],
    ["no key", "c", undefined],
    ["empty data", "", ""],
  ])("should refuse a REST config with %s", (_what, cert, key) => {
    expect(() => clientCertificateValidity(cert, key)).toThrow(ClientCertificateError);
  });
  test("should refuse text that is not a certificate", () => {
    expect(() => clientCertificateValidity("not a pem", "not a pem")).toThrow(/^failed to parse X509 certificate: /);
  });
});
