import { type Reconcile, TerminalError } from "../../kube/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { errorText } from "../../log/index.ts";
import { nodeRef } from "../events.ts";
import { findNode } from "../shared/index.ts";
import { admit, onlyVerificationLeft } from "./gates/run.ts";
import type { ApplyStop } from "./apply/run.ts";
import { exclusively } from "./apply/apply-lock.ts";
import { applyFailed } from "./apply-failure.ts";
import { step } from "./apply/context.ts";
import { bootstrapTokenPath, kubeletBootstrapKubeconfigPath, type OscControllerDeps } from "./deps.ts";
import { skipsStateFiles } from "./input/gardenadm.ts";
import { LabelPatch } from "./input/label-patch.ts";
import { leftoversPending } from "./plan/leftovers.ts";
import { noOscMetrics } from "./report/metrics.ts";
import {
  checksumAnnotation,
  desiredNodeLabels,
  kubernetesVersionLabel,
  kubernetesVersionLabelValue,
  patchNodeMetadata,
} from "./input/node.ts";
import { adoptDiscoveredNode, readNodeWhileDecoding } from "./input/node-read.ts";
import { OscReporter } from "./report/reporter.ts";
import { applyVerifyingUnits } from "./features/revert/verify.ts";
import { verifyRollout } from "./features/rollout/index.ts";
import { leaveSerial } from "./features/serial/index.ts";
import { checksumDataScriptAnnotation, decodeSecret, OscChecksumError, readSecret, secretChecksum } from "./input/secret.ts";
import { checkStaticPods } from "./features/staticpods/index.ts";

const bootstrapRequeueMs = 5_000;

/**
 * The OSC controller's reconcile (§4, CORE steps), one numbered step per block. The overlaps it uses
 * for speed live in named units, each with its own test: `readNodeWhileDecoding` (decode during the
 * Node GET), `LabelPatch` (the label patch during planning), `admit` (hold, revert, serial and rollout
 * gates), `exclusively` (one writer of the host at a time), `applyFailed` (how a failed apply is told).
 * A new Secret version arriving during an apply cancels nothing: the work queue keeps the key dirty
 * (one worker) and this reconcile runs again for it once the current one returned.
 */
