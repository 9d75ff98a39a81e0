import { realClock } from "../../clock/index.ts";
import { ensureKubeletBootstrapKubeconfig, obtainAgentKubeconfig, readMachineName } from "../../credentials/index.ts";
import { createHostFs } from "../../host/index.ts";
import { CachedReader, InformerSet, nodes, RestartRequested, secrets } from "../../kube/index.ts";
import type { Controller, KubeObject } from "../../kube/index.ts";
import type { SystemdUnitCheckControllerConfig } from "../../config/index.ts";
import { createEventRecorder } from "../../controllers/events.ts";
import { createQueuedEventRecorder } from "../../controllers/queued-events.ts";
import { hostNameOf } from "./host-facts.ts";
import type { Discovery } from "./discover.ts";
import { machineArch } from "../../registry/index.ts";
import { informerSyncChecks } from "./health.ts";
import type { ControllerDeps, RunningControllers } from "./deps.ts";
import { setupOscController } from "./osc.ts";
import { supervise } from "./supervise.ts";
import {
  createDriftStatus,
  isSelfHostedMachine,
  oscSecretSelectors,
  oscSecretTransform,
  removeStaleTempsAtStart,
} from "../../controllers/operatingsystemconfig/index.ts";
import { controllerCollector } from "./controller-metrics.ts";
import { setupLeaseController } from "../../controllers/lease/index.ts";
import { setupNodeController } from "../../controllers/node/index.ts";
import { createUnitCheckNow, nodeSelectors } from "../../controllers/shared/index.ts";
import { createTokenFileWriter, createTokenResync, setupTokenController } from "../../controllers/token/index.ts";
import { endpointOf, setupCertificateController } from "../../controllers/certificate/index.ts";
import { setupHostnameCheckController } from "../../controllers/hostnamecheck/index.ts";
import { setupSecretNameChangeController } from "../../controllers/secretnamechange/index.ts";
import { createOscCheckerEventRecorder, runOscChecker, secretTargetOsc } from "../../controllers/oscchecker/index.ts";
import { createCtrVersionProbe, setupHealthCheckController } from "../../controllers/healthcheck/index.ts";
import { setupSystemdUnitCheckController } from "../../controllers/systemdunitcheck/index.ts";

const tmpDir = "/var/lib/gardener-node-agent/tmp";
const kubeSystem = "kube-system";

/**
 * The agent's run: identity, node discovery, caches, bootstrap runnables, then the controllers in
 * upstream's fixed order. Resolves once everything is started; a controller asking for a restart
 * ends the process through `deps.stop(new RestartRequested(...))`.
 */
