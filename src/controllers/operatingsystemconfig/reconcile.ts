import { type KubeObject, patchNodeMetadata, type Reconcile } from "../../kube/index.ts";
import { errorText, step } from "../../log/index.ts";
import type { Osc } from "../../osc/index.ts";
import { nodeRef } from "../events.ts";
import { exclusively } from "./apply/apply-lock.ts";
import { type ApplyRun, OscReporter } from "./report/reporter.ts";
import { applyOsc, type ApplyStop } from "./apply/run.ts";
import { HeapShrinker } from "./apply/shrink.ts";
import { applyFailed } from "./apply-failure.ts";
import { bootstrapTokenPath, checksumAnnotation, isSerial, kubeletBootstrapKubeconfigPath, kubernetesVersionLabel } from "./constants.ts";
import type { OscControllerDeps } from "./deps.ts";
import { driftConditionMessage } from "./features/drift/index.ts";
import type { GateContext } from "./gates/gate.ts";
import { admit, firstHold, hostAlreadyApplied, nothingToGuard, releaseReserved, verifyReserved } from "./gates/run.ts";

import { type OscInput, readInput, upToDate } from "./input/read.ts";
import { OscSecretDropped } from "./input/secret.ts";
import { disruptionOnce } from "./plan/pending-disruption.ts";
import { type PlanHook, planChangeSet } from "./plan/planner.ts";
import { oscPlugins } from "./plugins.ts";
import { noOscMetrics } from "./report/metrics.ts";
import { Stager } from "./stage/index.ts";

const bootstrapRequeueMs = 5_000;
/** A newer Secret version started arriving during the read: its own event wakes the controller, this only in case it does not. */
const newerArrivingRequeueMs = 1_000;

/**
 * The OSC controller's reconcile (§4; stages: README). A hold is a Result (requeue), never an error. A new
 * Secret version during an apply cancels nothing: the queue keeps the key dirty and runs it again after.
 */
