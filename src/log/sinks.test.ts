import { describe, expect, test } from "bun:test";
import { createStreamSink, createSyslogPrefixSink } from "./sinks.ts";
import type { LogRecord } from "./types.ts";

const rec = (severity: LogRecord["severity"]): LogRecord => ({ time: 0, severity, msg: "M", fields: {} });

describe("sinks", () => {
  test("should write one plain line per record", () => {
    const out: string[] = [];
    createStreamSink({ write: (s) => out.push(s) }, "json").write(rec("info"));
    expect(out).toEqual(['{"level":"info","ts":"1970-01-01T00:00:00.000Z","msg":"M"}\n']);
  });

  test.each<[LogRecord["severity"], string]>([
    ["error", "<3>"],
    ["warn", "<4>"],
    ["info", "<6>"],
    ["debug", "<7>"],
  ])("should prefix %s records with %s", (severity, prefix) => {
    const out: string[] = [];
    createSyslogPrefixSink({ write: (s) => out.push(s) }, "text").write(rec(severity));
    expect(out[0]?.startsWith(`${prefix}1970-01-01T00:00:00.000Z\t`)).toBe(true);
  });
});
