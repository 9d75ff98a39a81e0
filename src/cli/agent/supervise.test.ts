import { afterEach, describe, expect, test } from "bun:test";
import { realClock } from "../../clock/index.ts";
import { Controller, RestartRequested } from "../../kube/index.ts";
import type { LogFields, Logger } from "../../log/index.ts";
import { ControllerExitedError, supervise } from "./supervise.ts";

interface Logged {
  readonly level: string;
  readonly msg: string;
  readonly fields: LogFields;
}

const recorder = () => {
  const logged: Logged[] = [];
  const at =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      void logged.push({ level, msg, fields });
  const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => log };
  return { log, logged };
};

const aborts: AbortController[] = [];
afterEach(() => {
  for (const a of aborts.splice(0)) a.abort();
});

/** The wiring's stop: aborts the shared signal with the reason, once. */
const stopper = () => {
  const ac = new AbortController();
  aborts.push(ac);
  const reasons: Error[] = [];
  const stop = (reason: Error) => {
    reasons.push(reason);
    if (!ac.signal.aborted) ac.abort(reason);
  };
  return { signal: ac.signal, stop, reasons };
};

describe("supervise", () => {
  test("should log the controller's name and stop the agent when a controller rejects", async () => {
    const { log, logged } = recorder();
    const { signal, stop, reasons } = stopper();
    const boom = new Error("queue exploded");
    await supervise([{ name: "token", run: Promise.reject(boom) }], { signal, stop, log });
    expect(logged).toEqual([{ level: "error", msg: "Controller failed", fields: { controller: "token", err: boom } }]);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(ControllerExitedError);
    expect(reasons[0]?.message).toBe("controller token failed");
    expect(reasons[0]?.cause).toBe(boom);
    expect(signal.aborted).toBe(true);
  });

  test("should stop the agent when a controller returns although nobody asked it to", async () => {
    const { log, logged } = recorder();
    const { signal, stop, reasons } = stopper();
    // A restart request without onRestartRequested: the controller stops taking work and returns.
    const controller = new Controller({
      name: "hostname-check",
      reconcile: async () => Promise.reject(new RestartRequested("x")),
      log,
      clock: realClock,
    });
    controller.add({ namespace: "", name: "host" });
    await supervise([{ name: controller.name, run: controller.start(signal) }], { signal, stop, log });
    expect(logged.filter((l) => l.level === "error")).toEqual([
      { level: "error", msg: "Controller stopped unexpectedly", fields: { controller: "hostname-check" } },
    ]);
    expect(reasons.map((r) => r.message)).toEqual(["controller hostname-check stopped unexpectedly"]);
  });

  test("should stay quiet when controllers return after the shutdown signal", async () => {
    const { log, logged } = recorder();
    const { signal, stop, reasons } = stopper();
    const controller = new Controller({ name: "node", reconcile: async () => ({}), log, clock: realClock });
    const supervised = supervise([{ name: "node", run: controller.start(signal) }], { signal, stop, log });
    stop(new RestartRequested("node discovered"));
    await supervised;
    expect(logged.filter((l) => l.level === "error")).toEqual([]);
    expect(reasons.map((r) => r.name)).toEqual(["RestartRequested"]);
  });
});