export function createReconciler(deps: OscControllerDeps): Reconcile {
  const { driftStatus } = deps;
  // Every gate reports its GateHold here (condition, event once per version and reason, metrics, status).
  const report = new OscReporter(
    {
      ...deps,
      metrics: deps.metrics ?? noOscMetrics,
      ...(driftStatus !== undefined ? { conditionNote: () => driftConditionMessage(driftStatus) } : {}),
    },
    { namespace: "kube-system", name: deps.config.secretName },
  );
  const plugins = oscPlugins(deps);
  const stager = deps.staging === undefined ? undefined : new Stager({ ...deps, ...deps.staging });
  const shrinker = new HeapShrinker(deps);
  return async (key, signal) => {
    const { log, events } = deps;
    const warn = (node: KubeObject | undefined, err: unknown) =>
      node === undefined ? Promise.resolve() : events.event(nodeRef(node), "Warning", "OSCApplyFailed", "Reconcile", errorText(err));

    // Steps 1-7: the Secret, the Node, the decoded OSC; the label patch starts.
    const input = await readInput(deps, key, signal);
    // Nothing to roll out (no Secret, one that cannot be applied, or the Node up to date): the gates stop waiting
    // (a node that waited for a rollout slot stops polling for it).
    if (input.kind === "missing") {
      nothingToGuard(plugins.gates);
      return report.secretMissing(input.node, signal);
    }
    if (input.kind === "rejected") {
      nothingToGuard(plugins.gates);
      await warn(input.node, input.err);
      await report.rejected(input.node, input.checksum, input.err, signal);
      throw input.thrown;
    }
    const { checksum, node, labels, takeOsc, ...rest } = input;

    // 8. Up to date: the Node has the checksum and no earlier attempt left work behind.
    if (await upToDate(deps.host, input)) {
      nothingToGuard(plugins.gates);
      await stager?.settle(checksum);
      await labels.done();
      log.info("Node is up to date with the operating system config", { checksum });
      await report.upToDate(node, checksum, signal);
      return {};
    }

    // The OSC is taken only now (input/read.ts takeOsc): a newer version that started arriving since
    // the read has dropped it, and the one after this reconcile is that version's.
    let osc: Osc;
    try {
      osc = takeOsc();
    } catch (err) {
      if (!(err instanceof OscSecretDropped)) throw err;
      await labels.done();
      log.info("A newer operating system config secret is arriving, looking again once it is here");
      return { requeueAfterMs: newerArrivingRequeueMs };
    }

    // 8a. Stage on sight (stage/): the pending version's images and secrets fetched and checked before any
    // gate is asked; a failure asks no gate and takes no slot, the node stays on its version.
    const current = node?.metadata.annotations?.[checksumAnnotation];
    const staged = await stager?.stage(checksum, osc, current, node, signal);
    if (staged?.kind === "failed") {
      await labels.done();
      return report.report(
        node,
        checksum,
        { reason: "StagingFailed", message: staged.message, requeueAfterMs: staged.requeueAfterMs },
        signal,
      );
    }
    const ports = staged?.kind === "staged" ? { ...deps, staged: staged.content } : deps;

    // 9. The admit-phase gates (plugins.ts); what they reserve is released at the end.
    const ctx = gateContext(deps, plugins.extensions, { ...rest, checksum, node, labels, osc }, signal);
    const admitted = await admit(plugins.gates, ctx);
    if (admitted.kind === "hold") {
      await labels.done();
      return report.report(node, checksum, admitted.hold, signal);
    }
    const { reservations } = admitted;

    // 10. Apply (§4 steps 7–26), one writer of the host at a time; a verifying slot only waits for the labels.
    const run = await report.startApply(node, checksum, signal, staged?.kind === "staged");
    shrinker.applying();
    let stop: ApplyStop | undefined;
    try {
      if (hostAlreadyApplied(admitted)) await labels.done();
      else
        stop = await exclusively(deps.applyLock, () =>
          applyOsc(ports, plugins, { osc, checksum, node, ready: labels.ready, onPlanned: run.planned, gateContext: ctx }, signal),
        );
    } catch (err) {
      throw await applyFailed(deps, { run, labels, reservations, node }, err, signal);
    }
    if (stop !== undefined && "hold" in stop) return report.report(node, checksum, stop.hold, signal);
    if (stop !== undefined) {
      log.info("Operating system config not fully applied, trying again later", { why: stop.why, requeueAfterMs: stop.retryAfterMs });
      return { requeueAfterMs: stop.retryAfterMs };
    }
    await run.hostApplied();

    // 11. Without a Node the checksum has nowhere to go: look again shortly.
    if (node === undefined) {
      log.info("Node not registered yet, checking again shortly");
      return { requeueAfterMs: bootstrapRequeueMs };
    }

    // 12. The kubelet has joined: its bootstrap credentials go.
    log.info("Deleting bootstrap credentials");
    await step("failed deleting bootstrap credentials", async () => {
      await deps.host.remove(kubeletBootstrapKubeconfigPath);
      await deps.host.remove(bootstrapTokenPath);
    });

    // This apply changed units: the unit check judges them at once rather than up to its period later. Asked
    // after the verify below has turned a rollout slot `verifying`: only a check after that counts for it (health.ts).
    const applied = !hostAlreadyApplied(admitted);
    const checkUnitsNow = () => {
      if (applied) deps.requestUnitCheck?.(node.metadata.name ?? "");
    };

    // 13. The record-phase gates (static pods, §4 step 29): a failure is reported as a failed apply.
    const waiting = await firstHold(plugins.gates, "record", ctx).catch(async (err: unknown) => {
      await warn(node, err);
      await run.failed(node, err, signal);
      throw err;
    });
    if (waiting !== undefined) {
      checkUnitsNow();
      return report.report(node, checksum, waiting, signal);
    }

    // 14. What the gates reserved verifies (a rollout slot: the Node healthy long enough, then released).
    const verifying = await verifyReserved(reservations, node, signal);
    const judgedAt = deps.clock.now();
    checkUnitsNow();
    if (verifying !== undefined) {
      await report.report(node, checksum, verifying, signal);
      // The next look counts from the verdict, not from the end of the report: its condition write often waits for
      // the client's rate limit (5 QPS) after an apply, which pushed each slot's release back by 0.2 s (issue 25).
      return { requeueAfterMs: Math.max(1, verifying.requeueAfterMs - (deps.clock.now() - judgedAt)) };
    }

    // 15. Record success on the Node: event, version label, checksum and history annotations.
    await recordApplied(deps, { node, checksum, version: input.version, run }, signal);
    await stager?.applied(checksum);

    // 16. Give back what the gates reserved (the serial Lease) and look again after the sync period.
    await releaseReserved(reservations, signal);
    shrinker.applied(signal);
    return { requeueAfterMs: deps.config.syncPeriodMs };
  };
}

/** What the gates see of this reconcile; the pending changes are planned (look mode) only when a gate asks. */
export function gateContext(
  deps: OscControllerDeps,
  hooks: readonly PlanHook[],
  input: Omit<OscInput & { kind: "ok" }, "takeOsc"> & { readonly osc: Osc },
  signal: AbortSignal,
): GateContext {
  const { secret, osc, checksum, node, labels } = input;
  let pending: ReturnType<GateContext["changes"]> | undefined;
  const plan = async () => {
    await labels.done();
    const req = { osc, checksum, hostName: deps.node.hostName, processPath: deps.processPath };
    return (await planChangeSet(deps.host, req, hooks, "look")).changes;
  };
  const changes = () => (pending ??= plan());
  return {
    checksum,
    osc,
    secret,
    serial: isSerial(secret),
    node,
    nodeKnownAtStart: input.nodeKnownAtStart,
    changes,
    disruption: disruptionOnce(deps.host, deps.node.hostName.toLowerCase(), osc, changes),
    dryRun: false,
    online: true,
    signal,
  };
}

async function recordApplied(
  deps: OscControllerDeps,
  r: { readonly node: KubeObject; readonly checksum: string; readonly version: string | undefined; readonly run: ApplyRun },
  signal: AbortSignal,
): Promise<void> {
  const { node, checksum, version, run } = r;
  await deps.events.event(nodeRef(node), "Normal", "OSCApplied", "Reconcile", "Operating system config has been applied successfully");
  await step("failed patching node", () =>
    patchNodeMetadata(
      deps.kube,
      node,
      {
        ...(version !== undefined ? { labels: { [kubernetesVersionLabel]: version } } : {}),
        annotations: { [checksumAnnotation]: checksum, ...run.historyAnnotations(node, "Applied") },
      },
      signal,
    ),
  );
  run.applied(node, signal);
  deps.log.info("Successfully applied operating system config", { checksum });
}
