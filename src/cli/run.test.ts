import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reservePort } from "../../test/harness/ports.ts";
import { RestartRequested } from "../kube/index.ts";
import type { CommandContext } from "./command.ts";
import { createRunCommand } from "./run.ts";
import type { StartControllers } from "./run.ts";
import type { ControllerDeps } from "./start-controllers.ts";

const dirs: string[] = [];
const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const context = (healthPort = reservePort()): { ctx: CommandContext; out: string[]; err: string[]; signal: AbortController } => {
  const root = mkdtempSync(join(tmpdir(), "gna-run-"));
  dirs.push(root);
  mkdirSync(join(root, "var/lib/gardener-node-agent"), { recursive: true });
  // Ports of their own: a port 0 in the config means the default (2751, 2752), which other test files
  // running at the same time bind too.
  writeFileSync(
    join(root, "var/lib/gardener-node-agent/config-v9.9.9.yaml"),
    "controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: v1.33.0}}\n" +
      `server: {healthProbes: {bindAddress: 127.0.0.1, port: ${healthPort}}, metrics: {bindAddress: 127.0.0.1, port: ${reservePort()}}}\n`,
  );
  const signal = new AbortController();
  controllers.push(signal);
  const out: string[] = [];
  const err: string[] = [];
  const ctx: CommandContext = {
    command: "run",
    flags: { "config-dir": "/var/lib/gardener-node-agent", root, "log-level": "", "log-format": "json", version: "false", help: "false" },
    explicitFlags: new Set(["root"]),
    root,
    configDir: "/var/lib/gardener-node-agent",
    env: { KUBECONFIG: "/k" },
    stdout: { write: (s) => out.push(String(s)) },
    stderr: { write: (s) => err.push(String(s)) },
    signal: signal.signal,
    version: "v9.9.9",
    revision: "r",
  };
  return { ctx, out, err, signal };
};

/** The run's exit code, with its log lines in the failure message when it is not the expected one. */
const expectExit = async (run: Promise<number>, expected: number, out: string[]): Promise<void> => {
  const code = await run;
  if (code !== expected) throw new Error(`exit ${code}, expected ${expected}; log:\n${out.join("")}`);
};

const messages = (out: string[]): string[] => out.map((l) => (JSON.parse(l) as { msg: string }).msg);

describe("run command", () => {
  test("should exit 0 when a controller requests a restart", async () => {
    const { ctx, out } = context();
    const start: StartControllers = async (deps) => {
      expect(deps.config.clientConnection.kubeconfig).toBe("/k");
      queueMicrotask(() => deps.stop(new RestartRequested("node registered")));
      return { stopped: Promise.resolve() };
    };
    await expectExit(createRunCommand(start).run(ctx), 0, out);
    expect(messages(out)).toContain("Stopping for a restart");
  });

  test("should exit 0 when starting the controllers throws RestartRequested", async () => {
    const { ctx, out } = context();
    const start: StartControllers = async () => {
      throw new RestartRequested("hostname changed");
    };
    await expectExit(createRunCommand(start).run(ctx), 0, out);
  });

  test("should report a failed start, not a port in use, and serve nothing once stopping", async () => {
    const taken = reservePort();
    const occupant = Bun.serve({ hostname: "127.0.0.1", port: taken, fetch: () => new Response() });
    try {
      const { ctx, out } = context(taken);
      const start: StartControllers = async () => {
        throw new RestartRequested("hostname changed");
      };
      await expectExit(createRunCommand(start).run(ctx), 0, out);
      expect(messages(out)).toContain("Stopping for a restart");
      expect(messages(out)).not.toContain("Serving health probes");
    } finally {
      occupant.stop(true);
    }
  });

  test("should exit 1 and log the error when a controller stops with a fatal error", async () => {
    const { ctx, out } = context();
    const start: StartControllers = async (deps) => {
      queueMicrotask(() => deps.stop(new Error("found more than one node with label", { cause: new Error("2 nodes") })));
      return { stopped: Promise.resolve() };
    };
    await expectExit(createRunCommand(start).run(ctx), 1, out);
    const last = JSON.parse(out.at(-1) ?? "{}") as Record<string, unknown>;
    expect(last).toMatchObject({
      level: "error",
      msg: "Stopping after a fatal error",
      error: "found more than one node with label: 2 nodes",
    });
  });

  test("should exit 0 on the shutdown signal and wait for the controllers to stop", async () => {
    const { ctx, out, signal } = context();
    let stoppedSeen = false;
    const start: StartControllers = async (deps) => {
      queueMicrotask(() => signal.abort(new Error("received SIGTERM")));
      const stopped = new Promise<void>((resolve) =>
        deps.signal.addEventListener("abort", () => {
          stoppedSeen = true;
          resolve();
        }),
      );
      return { stopped };
    };
    await expectExit(createRunCommand(start).run(ctx), 0, out);
    expect(stoppedSeen).toBe(true);
    expect(messages(out).at(-1)).toBe("Stopped gardener-node-agent");
  });

  test("should answer /readyz with 200 once the controllers are set up, before they have started", async () => {
    const { ctx } = context();
    const seen: (boolean | undefined)[] = [];
    const start: StartControllers = async (deps) => {
      seen.push((await deps.health.run("readyz"))?.ok);
      deps.onSetUp?.();
      seen.push((await deps.health.run("readyz"))?.ok);
      // Still starting: stop instead of ever resolving as started.
      deps.stop(new Error("stopped by the test"));
      return { stopped: Promise.resolve() };
    };
    await createRunCommand(start).run(ctx);
    expect(seen).toEqual([false, true]);
  });

  test("should exit 1 naming the controller when a supervised controller dies, and stop answering /readyz with 200", async () => {
    const { ctx, out } = context();
    const { supervise } = await import("./agent/supervise.ts");
    let readyWhileRunning: boolean | undefined;
    let health: ControllerDeps["health"] | undefined;
    const start: StartControllers = async (deps) => {
      health = deps.health;
      deps.onSetUp?.();
      let fail: (err: Error) => void = () => {};
      const token = new Promise<void>((_, reject) => (fail = reject));
      const stopped = supervise([{ name: "token", run: token }], { signal: deps.signal, stop: deps.stop, log: deps.log });
      setTimeout(async () => {
        readyWhileRunning = (await deps.health.run("readyz"))?.ok;
        fail(new Error("watch loop crashed"));
      }, 0);
      return { stopped };
    };
    await expectExit(createRunCommand(start).run(ctx), 1, out);
    expect(readyWhileRunning, out.join("")).toBe(true);
    expect((await health?.run("readyz"))?.ok).toBe(false);
    const logged = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({ level: "error", msg: "Controller failed", controller: "token", error: "watch loop crashed" }),
    );
    expect(logged.at(-1)).toMatchObject({
      level: "error",
      msg: "Stopping after a fatal error",
      error: "controller token failed: watch loop crashed",
    });
  });
});