export async function startControllers(deps: ControllerDeps, discovery: Discovery): Promise<RunningControllers> {
  const { config, log, signal } = deps;
  const clock = realClock;
  const host = createHostFs(deps.root);

  const { kube, restConfig, eventsKube } = discovery.connection;
  const { hostName } = discovery;
  const informers = new InformerSet({
    kube,
    clock,
    log: log.child({ component: "cache" }),
    backoffMaxMs: deps.env.timings.watchBackoffMaxMs,
  });
  const secretName = config.controllers.operatingSystemConfig.secretName;
  // gardenadm mode: the Secret cache depends on whether the Node exists (gardenadm.ts), so it waits for discovery.
  const selfHosted = await isSelfHostedMachine(host);
  // The cache keeps the OSC Secret's decoded form, not its base64 text (issue 27).
  const transform = oscSecretTransform(secretName);
  let secretInformer = selfHosted
    ? undefined
    : informers.informerFor<KubeObject>(
        secrets,
        kubeSystem,
        oscSecretSelectors({ secretName, selfHosted, nodeKnown: true }),
        undefined,
        transform,
      );
  // The Secret cache does not depend on the Node, so it syncs while the Node is discovered; informers
  // added later start at once, and handlers added later get the cached objects replayed.
  informers.start(signal);
  const [discovered, machineName] = await Promise.all([
    // Sent before these modules were loaded (discover.ts).
    discovery.node,
    // Required on every start, whatever the credentials path (§7.1 step 10).
    readMachineName(host),
    // Upstream creates it without permission bits; 0700 keeps it root-only and usable.
    host.ensureDir(tmpDir, 0o700),
  ]);
  const nodeName = discovered.node?.metadata.name;
  log.info("Node discovery", { hostName, nodeName: nodeName ?? "", ...(selfHosted ? { mode: "gardenadm" } : {}) });
  secretInformer ??= informers.informerFor<KubeObject>(
    secrets,
    kubeSystem,
    oscSecretSelectors({ secretName, selfHosted, nodeKnown: nodeName !== undefined }),
    undefined,
    transform,
  );

  // One Node informer, by name once known, else by the hostname label; every Node watcher shares it.
  const node = { hostName, nodeName };
  // It starts from the discovery LIST (same objects at its resourceVersion), not a second LIST, and
  // before the D-Bus module loads: its WATCH (a connection of its own) goes out while that module and
  // the controllers are set up, not after them.
  const nodeInformer = informers.informerFor<KubeObject>(nodes, "", nodeSelectors(node), discovered.list);

  const { createDbusSystemd } = await import("../../systemd/dbus.ts");
  const systemd = await createDbusSystemd({
    ...(deps.env.dbusAddress !== undefined ? { address: deps.env.dbusAddress } : {}),
    log: log.child({ component: "systemd" }),
  });
  const cache = new CachedReader(informers);
  const events = createQueuedEventRecorder(
    createEventRecorder({ kube: eventsKube, clock, log, component: "gardener-node-agent", host: hostName }),
    { clock, log, metrics: deps.metrics },
  );
  informerSyncChecks(deps.health, informers, clock);

  const onRestartRequested = (why: string) => deps.stop(new RestartRequested(why));
  const controllers: Controller[] = [];
  deps.metrics.addCollector(controllerCollector(() => controllers));
  const tokenResync = createTokenResync();
  const unitCheckNow = createUnitCheckNow();
  const token = config.controllers.token;
  const tokenSetup = { kube, host, events, node, clock, log, syncConfigs: token.syncConfigs ?? [], syncPeriodMs: token.syncPeriod };
  // Registration order follows upstream: certificate, node, secret-name-change, operatingsystemconfig,
  // token, lease, health-check, systemd-unit-check, hostname-check.
  controllers.push(setupCertificateController({ kube, restConfig, host, clock, log, machineName, onRestartRequested }));
  controllers.push(setupNodeController({ kube, informers, node, systemd, events, clock, log }));
  controllers.push(
    setupSecretNameChangeController({ informers, node, host, configPath: deps.configPath, events, clock, log, onRestartRequested }),
  );
  const driftStatus = createDriftStatus();
  const oscSetup = setupOscController({
    kube,
    cache,
    host,
    systemd,
    clock,
    log,
    events,
    config,
    env: deps.env,
    hostName,
    nodeName,
    arch: machineArch(),
    source: secretInformer,
    nodeSource: nodeInformer,
    metrics: deps.metrics,
    renewAgentCredentials: (sig) => obtainAgentKubeconfig({ kube, host, clock, log }, endpointOf(restConfig), machineName, sig),
    signal,
    onRestartRequested,
    onTokenResync: tokenResync.trigger,
    requestUnitCheck: unitCheckNow.request,
    selfHosted,
    writeTokenFile: createTokenFileWriter(tokenSetup),
    driftStatus,
  });
  controllers.push(oscSetup.controller);
  controllers.push(setupTokenController({ ...tokenSetup, resync: tokenResync }));
  // Only with a known Node: listing Leases by anything but name is denied (§7.5); a Node that appears
  // later makes the OSC controller restart the agent, and the next start registers the lease controller.
  const lease = setupLeaseController({ kube, informers, node, clock, log, health: deps.health, metrics: deps.metrics });
  if (lease !== undefined) controllers.push(lease.controller);
  // The kubelet's first probe waits until this start has returned and the run command reported ready
  // (one macrotask later): the probe's request and its outcome (event, log) are not start-up work.
  const started = Promise.withResolvers<void>();
  controllers.push(
    setupHealthCheckController({
      kube,
      informers,
      node,
      systemd,
      events,
      clock,
      log,
      containerdProbe: createCtrVersionProbe(deps.env.containerd),
      firstProbeAfter: started.promise,
      ...(deps.env.kubeletHealthUrl !== undefined ? { kubeletHealthUrl: deps.env.kubeletHealthUrl } : {}),
    }),
  );
  controllers.push(
    setupSystemdUnitCheckController({
      kube,
      informers,
      node,
      host,
      systemd,
      clock,
      log,
      config: unitCheckConfig(deps),
      checkNow: unitCheckNow,
    }),
  );
  controllers.push(setupHostnameCheckController({ hostName, readHostname: () => hostNameOf(deps.env), clock, log, onRestartRequested }));

  deps.onSetUp?.();
  await informers.waitForSync(signal);
  // Ready from here on. One event-loop turn before the runnables and controllers start: their first
  // rounds run for milliseconds without giving the loop back, and a probe already waiting on the
  // health port is answered first (interleaved A/B: spawn → first /readyz 200 -3.7 ms, median of 60
  // pairs). READY=1 and the controllers' start come one turn later, nothing else changes.
  await new Promise<void>((resolve) => setImmediate(resolve));
  // Bootstrap runnables run after the caches synced and before any controller (§7.1 step 11).
  const kubelet = await ensureKubeletBootstrapKubeconfig(host, config.apiServer);
  log.info("Kubelet bootstrap kubeconfig", { outcome: kubelet });

  // The Lease first: nothing on this path may wait for the API server's rate limit or the host scan.
  const ordered = lease === undefined ? controllers : [lease.controller, ...controllers.filter((c) => c !== lease.controller)];
  const runs = supervise(
    [
      ...ordered.map((c) => ({ name: c.name, run: c.start(signal) })),
      { name: "cache", run: informers.stopped() },
      // Drift checks beside the controllers (at start and every sync period), never before them.
      { name: "drift-check", run: oscSetup.drift(signal) },
    ],
    { signal, stop: deps.stop, log },
  );
  // The consistency check is diagnostic: it runs beside the controllers (a slow scan or event must not
  // delay the Lease), on the events client, and its failure is logged, never fatal.
  const checked = runOscChecker(
    {
      nodes: cache,
      nodeName,
      host,
      systemd,
      events: createOscCheckerEventRecorder({ kube: eventsKube, clock, log, hostName }),
      log,
      targetOsc: secretTargetOsc(cache, config.controllers.operatingSystemConfig.secretName),
    },
    signal,
  ).catch((err: unknown) => {
    if (!signal.aborted) log.error("OSC checker failed", { err });
  });
  // Temps of atomic writes a kill interrupted: removed beside the controllers too (the OSC controller
  // cleans again before each apply); the host keeps track of its own writes in flight.
  const cleaned = removeStaleTempsAtStart({
    host,
    hostName,
    tokenPaths: (config.controllers.token.syncConfigs ?? []).map((s) => s.path),
    log: log.child({ component: "stale-temps" }),
  }).catch((err: unknown) => log.error("Removing stale temporary files failed", { err }));
  const stopped = Promise.allSettled([runs, checked, cleaned])
    .then(() => events.flush())
    .then(() => systemd.close());
  setImmediate(started.resolve);
  return { stopped };
}

/** `controllers.systemdUnitCheck`, with the period a sandbox may shorten below validation's 15 s minimum. */
function unitCheckConfig(deps: ControllerDeps): SystemdUnitCheckControllerConfig {
  const configured = deps.config.controllers.systemdUnitCheck;
  const period = deps.env.timings.unitCheckPeriodMs;
  return period === undefined ? configured : { ...configured, syncPeriod: period };
}
