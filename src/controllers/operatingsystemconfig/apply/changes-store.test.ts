import { describe, expect, test } from "bun:test";
import { emptyChanges, encodeChanges, type OscChanges } from "../../../osc/index.ts";
import { ChangesStore } from "./changes-store.ts";

function store() {
  const c = emptyChanges("sum");
  c.files.changed.push({ path: "/a", content: {} }, { path: "/b", content: {} });
  c.units.changed.push({
    name: "u.service",
    dropIns: [{ name: "d1", content: "x" }],
    dropInsChanges: { changed: [{ name: "d1", content: "x" }], deleted: [{ name: "old", content: "y" }] },
  });
  c.units.commands.push({ name: "u.service", command: "restart" }, { name: "v.service", command: "stop" });
  c.containerd.configFileChanged = true;
  const written: string[] = [];
  const s = new ChangesStore(c, async (x: OscChanges) => {
    written.push(encodeChanges(x));
  });
  return { s, written };
}

describe("ChangesStore", () => {
  test("should persist after every completed item", async () => {
    const { s, written } = store();
    await s.fileChangedDone("/a");
    await s.unitCommandDone("v.service");
    expect(written).toHaveLength(2);
    expect(s.changes.files.changed.map((f) => f.path)).toEqual(["/b"]);
    expect(written[1]).not.toContain("v.service");
  });

  test("should not write deferred files before they are durable, and no more once that failed", async () => {
    const { s, written } = store();
    const durable = Promise.withResolvers<void>();
    await s.filesChangedDone(["/a", "/b"], { deferred: true, durable: durable.promise });
    let recorded = false;
    const record = s.unitCommandDone("v.service").then(() => {
      recorded = true;
    });
    await Promise.resolve();
    expect(recorded).toBe(false);
    expect(written).toEqual([]);
    durable.resolve();
    await record;
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain("/a");

    const failing = Promise.withResolvers<void>();
    await s.filesChangedDone([], { deferred: true, durable: failing.promise });
    failing.reject(new Error("fsync failed"));
    await expect(s.unitCommandDone("u.service")).rejects.toThrow("fsync failed");
    await expect(s.flush()).rejects.toThrow("fsync failed");
    expect(written).toHaveLength(1);
  });

  test("should serialise concurrent completions so the last write holds all of them", async () => {
    const { s, written } = store();
    await Promise.all([s.unitCommandDone("u.service"), s.unitCommandDone("v.service"), s.containerdRestarted()]);
    expect(written.at(-1)).not.toContain("commands");
    expect(written.at(-1)).toContain("configFileChanged: false");
  });

  test("should carry completions that arrive while a write is under way with one write after it", async () => {
    const c = emptyChanges("sum");
    c.units.commands.push({ name: "u.service", command: "restart" }, { name: "v.service", command: "stop" });
    c.containerd.configFileChanged = true;
    const written: string[] = [];
    const firstWrite = Promise.withResolvers<void>();
    const s = new ChangesStore(c, async (x) => {
      written.push(encodeChanges(x));
      if (written.length === 1) await firstWrite.promise;
    });
    const first = s.unitCommandDone("u.service");
    await Promise.resolve(); // the first write starts
    const settled: string[] = [];
    const second = s.unitCommandDone("v.service").then(() => settled.push("v.service"));
    const third = s.containerdRestarted().then(() => settled.push("containerd"));
    await Promise.resolve();
    expect(written).toHaveLength(1);
    expect(settled).toEqual([]);
    firstWrite.resolve();
    await Promise.all([first, second, third]);
    expect(written).toHaveLength(2);
    expect(written[0]).toContain("v.service");
    expect(written[1]).not.toContain("commands");
    expect(written[1]).toContain("configFileChanged: false");
    expect(settled).toEqual(["v.service", "containerd"]);
  });

  test("should not let an update join one queued before a write through persistVia", async () => {
    const { s, written } = store();
    const order: string[] = [];
    const held = Promise.withResolvers<void>();
    const first = s.persistVia(async (x) => {
      written.push(encodeChanges(x));
      await held.promise;
    });
    const queued = s.unitCommandDone("u.service");
    const via = s.persistVia(async () => {
      order.push(`via sees ${s.changes.units.commands.map((u) => u.name).join(",")}`);
    });
    const later = s.unitCommandDone("v.service");
    held.resolve();
    await Promise.all([first, queued, via, later]);
    expect(order).toEqual(["via sees v.service"]);
    expect(written).toHaveLength(3);
    expect(written[1]).toContain("v.service");
    expect(written[2]).not.toContain("commands");
  });

  test("should keep going after a failed write", async () => {
    let fail = true;
    const s = new ChangesStore(emptyChanges("x"), async () => {
      if (fail) {
        fail = false;
        throw new Error("disk full");
      }
    });
    await expect(s.setMustRestartNodeAgent(true)).rejects.toThrow("disk full");
    await s.setMustRestartNodeAgent(false);
    expect(s.changes.mustRestartNodeAgent).toBe(false);
  });

  test("should record a group of files with one write", async () => {
    const { s, written } = store();
    await s.filesChangedDone(["/a", "/b"]);
    expect(written).toHaveLength(1);
    expect(s.changes.files.changed).toEqual([]);
    expect(written[0]).not.toContain("/a");
  });

  test("should record a group of units with one write, their drop-in changes included", async () => {
    const { s, written } = store();
    await s.unitsChangedDone(["u.service"]);
    expect(written).toHaveLength(1);
    expect(s.changes.units.changed).toEqual([]);
    expect(s.changes.units.commands).toHaveLength(2);
  });

  test("should carry deferred completions with the next write", async () => {
    const { s, written } = store();
    await s.filesChangedDone(["/a"], { deferred: true });
    expect(written).toHaveLength(0);
    expect(s.changes.files.changed.map((f) => f.path)).toEqual(["/b"]);
    await s.unitsChangedDone(["u.service"]);
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain("/a");
    expect(written[0]).not.toContain("dropInsChanges");
  });

  test("should carry deferred files and units with the first unit command's write", async () => {
    const { s, written } = store();
    await s.filesChangedDone(["/a", "/b"], { deferred: true });
    await s.unitsChangedDone(["u.service"], { deferred: true });
    expect(written).toHaveLength(0);
    await s.unitCommandDone("u.service");
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain("/a");
    expect(written[0]).not.toContain("dropInsChanges");
    expect(written[0]).toContain("v.service");
  });

  test("should write on flush only when something was deferred", async () => {
    const { s, written } = store();
    await s.flush();
    expect(written).toHaveLength(0);
    await s.filesChangedDone(["/a", "/b"], { deferred: true });
    await s.flush();
    await s.flush();
    expect(written).toHaveLength(1);
    expect(written[0]).not.toContain("files:\n  changed");
  });
});
