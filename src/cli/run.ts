import { realClock } from "../clock/index.ts";
import { RestartRequested } from "../kube/reconcile.ts";
import {
  buildInfoCollector,
  createMetricsRegistry,
  HealthChecks,
  processCollector,
  startHealthServer,
  startMetricsServer,
} from "../server/index.ts";
import type { RunningServer } from "../server/index.ts";
import type { Command, CommandContext } from "./command.ts";
import { parseAgentEnv } from "./env.ts";
import { loadCommandConfig, startCommandLogger } from "./startup.ts";
import { startControllers } from "./start-controllers.ts";
import type { ControllerDeps, RunningControllers } from "./start-controllers.ts";

export type StartControllers = (deps: ControllerDeps) => Promise<RunningControllers>;

/** Upstream's manager GracefulShutdownTimeout. */
const GRACEFUL_SHUTDOWN_MS = 5_000;
/** How long the health and metrics servers wait for the controllers to send the discovery request. */
const SERVERS_WAIT_MS = 5;

class NotReadyError extends Error {
  override readonly name = "NotReadyError";
  constructor() {
    super("controllers not started yet");
  }
}

const settleWithin = async (p: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
};

/** The command line as given (program and the flags set), for `/debug/pprof/cmdline`. */
const commandLine = (ctx: CommandContext): string[] => [
  "gardener-node-agent",
  ...[...ctx.explicitFlags].map((n) => `--${n}=${ctx.flags[n] ?? ""}`),
];

