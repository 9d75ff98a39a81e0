import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import type { LogRecord } from "../log/index.ts";
import { createJournalSink, journalFieldName, journalFields, openJournal } from "./journal.ts";
import { loadLibSystemd } from "./libsystemd.ts";
import type { LibSystemd } from "./libsystemd.ts";

const record: LogRecord = {
  time: Date.UTC(2026, 0, 1),
  severity: "error",
  msg: "Reconciling failed",
  fields: { logger: "gna", controller: "token", node: "n1", reconcileId: "r-1", err: new Error("boom"), count: 2 },
};

const cleanups: (() => void)[] = [];
afterAll(() => {
  while (cleanups.length > 0) cleanups.pop()?.();
});

describe("journalFieldName", () => {
  test.each<[string, string | undefined]>([
    ["controller", "CONTROLLER"],
    ["node", "NODE"],
    ["reconcileId", "RECONCILE_ID"],
    ["secretName", "SECRET_NAME"],
    ["unit-name", "UNIT_NAME"],
    ["_private", "PRIVATE"],
    ["1x", "X"],
    ["message", undefined],
    ["priority", undefined],
    ["", undefined],
  ])("should map %p to %p", (key, name) => {
    expect(journalFieldName(key)).toBe(name);
  });
});

describe("journalFields", () => {
  test("should carry MESSAGE, PRIORITY, SYSLOG_IDENTIFIER and every field upper-cased", () => {
    expect(journalFields(record, "json")).toEqual([
      'MESSAGE={"level":"error","ts":"2026-01-01T00:00:00.000Z","logger":"gna","msg":"Reconciling failed","controller":"token","node":"n1","reconcileId":"r-1","error":"boom","count":2}',
      "PRIORITY=3",
      "SYSLOG_IDENTIFIER=gardener-node-agent",
      "LOGGER=gna",
      "CONTROLLER=token",
      "NODE=n1",
      "RECONCILE_ID=r-1",
      "ERROR=boom",
      "COUNT=2",
    ]);
  });
});

describe("createJournalSink", () => {
  test("should fall back to <N>-prefixed lines without libsystemd", () => {
    const out: string[] = [];
    createJournalSink({ lib: undefined, fallback: { write: (s) => out.push(s) }, format: "text" }).write(record);
    expect(out).toHaveLength(1);
    expect(out[0]).toStartWith("<3>2026-01-01T00:00:00.000Z\tERROR\tgna\tReconciling failed\t");
  });

  test("should fall back when the journal refuses the entry", () => {
    const out: string[] = [];
    const refusing: LibSystemd = { journalSendv: () => -2, close: () => {} };
    createJournalSink({ lib: refusing, fallback: { write: (s) => out.push(s) }, format: "json" }).write(record);
    expect(out[0]).toStartWith('<3>{"level":"error"');
  });

  test("should hand the fields to libsystemd and write nothing else when accepted", () => {
    const sent: string[][] = [];
    const out: string[] = [];
    const accepting: LibSystemd = { journalSendv: (f) => sent.push([...f]) && 0, close: () => {} };
    createJournalSink({ lib: accepting, fallback: { write: (s) => out.push(s) }, format: "json", identifier: "x" }).write(record);
    expect(sent[0]?.slice(1, 3)).toEqual(["PRIORITY=3", "SYSLOG_IDENTIFIER=x"]);
    expect(out).toEqual([]);
  });
});

const journalSocket = "/run/systemd/journal/socket";

describe("openJournal", () => {
  test("should return undefined when the socket path is not a socket", async () => {
    expect(await openJournal("/nonexistent/socket")).toBeUndefined();
    expect(await openJournal("/etc/hostname")).toBeUndefined();
  });
});

describe("loadLibSystemd", () => {
  test("should return undefined for a library that does not exist", async () => {
    expect(await loadLibSystemd("libdoes-not-exist.so.0")).toBeUndefined();
  });

  // This machine has libsystemd.so.0 but no journald; the test binds the journal socket itself.
  test("should deliver an entry over journald's native protocol", async () => {
    const lib = await loadLibSystemd();
    expect(lib).toBeDefined();
    if (lib === undefined) return;
    cleanups.push(() => lib.close());
    if (existsSync(journalSocket)) {
      // A real journald owns the socket: only check that it accepts the entry.
      expect(lib.journalSendv(["MESSAGE=gardener-node-agent journal test", "PRIORITY=7"])).toBe(0);
      return;
    }
    // Without journald, libsystemd silently drops entries and reports success; openJournal probes instead.
    expect(await openJournal()).toBeUndefined();
    const createdDir = !existsSync("/run/systemd/journal");
    mkdirSync("/run/systemd/journal", { recursive: true });
    const proc = Bun.spawn(["socat", "-u", `UNIX-RECV:${journalSocket}`, "STDOUT"], { stdout: "pipe", stderr: "ignore" });
    cleanups.push(() => {
      proc.kill();
      rmSync(journalSocket, { force: true });
      if (createdDir) rmSync("/run/systemd/journal", { recursive: true, force: true });
    });
    const deadline = Date.now() + 5000;
    while (!existsSync(journalSocket) && Date.now() < deadline) await Bun.sleep(10);
    const opened = await openJournal();
    expect(opened).toBeDefined();
    opened?.close();
    expect(lib.journalSendv(["MESSAGE=hello\nworld", "PRIORITY=6", "SYSLOG_IDENTIFIER=gardener-node-agent", "NODE=n1"])).toBe(0);
    const reader = proc.stdout.getReader();
    let got = "";
    while (!got.includes("NODE=n1")) {
      const { value, done } = await reader.read();
      if (done) break;
      got += new TextDecoder().decode(value);
    }
    // Multi-line values use the binary form: name, newline, 64-bit little-endian length, value.
    expect(got).toContain("MESSAGE\n");
    expect(got).toContain("hello\nworld\n");
    expect(got).toContain("PRIORITY=6\nSYSLOG_IDENTIFIER=gardener-node-agent\nNODE=n1\n");
  });
});
