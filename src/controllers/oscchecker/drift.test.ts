import { describe, expect, test } from "bun:test";
import { aggregateDrift, pendingWork, withoutPending, type Drift } from "./drift.ts";
import { decodeChanges } from "../../osc/index.ts";

const missing = (path: string): Drift => ({ finding: { reason: "FileMissing", message: `File ${path} is missing` }, subject: path });

describe("aggregateDrift", () => {
  test("should report nothing when nothing drifted", () => {
    expect(aggregateDrift([])).toBeUndefined();
  });

  test("should keep upstream's reason and text for a single finding", () => {
    expect(aggregateDrift([missing("/etc/a")])).toEqual({ reason: "FileMissing", message: "File /etc/a is missing" });
  });

  test("should name a subject with several findings once", () => {
    const unit = (reason: "DropInMissing" | "UnitMismatch"): Drift => ({ finding: { reason, message: "m" }, subject: "a.service" });
    expect(aggregateDrift([unit("DropInMissing"), unit("UnitMismatch")])).toEqual({
      reason: "OSCDrift",
      message: "1 files or units differ from the last applied OSC (DropInMissing: 1, UnitMismatch: 1): a.service",
    });
  });

  test("should name fewer than 20 long paths so the message stays below 1 kB", () => {
    const long = Array.from({ length: 30 }, (_, i) => missing(`/etc/${"d".repeat(200)}/${i}`));
    const event = aggregateDrift(long);
    expect(event?.message.length).toBeLessThan(1024);
    expect(event?.message).toEndWith(" and 27 more");
  });
});

describe("withoutPending", () => {
  test("should drop pending files, pending units and pending dependencies of other units", () => {
    const changes = decodeChanges(`files:
  changed: [{path: /etc/new, content: {inline: {data: x}}}]
units:
  deleted: [{name: old.service}]
`);
    const osc = {
      files: [
        { path: "/etc/new", inline: { encoding: "", data: "x" }, hasImageRef: false },
        { path: "/etc/kept", inline: { encoding: "", data: "y" }, hasImageRef: false },
      ],
      units: [
        { name: "old.service", enable: true, content: undefined, dropIns: [], filePaths: [] },
        { name: "app.service", enable: true, content: undefined, dropIns: [], filePaths: ["/etc/new", "/etc/dep"] },
      ],
    };
    expect(withoutPending(osc, pendingWork(changes))).toEqual({
      files: [{ path: "/etc/kept", inline: { encoding: "", data: "y" }, hasImageRef: false }],
      units: [{ name: "app.service", enable: true, content: undefined, dropIns: [], filePaths: ["/etc/dep"] }],
    });
  });
});
