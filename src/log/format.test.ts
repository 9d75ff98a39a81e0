import { describe, expect, test } from "bun:test";
import { errorText } from "./error-text.ts";
import { formatJson, formatText } from "./format.ts";
import type { LogRecord } from "./types.ts";

const record = (fields: Record<string, unknown>, severity: LogRecord["severity"] = "info"): LogRecord => ({
  time: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  severity,
  msg: "Starting gardener-node-agent",
  fields,
});

describe("formatJson", () => {
  test("should print zap-like JSON with level, ts, logger and msg first", () => {
    expect(formatJson(record({ version: "v1.2.3", logger: "gardener-node-agent" }))).toBe(
      '{"level":"info","ts":"2026-01-02T03:04:05.678Z","logger":"gardener-node-agent","msg":"Starting gardener-node-agent","version":"v1.2.3"}',
    );
  });

  test("should render an error as message and causes under the key error, without a stack", () => {
    const err = new Error("failed applying changed units", { cause: new Error("restart failed") });
    const line = formatJson(record({ err }, "error"));
    expect(JSON.parse(line)).toEqual({
      level: "error",
      ts: "2026-01-02T03:04:05.678Z",
      msg: "Starting gardener-node-agent",
      error: "failed applying changed units: restart failed",
    });
    expect(line).not.toContain("at ");
  });

  test("should render nested errors and bigints", () => {
    expect(JSON.parse(formatJson(record({ detail: { e: new Error("x") }, n: 10n })))).toMatchObject({ detail: { e: "x" }, n: "10" });
  });
});

describe("formatText", () => {
  test("should print tab-separated console lines", () => {
    expect(formatText(record({ logger: "gna", node: "n1" }, "warn"))).toBe(
      '2026-01-02T03:04:05.678Z\tWARN\tgna\tStarting gardener-node-agent\t{"node":"n1"}',
    );
  });

  test("should render errors and bigints at any depth, and print plain fields in their order", () => {
    const line = formatText(
      record({ path: "/a", n: 10n, err: new Error("top"), detail: { e: new Error("x"), list: [1n] }, gone: undefined }),
    );
    expect(line).toBe(
      '2026-01-02T03:04:05.678Z\tINFO\tStarting gardener-node-agent\t{"path":"/a","n":"10","error":"top","detail":{"e":"x","list":["1"]}}',
    );
    expect(formatText(record({ path: "/etc/a", count: 3, ok: true, none: null }))).toBe(
      '2026-01-02T03:04:05.678Z\tINFO\tStarting gardener-node-agent\t{"path":"/etc/a","count":3,"ok":true,"none":null}',
    );
  });

  test("should omit the field block when there are no fields", () => {
    expect(formatText(record({}))).toBe("2026-01-02T03:04:05.678Z\tINFO\tStarting gardener-node-agent");
  });
});

describe("errorText", () => {
  test("should not repeat a cause already contained in the message", () => {
    const inner = new Error("no such file");
    expect(errorText(new Error("reading x: no such file", { cause: inner }))).toBe("reading x: no such file");
  });

  test("should append a chain of causes and stop at cycles", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(errorText(new Error("top", { cause: b }))).toBe("top: b: a");
  });

  test("should print non-Error values", () => {
    expect(errorText("plain")).toBe("plain");
  });
});
