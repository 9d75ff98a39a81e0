import { describe, expect, test } from "bun:test";
import { createLogger, infoEach } from "./logger.ts";
import { createStreamSink } from "./sinks.ts";
import type { LogLevel, LogRecord } from "./types.ts";

const capture = (level: LogLevel) => {
  const records: LogRecord[] = [];
  const log = createLogger({ level, sink: { write: (r) => records.push(r) }, now: () => 1_700_000_000_000, fields: { logger: "gna" } });
  return { log, records };
};

describe("createLogger", () => {
  test.each<[LogLevel, string[]]>([
    ["debug", ["debug", "info", "warn", "error"]],
    ["info", ["info", "warn", "error"]],
    ["error", ["error"]],
  ])("should print at threshold %s exactly %p", (level, severities) => {
    const { log, records } = capture(level);
    log.debug("D");
    log.info("I");
    log.warn("W");
    log.error("E");
    expect(records.map((r) => r.severity)).toEqual(severities as LogRecord["severity"][]);
  });

  test("should merge child fields with call fields, call fields winning", () => {
    const { log, records } = capture("info");
    log.child({ controller: "token", a: 1 }).child({ a: 2 }).info("Reconciling", { b: 3 });
    expect(records[0]).toEqual({
      time: 1_700_000_000_000,
      severity: "info",
      msg: "Reconciling",
      fields: { logger: "gna", controller: "token", a: 2, b: 3 },
    });
  });

  test("should redact secrets in call fields and child fields", () => {
    const { log, records } = capture("info");
    log.child({ bootstrapToken: "abc.def" }).info("Writing kubeconfig", { user: { token: "t", name: "n" } });
    expect(records[0]?.fields).toEqual({ logger: "gna", bootstrapToken: "[redacted]", user: { token: "[redacted]", name: "n" } });
  });

  test("should hand infoEach's records to a line sink in one write, with the text of one info call each", () => {
    const each: string[] = [];
    const once: string[] = [];
    const fields = [{ path: "/a" }, { path: "/b", token: "t" }, { path: "/c" }];
    const logger = (out: string[]) =>
      createLogger({
        level: "info",
        sink: createStreamSink({ write: (s) => out.push(s) }, "json"),
        now: () => 0,
        fields: { logger: "gna" },
      });
    for (const f of fields) logger(each).child({ controller: "osc" }).info("Wrote file", f);
    infoEach(logger(once).child({ controller: "osc" }), "Wrote file", fields);
    expect(once).toEqual([each.join("")]);
    expect(each).toHaveLength(3);
    expect(once[0]).toContain('"token":"[redacted]"');
  });

  test("should print nothing from infoEach below its threshold, and one info each through a logger without it", () => {
    const { log, records } = capture("error");
    infoEach(log, "Wrote file", [{ path: "/a" }]);
    expect(records).toEqual([]);
    const infos: unknown[] = [];
    const plain = { debug() {}, info: (msg: string, f?: object) => void infos.push([msg, f]), warn() {}, error() {}, child: () => plain };
    infoEach(plain, "Wrote file", [{ path: "/a" }, { path: "/b" }]);
    expect(infos).toEqual([
      ["Wrote file", { path: "/a" }],
      ["Wrote file", { path: "/b" }],
    ]);
  });
});
