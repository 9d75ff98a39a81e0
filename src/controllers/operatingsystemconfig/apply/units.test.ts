import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeSystemd } from "../../../../test/doubles/systemd/index.ts";
import { createHostFs, type HostFs } from "../../../host/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import type { Logger } from "../../../log/index.ts";
import { emptyChanges, encodeChanges } from "../../../osc/index.ts";
import type { EventRecorder } from "../../events.ts";
import { ChangesStore } from "./changes-store.ts";
import type { StepContext } from "./context.ts";
import type { ApplyPorts } from "./ports.ts";
import { applyChangedUnits, executeUnitCommands, readUnitFiles, UnitCommandsError } from "./units.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const node: KubeObject = { metadata: { name: "node-1", uid: "u1" } };

/** An event recorder whose writes hang until released, like one waiting for a client token. */
function slowEvents() {
  const written: string[] = [];
  let release = () => {};
  const released = new Promise<void>((r) => (release = r));
  const events: EventRecorder = {
    async event(_obj, _type, reason, _action, note) {
      await released;
      written.push(`${reason} ${note}`);
    },
  };
  return { events, written, release };
}

describe("unit handling", () => {
  let root: string;
  let host: HostFs;
  let systemd: FakeSystemd;
  let abort: AbortController;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "osc-units-"));
    host = createHostFs(root);
    systemd = new FakeSystemd();
    abort = new AbortController();
  });
  afterEach(async () => {
    writeWaiters.length = 0;
    abort.abort();
    await rm(root, { recursive: true, force: true });
  });

  /** Resolves once a write of the changes file (each recorded in `persisted`) satisfies `matches`. */
  const writeWaiters: { readonly matches: (text: string) => boolean; readonly seen: PromiseWithResolvers<void> }[] = [];
  const afterWrite = (matches: (text: string) => boolean): Promise<void> => {
    const seen = Promise.withResolvers<void>();
    writeWaiters.push({ matches, seen });
    return seen.promise;
  };

  function context(events: EventRecorder, persisted: string[]): StepContext {
    const changes = emptyChanges("sum");
    changes.units.changed.push(
      {
        name: "a.service",
        content: "[Service]\nExecStart=/bin/a\n",
        dropIns: [{ name: "10.conf", content: "x" }],
        dropInsChanges: { changed: [{ name: "10.conf", content: "x" }], deleted: [] },
      },
      { name: "b.service", content: "[Service]\nExecStart=/bin/b\n", enable: false, dropInsChanges: { changed: [], deleted: [] } },
    );
    changes.units.commands.push({ name: "a.service", command: "restart" }, { name: "b.service", command: "stop" });
    const store = new ChangesStore(changes, async (c) => {
      const text = encodeChanges(c);
      persisted.push(text);
      for (const w of writeWaiters) if (w.matches(text)) w.seen.resolve();
    });
    const deps = { host, systemd, log, events } as unknown as ApplyPorts;
    return { ports: deps, store, node, signal: abort.signal };
  }

  test("writes unit files and drop-ins 0600, enables and disables, and records the units with the next write", async () => {
    const persisted: string[] = [];
    const ctx = context(slowEvents().events, persisted);
    await host.writeFileAtomic("/etc/systemd/system/b.service", "[Service]\nExecStart=/bin/b\n", 0o644);
    await applyChangedUnits(ctx);
    expect(await host.readText("/etc/systemd/system/a.service")).toBe("[Service]\nExecStart=/bin/a\n");
    expect((await host.stat("/etc/systemd/system/a.service"))?.mode).toBe(0o600);
    expect((await host.stat("/etc/systemd/system/a.service.d/10.conf"))?.mode).toBe(0o600);
    expect((await host.stat("/etc/systemd/system/b.service"))?.mode).toBe(0o600); // same bytes: only chmodded
    expect(systemd.actions.map((a) => `${a.action} ${a.units.join(",")}`).sort()).toEqual(["Disable b.service", "Enable a.service"]);
    expect(ctx.store.changes.units.changed).toEqual([]);
    expect(persisted).toEqual([]); // deferred: redoing all of it is harmless
    await ctx.store.flush();
    expect(persisted).toHaveLength(1);
    expect(persisted[0]).not.toContain("dropInsChanges");
  });

  test("reading the unit files writes nothing but the mode of unchanged ones", async () => {
    const ctx = context(slowEvents().events, []);
    await host.writeFileAtomic("/etc/systemd/system/b.service", "[Service]\nExecStart=/bin/b\n", 0o644);
    const writes = await readUnitFiles(ctx);
    expect(writes.map((w) => [w.path, w.mode])).toEqual([
      ["/etc/systemd/system/a.service", 0o600],
      ["/etc/systemd/system/a.service.d/10.conf", 0o600],
    ]);
    expect((await host.stat("/etc/systemd/system/b.service"))?.mode).toBe(0o600);
    expect(await host.stat("/etc/systemd/system/a.service")).toBeUndefined();
    expect(await host.stat("/etc/systemd/system/a.service.d")).toBeUndefined();
    expect(systemd.actions).toEqual([]);
  });

  test("leaves an unchanged unit file that is 0600 already alone (a chmod would still touch its inode)", async () => {
    await host.writeFileAtomic("/etc/systemd/system/b.service", "[Service]\nExecStart=/bin/b\n", 0o600);
    const chmodded: string[] = [];
    const real = host;
    host = Object.create(real, {
      chmod: { value: (path: string, mode: number) => (chmodded.push(path), real.chmod(path, mode)) },
    }) as HostFs;
    const writes = await readUnitFiles(context(slowEvents().events, []));
    expect(writes.map((w) => w.path)).not.toContain("/etc/systemd/system/b.service");
    expect(chmodded).toEqual([]);
  });

  test("lets the caller send its next call once enable and disable are sent, before their replies", async () => {
    const ctx = context(slowEvents().events, []);
    const order: string[] = [];
    const reply = Promise.withResolvers<void>();
    const hookRan = Promise.withResolvers<void>();
    const gated = (name: string) => async () => {
      order.push(`${name} sent`);
      await reply.promise;
      order.push(`${name} answered`);
    };
    systemd.enable = gated("enable");
    systemd.disable = gated("disable");
    const applying = applyChangedUnits(ctx, {
      afterEnableSent: () => {
        order.push("next call sent");
        hookRan.resolve();
      },
    });
    await hookRan.promise;
    expect(order).toEqual(["enable sent", "disable sent", "next call sent"]);
    reply.resolve();
    await applying;
    expect(order.slice(3).sort()).toEqual(["disable answered", "enable answered"]);
  });

  test("records a unit command's completion before its Node event is written", async () => {
    const persisted: string[] = [];
    const slow = slowEvents();
    const ctx = context(slow.events, persisted);
    const bothRecorded = afterWrite((text) => !text.includes("commands"));
    const running = executeUnitCommands(ctx);
    await bothRecorded; // both completions recorded while the events still hang (one write or two)
    expect(slow.written).toEqual([]);
    expect(persisted.at(-1)).not.toContain("commands");
    slow.release();
    await running;
    expect(slow.written.sort()).toEqual([
      "SystemDUnitRestart processed restart of unit a.service",
      "SystemDUnitStop processed stop of unit b.service",
    ]);
  });

  test("keeps deferred unit completions when every command fails", async () => {
    const persisted: string[] = [];
    const slow = slowEvents();
    slow.release();
    const ctx = context(slow.events, persisted);
    ctx.store.changes.units.commands.splice(1);
    await ctx.store.unitsChangedDone(["a.service", "b.service"], { deferred: true });
    systemd.failNextJob("a.service", { operation: "restart" });
    await expect(executeUnitCommands(ctx)).rejects.toBeInstanceOf(UnitCommandsError);
    expect(persisted).toHaveLength(1);
    expect(persisted[0]).toContain("commands:\n  - command: restart\n    name: a.service");
    expect(persisted[0]).not.toContain("changed:");
  });
});