const runAgent = async (ctx: CommandContext, start: StartControllers): Promise<number> => {
  // The one parse of the environment: a bad value stops the start before anything is served.
  const env = parseAgentEnv(ctx.env);
  const loaded = await loadCommandConfig(ctx);
  const log = await startCommandLogger(ctx, loaded, "gardener-node-agent");
  const kubeconfig = env.kubeconfig;
  const config =
    kubeconfig === undefined ? loaded.config : { ...loaded.config, clientConnection: { ...loaded.config.clientConnection, kubeconfig } };
  log.info("Feature gates", { featureGates: config.featureGates ?? {} });

  // One controller for every way of stopping: signal, restart request, fatal error.
  const stopping = new AbortController();
  const stop = (reason: Error) => {
    if (!stopping.signal.aborted) stopping.abort(reason);
  };
  const onSignal = () => stop(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error("signal received"));
  if (ctx.signal.aborted) onSignal();
  ctx.signal.addEventListener("abort", onSignal, { once: true });

  const health = new HealthChecks();
  // Ready means upstream's informer-sync (registered by the wiring) once every informer exists, i.e.
  // once the controllers are set up; READY=1 waits for their start. Stopping makes it fail again.
  let setUp = false;
  health.addReadyzCheck("set-up", () => {
    if (!setUp) throw new NotReadyError();
  });
  const metrics = createMetricsRegistry();
  metrics.addCollector(processCollector);
  metrics.addCollector(buildInfoCollector(ctx.version, ctx.revision));

  const servers: RunningServer[] = [];
  const { createNotifier, runWatchdog, watchdogIntervalMs } = await import("../systemd/notify.ts");
  const notifier = await createNotifier(env.notifySocket);
  let starting: Promise<RunningControllers> | undefined;
  try {
    // The controllers start first and the servers once the node discovery request is on the wire, so
    // the servers' set-up and the request's round trip overlap (same-minute A/B: /readyz ~1 ms
    // sooner). A start that has to wait for the API server first (bootstrap token and CSR) or fails
    // holds the servers back by at most SERVERS_WAIT_MS: probes are served even when it is unreachable.
    let sent = () => {};
    const discoverySent = new Promise<void>((resolve) => {
      sent = resolve;
    });
    starting = start({
      config,
      configPath: loaded.path,
      root: ctx.root,
      env,
      version: ctx.version,
      log,
      health,
      metrics,
      signal: stopping.signal,
      stop,
      onDiscoverySent: sent,
      onSetUp: () => {
        setUp = !stopping.signal.aborted;
      },
    });
    // A failed start is the stop reason even when serving fails after it (a port in use): the first
    // thing that went wrong is the one reported.
    starting.catch((err: unknown) => stop(err instanceof Error ? err : new Error(String(err))));
    await settleWithin(
      Promise.race([discoverySent, starting]).catch(() => {}),
      SERVERS_WAIT_MS,
    );
    // Stopping already (failed start, restart request, signal): nothing to serve.
    if (!stopping.signal.aborted) {
      const { healthProbes, metrics: metricsEndpoint } = config.server;
      // Profiles on both ports: the metrics server as upstream serves pprof, the health port as
      // operators reach it for probes already.
      const profiling =
        config.debugging?.enableProfiling === true
          ? (await import("../server/profiling.ts")).createProfilingHandler(commandLine(ctx))
          : undefined;
      servers.push(startHealthServer(healthProbes, health, profiling));
      log.info("Serving health probes", { address: `${healthProbes.bindAddress}:${servers[0]?.port}` });
      servers.push(startMetricsServer(metricsEndpoint, metrics, profiling));
      log.info("Serving metrics", { address: `${metricsEndpoint.bindAddress}:${servers[1]?.port}` });
      if (profiling !== undefined) {
        const ports = `${servers[0]?.port} and ${servers[1]?.port}`;
        log.info("Serving profiles", { ports, path: "/debug/pprof/" });
      }
      if (config.debugging?.enableContentionProfiling === true) {
        // Go's block/mutex profiles have no counterpart in a single-threaded JavaScript runtime.
        log.info("debugging.enableContentionProfiling has no effect in this agent: there is no lock contention to profile");
      }
    }

    await starting;
    if (!stopping.signal.aborted) {
      notifier.ready();
      log.info("Started gardener-node-agent");
      const interval = watchdogIntervalMs(env.watchdogUsec);
      if (interval !== undefined) {
        // A failing watchdog loop only means systemd will restart us; log it rather than crash.
        runWatchdog(notifier, interval, realClock, stopping.signal).catch((err: unknown) => log.error("Watchdog loop failed", { err }));
      }
      await new Promise<void>((resolve) => stopping.signal.addEventListener("abort", () => resolve(), { once: true }));
    }
  } catch (err) {
    stop(err instanceof Error ? err : new Error(String(err)));
  } finally {
    ctx.signal.removeEventListener("abort", onSignal);
    setUp = false;
    notifier.stopping();
    // Also when the servers failed after the controllers began starting; a failed start has nothing to stop.
    const stopped = starting?.then(
      (c) => c.stopped,
      () => {},
    );
    if (stopped !== undefined && !(await settleWithin(stopped, GRACEFUL_SHUTDOWN_MS))) {
      log.error("Controllers did not stop within the graceful shutdown timeout", { timeoutSeconds: GRACEFUL_SHUTDOWN_MS / 1000 });
    }
    await Promise.all(servers.map((s) => s.stop()));
    notifier.close();
  }

  const reason: unknown = stopping.signal.reason;
  if (reason instanceof RestartRequested) {
    log.info("Stopping for a restart", { reason: reason.why });
    return 0;
  }
  if (ctx.signal.aborted && reason === ctx.signal.reason) {
    log.info("Stopped gardener-node-agent");
    return 0;
  }
  log.error("Stopping after a fatal error", { err: reason });
  return 1;
};

/** The default command; `start` is the controller wiring (tests pass their own). */
export const createRunCommand = (start: StartControllers = startControllers): Command => ({
  name: "run",
  summary: "The gardener-node-agent runs on every node of a Gardener shoot and applies its OperatingSystemConfig.",
  usage: [
    "Without a command, runs the agent: reads the config, serves health and metrics, and starts the controllers.",
    "The Node condition OperatingSystemConfigApplied says whether the current OSC is applied, and if not, why.",
    "Node annotation node-agent.gardener.cloud/hold=<reason> holds new OSC versions; removing it applies them.",
    "Node annotations node-agent.gardener.cloud/disruption-hooks=<a,b> and node-agent.gardener.cloud/blocking-pods=<label selector>",
    "make an apply that restarts or stops units wait for its hooks' approval and for matching running pods to go.",
  ].join("\n"),
  flags: [],
  run: (ctx) => runAgent(ctx, start),
});

export const command: Command = createRunCommand();