export function createReconciler(deps: OscControllerDeps): Reconcile {
  // Every gate reports its GateHold here (condition, event once per version and reason, metrics, status).
  const report = new OscReporter(
    { ...deps, metrics: deps.metrics ?? noOscMetrics },
    { namespace: "kube-system", name: deps.config.secretName },
  );
  return async (key, signal) => {
    const { log, host, kube, config, events } = deps;
    const warn = (node: KubeObject | undefined, err: unknown) =>
      node === undefined ? Promise.resolve() : events.event(nodeRef(node), "Warning", "OSCApplyFailed", "Reconcile", errorText(err));

    // 1. Read the Secret; a missing one is reported on the Node and looked at again with backoff.
    const secret = await step("failed getting secret", () => readSecret(deps, key, signal));
    if (secret === undefined)
      return report.secretMissing(await step("failed getting node", () => findNode(kube, deps.node, signal)), signal);

    // 2. The configured Kubernetes version is checked before anything is applied, so a bad
    //    configuration cannot fail only the very last step.
    const version = kubernetesVersionLabelValue(config.kubernetesVersion);

    // 3. Read the Node, decoding the Secret meanwhile (see readNodeWhileDecoding).
    const known = deps.node.nodeName !== undefined;
    const { node, decoded } = await readNodeWhileDecoding(
      () => step("failed getting node", () => findNode(kube, deps.node, signal)),
      () => decodeSecret(secret, key),
    );

    // 4. A Node registered since start restarts the agent (not for gardenadm's provision OSC, 9.4).
    adoptDiscoveredNode(deps.node, known, node, !decoded.ok || !skipsStateFiles(deps.selfHosted, decoded.value), log);

    // 5. An undecodable Secret is reported once and waits for a new osc.yaml.
    if (!decoded.ok) {
      await warn(node, decoded.err);
      await report.rejected(node, secretChecksum(secret), decoded.err, signal);
      throw new TerminalError(errorText(decoded.err), { cause: decoded.err });
    }
    const osc = decoded.value;
    const checksum = secretChecksum(secret);

    // 6. Start the Node label patch (§4 step 4); it runs during the planning, see LabelPatch.
    const labels =
      node === undefined
        ? LabelPatch.none
        : await step("failed computing node labels", async () => {
            const wanted = await desiredNodeLabels(host, osc);
            return LabelPatch.start(() =>
              step("failed patching node labels", () => patchNodeMetadata(kube, node, { labels: wanted }, signal)),
            );
          });

    // 7. A Secret without checksum is rejected (the condition says so, else the Node would show the old state).
    if (checksum === "") {
      await labels.done();
      const err = new OscChecksumError(`secret ${key.namespace}/${key.name} has no ${checksumDataScriptAnnotation} annotation`);
      await warn(node, err);
      await report.rejected(node, "", err, signal);
      throw err;
    }

    // 8. Up to date: the Node has the checksum and no earlier attempt left work behind.
    if (node !== undefined && node.metadata.annotations?.[checksumAnnotation] === checksum && !(await leftoversPending(host, checksum))) {
      await labels.done();
      log.info("Node is up to date with the operating system config", { checksum });
      await report.upToDate(node, checksum, signal);
      return {};
    }

    // 9. The gates: operator's hold, reverted version, serial lock, rollout slot.
    const admission = await admit(deps, { secret, osc, checksum, node, nodeKnownAtStart: known, labels }, signal);
    if (admission.kind === "hold") {
      await labels.done();
      return report.report(node, checksum, admission.hold, signal);
    }
    const { serial, rollout } = admission;

    // 10. Apply (§4 steps 7–26), one writer of the host at a time; a verifying slot only waits for the labels.
    const run = await report.startApply(node, checksum, signal);
    let stop: ApplyStop | undefined;
    try {
      if (onlyVerificationLeft(rollout)) await labels.done();
      else
        stop = await exclusively(deps.applyLock, () =>
          applyVerifyingUnits(deps, { osc, checksum, node, ready: labels.ready, onPlanned: run.planned }, signal),
        );
    } catch (err) {
      throw await applyFailed(deps, { run, labels, rollout, node }, err, signal);
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
      await host.remove(kubeletBootstrapKubeconfigPath);
      await host.remove(bootstrapTokenPath);
    });

    // 13. §4 step 29: the checksum waits until the static pods run as their manifests say (9.1).
    const staticPods = await step("failed checking static pods", () =>
      checkStaticPods(kube, osc, deps.node.hostName.toLowerCase(), node.metadata.name ?? "", signal),
    ).catch(async (err: unknown) => {
      await warn(node, err);
      await run.failed(node, err, signal);
      throw err;
    });
    if (staticPods !== undefined) return report.report(node, checksum, staticPods, signal);

    // 14. A rollout slot is verified (the Node healthy long enough) and released before the checksum is written.
    const verifying = await step("failed verifying the rollout", () => verifyRollout(deps, rollout, node, signal));
    if (verifying !== undefined) return report.report(node, checksum, verifying, signal);

    // 15. Record success on the Node: event, version label, checksum and history annotations.
    await events.event(nodeRef(node), "Normal", "OSCApplied", "Reconcile", "Operating system config has been applied successfully");
    await step("failed patching node", () =>
      patchNodeMetadata(
        kube,
        node,
        {
          ...(version !== undefined ? { labels: { [kubernetesVersionLabel]: version } } : {}),
          annotations: { [checksumAnnotation]: checksum, ...run.historyAnnotations(node, "Applied") },
        },
        signal,
      ),
    );
    await run.applied(node, signal);
    log.info("Successfully applied operating system config", { checksum });

    // 16. Release the serial lock (no-op when not serial) and look again after the sync period.
    await step("failed releasing serial reconciliation lock", () => leaveSerial(deps, serial, signal));
    return { requeueAfterMs: config.syncPeriodMs };
  };
}
