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
    "stringData",
    "content",
    "clientSecret",
  ])("should treat %p as secret", (key) => {
    expect(isSecretKey(key)).toBe(true);
  });

  test.each(["secret", "secretName", "secretRef", "path", "tokenFile", "name", "node", "controller", "metadata", "err"])(
    "should log %p",
    (key) => {
      expect(isSecretKey(key)).toBe(false);
    },
  );
});

describe("redactFields", () => {
  test("should redact nested objects and arrays without touching the input", () => {
    const input = { secret: { metadata: { name: "s" }, data: { token: "dG9r" } }, items: [{ password: "p", user: "u" }] };
    expect(redactFields(input)).toEqual({
      secret: { metadata: { name: "s" }, data: "[redacted]" },
      items: [{ password: "[redacted]", user: "u" }],
    });
    expect(redactFields({ obj: { metadata: { name: "s" }, data: { token: "x" } } })).toEqual({
      obj: { metadata: { name: "s" }, data: "[redacted]" },
    });
    expect(input.items[0]?.password).toBe("p");
  });

  test("should keep Errors for the formatter", () => {
    const err = new Error("boom");
    expect(redactFields({ err }).err).toBe(err);
  });
});

describe("redactFields on what the controllers log", () => {
  test("should keep a Secret's name and hide its values", () => {
    // The token and OSC controllers log the Secret they read by name (issue 10 item 12).
    expect(redactFields({ secret: "kube-system/gardener-node-agent-worker", path: "/var/lib/x/token" })).toEqual({
      secret: "kube-system/gardener-node-agent-worker",
      path: "/var/lib/x/token",
    });
    const secret = { metadata: { name: "osc", namespace: "kube-system" }, data: { "osc.yaml": "c3BlYw==" }, stringData: { token: "t" } };
    expect(redactFields({ secret })).toEqual({
      secret: { metadata: { name: "osc", namespace: "kube-system" }, data: "[redacted]", stringData: "[redacted]" },
    });
  });

  test("should hide file contents and client secrets", () => {
    expect(redactFields({ file: { path: "/etc/x", content: { inline: { data: "cGFzcw==" } } }, clientSecret: "s3cr3t" })).toEqual({
      file: { path: "/etc/x", content: "[redacted]" },
      clientSecret: "[redacted]",
    });
  });
});
