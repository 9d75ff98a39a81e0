import { describe, expect, test } from "bun:test";
import type { LogFields, Logger } from "../log/index.ts";
import { createMetricsRegistry } from "../server/index.ts";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import type { EventRecord, EventWriter } from "./events.ts";
import { createQueuedEventRecorder, eventsDroppedMetric } from "./queued-events.ts";

const node = { kind: "Node", apiVersion: "v1", name: "n" };
const other = { kind: "Node", apiVersion: "v1", name: "m" };

/** An inner writer that holds every write until `release()`, so events pile up in the queue. */
function heldWriter() {
  const sent: EventRecord[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const write = async (r: EventRecord) => {
    await gate;
    sent.push(r);
  };
  const inner: EventWriter = {
    write,
    event: (obj, type, reason, action, note) => write({ obj, type, reason, action, note, count: 1, firstMs: 0, lastMs: 0 }),
  };
  return { inner, sent, release };
}

function recordingLog() {
  const errors: [string, LogFields | undefined][] = [];
  const log: Logger = { debug() {}, info() {}, warn() {}, error: (m, f) => errors.push([m, f]), child: () => log };
  return { log, errors };
}

describe("createQueuedEventRecorder", () => {
  test("returns before the event is sent and sends events of one type in order", async () => {
    const { inner, sent, release } = heldWriter();
    const rec = createQueuedEventRecorder(inner, { clock: new FakeClock(), log: recordingLog().log });
    await rec.event(node, "Normal", "A", "x", "");
    await rec.event(node, "Normal", "B", "x", "");
    expect(sent).toEqual([]);
    release();
    await rec.flush();
    expect(sent.map((e) => e.reason)).toEqual(["A", "B"]);
  });

  test("sends a waiting Warning before the Normal events queued ahead of it", async () => {
    const { inner, sent, release } = heldWriter();
    const rec = createQueuedEventRecorder(inner, { clock: new FakeClock(), log: recordingLog().log });
    // "N0" is taken by the sender at once (and held); the rest wait.
    for (let i = 0; i < 5; i++) await rec.event(node, "Normal", `N${i}`, "x", "");
    await rec.event(node, "Warning", "W1", "x", "failed");
    await rec.event(node, "Normal", "N5", "x", "");
    await rec.event(node, "Warning", "W2", "x", "failed");
    release();
    await rec.flush();
    expect(sent.map((e) => e.reason)).toEqual(["N0", "W1", "W2", "N1", "N2", "N3", "N4", "N5"]);
  });

  test("aggregates a repeated event into one with a count and first and last timestamps", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0));
    const { inner, sent, release } = heldWriter();
    const rec = createQueuedEventRecorder(inner, { clock, log: recordingLog().log });
    await rec.event(node, "Normal", "Held", "x", "first is in flight");
    const t0 = clock.now();
    for (let i = 0; i < 4; i++) {
      await rec.event(node, "Normal", "SystemDUnitRestart", "Restart", "processed restart of unit a.service");
      clock.step(1000);
    }
    // the same reason about another object is not merged
    await rec.event(other, "Normal", "SystemDUnitRestart", "Restart", "processed restart of unit a.service");
    release();
    await rec.flush();
    expect(sent.slice(1)).toEqual([
      {
        obj: node,
        type: "Normal",
        reason: "SystemDUnitRestart",
        action: "Restart",
        note: "processed restart of unit a.service",
        count: 4,
        firstMs: t0,
        lastMs: t0 + 3000,
      },
      {
        obj: other,
        type: "Normal",
        reason: "SystemDUnitRestart",
        action: "Restart",
        note: "processed restart of unit a.service",
        count: 1,
        firstMs: t0 + 4000,
        lastMs: t0 + 4000,
      },
    ] as EventRecord[]);
  });

  test("combines more than 10 different messages of one reason and object into one event", async () => {
    const clock = new FakeClock();
    const { inner, sent, release } = heldWriter();
    const rec = createQueuedEventRecorder(inner, { clock, log: recordingLog().log });
    await rec.event(node, "Normal", "Held", "x", "first is in flight");
    for (let i = 0; i < 600; i++) {
      await rec.event(node, "Normal", "SystemDUnitRestart", "Restart", `processed restart of unit u${i}.service`);
      clock.step(10);
    }
    await rec.event(node, "Warning", "SystemDUnitRestart", "Restart", "failed restart of unit bad.service");
    release();
    await rec.flush();
    // one held, the Warning, 10 single messages, one combined event for the other 590
    expect(sent).toHaveLength(13);
    expect(sent[1]?.type).toBe("Warning");
    expect(sent.slice(2, 12).map((e) => [e.note, e.count])).toEqual(
      Array.from({ length: 10 }, (_, i) => [`processed restart of unit u${i}.service`, 1]),
    );
    expect(sent[12]).toMatchObject({
      note: "(combined from similar events): processed restart of unit u599.service",
      count: 590,
      lastMs: (sent[12]?.firstMs ?? 0) + 5890,
    });
  });

  test("drops the oldest Normal events beyond its capacity, counts them and logs once", async () => {
    const { inner, sent, release } = heldWriter();
    const { log, errors } = recordingLog();
    const metrics = createMetricsRegistry();
    const rec = createQueuedEventRecorder(inner, { clock: new FakeClock(), log, metrics, capacity: 2 });
    await rec.event(node, "Normal", "A", "x", "");
    await rec.event(node, "Warning", "W", "x", "");
    for (const r of ["B", "C", "D", "E"]) await rec.event(node, "Normal", r, "x", "");
    release();
    await rec.flush();
    // "A" was already being sent; the Warning outlives the Normals that overflowed.
    expect(sent.map((e) => e.reason)).toEqual(["A", "W", "E"]);
    expect(await metrics.render()).toContain(`${eventsDroppedMetric} 3`);
    expect(errors.map(([m]) => m)).toEqual(["Dropping events, the event queue is full"]);
  });

  test("logs a new overflow again after the queue had emptied", async () => {
    const { log, errors } = recordingLog();
    const first = heldWriter();
    let current = first;
    const inner: EventWriter = { write: (r) => current.inner.write(r), event: () => Promise.resolve() };
    const rec = createQueuedEventRecorder(inner, { clock: new FakeClock(), log, capacity: 1 });
    for (const r of ["A", "B", "C"]) await rec.event(node, "Normal", r, "x", "");
    first.release();
    await rec.flush();
    const second = heldWriter();
    current = second;
    for (const r of ["D", "E", "F"]) await rec.event(node, "Normal", r, "x", "");
    second.release();
    await rec.flush();
    expect(errors).toHaveLength(2);
  });
});
