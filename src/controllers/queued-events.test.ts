import { describe, expect, test } from "bun:test";
import { nopLogger } from "../log/index.ts";
import type { EventRecorder } from "./events.ts";
import { createQueuedEventRecorder } from "./queued-events.ts";

const node = { kind: "Node", apiVersion: "v1", name: "n" };

describe("createQueuedEventRecorder", () => {
  test("returns before the event is sent and sends events in order", async () => {
    const sent: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inner: EventRecorder = {
      event: async (_o, _t, reason) => {
        await gate;
        sent.push(reason);
      },
    };
    const rec = createQueuedEventRecorder(inner, nopLogger);
    await rec.event(node, "Normal", "A", "x", "");
    await rec.event(node, "Normal", "B", "x", "");
    expect(sent).toEqual([]);
    release();
    await rec.flush();
    expect(sent).toEqual(["A", "B"]);
  });

  test("drops the oldest events beyond its capacity", async () => {
    const sent: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inner: EventRecorder = {
      event: async (_o, _t, reason) => {
        await gate;
        sent.push(reason);
      },
    };
    const rec = createQueuedEventRecorder(inner, nopLogger, 2);
    for (const r of ["A", "B", "C", "D"]) await rec.event(node, "Normal", r, "x", "");
    release();
    await rec.flush();
    // "A" was already being sent when the queue overflowed; "B" was the oldest waiting.
    expect(sent).toEqual(["A", "C", "D"]);
  });
});
