import { describe, expect, test } from "bun:test";
import { createTextRedactor } from "./redact-text.ts";

describe("createTextRedactor", () => {
  const redact = createTextRedactor(["s3cr3t-value-1", "short", "the-longer-s3cr3t-value-1"]);

  test("replaces known values, longest first, and ignores values too short to be told from words", () => {
    expect(redact("a the-longer-s3cr3t-value-1 b s3cr3t-value-1 c short")).toBe("a [redacted] b [redacted] c short");
  });

  test.each([
    ["Authorization: Bearer abc.def-123", "Authorization: Bearer [redacted]"],
    ["basic auth: Basic dXNlcjpwYXNz", "basic auth: Basic [redacted]"],
    ["token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln here", "token [redacted] here"],
    ["joining with 07401b.f395accd246ae52d now", "joining with [redacted] now"],
    ["password=hunter22 user=bob", "password=[redacted] user=bob"],
    ['{"clientSecret":"abc123","name":"x"}', '{"clientSecret":"[redacted]","name":"x"}'],
    ["client-key-data: LS0tLS1CRUdJTi", "client-key-data: [redacted]"],
    ["key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\ndone", "key:\n[redacted]\ndone"],
  ])("redacts the shape in %j", (input, output) => {
    expect(redact(input)).toBe(output);
  });

  test("redacts base64 PEM blocks holding a private key, not certificates", () => {
    const key = Buffer.from("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n").toString("base64");
    const cert = Buffer.from("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").toString("base64");
    expect(redact(`k ${key} c ${cert}`)).toBe(`k [redacted] c ${cert}`);
  });

  test("leaves ordinary lines alone", () => {
    const line = "Started kubelet.service - kubelet daemon; checksum/cloud-config-data changed";
    expect(redact(line)).toBe(line);
  });
});
