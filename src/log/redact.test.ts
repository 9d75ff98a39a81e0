import { describe, expect, test } from "bun:test";
import { isSecretKey, redactFields } from "./redact.ts";

describe("isSecretKey", () => {
  test.each([
    "token",
    "password",
    "bootstrapToken",
    "keyData",
    "certData",
    "data",
    "client-key-data",
    "client-certificate-data",
    "bearerToken",
    "Authorization",
    "privateKey",
  ])("should treat %p as secret", (key) => {
    expect(isSecretKey(key)).toBe(true);
  });

  test.each(["secretName", "path", "tokenFile", "name", "node", "controller", "metadata", "err"])("should log %p", (key) => {
    expect(isSecretKey(key)).toBe(false);
  });
});

describe("redactFields", () => {
  test("should redact nested objects and arrays without touching the input", () => {
    const input = { secret: { metadata: { name: "s" }, data: { token: "dG9r" } }, items: [{ password: "p", user: "u" }] };
    expect(redactFields(input)).toEqual({ secret: "[redacted]", items: [{ password: "[redacted]", user: "u" }] });
    expect(redactFields({ obj: { metadata: { name: "s" }, data: { token: "x" } } })).toEqual({ obj: { metadata: { name: "s" }, data: "[redacted]" } });
    expect(input.items[0]?.password).toBe("p");
  });

  test("should keep Errors for the formatter", () => {
    const err = new Error("boom");
    expect(redactFields({ err }).err).toBe(err);
  });
});
