import { isNotFound, type ObjectKey, type Reconcile, RestartRequested, type Result, secrets, TerminalError } from "../../kube/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { decodeOsc, type Osc } from "../../osc/index.ts";
import { nodeRef } from "../events.ts";
import type { ApplyStop } from "./apply.ts";
import { exclusively } from "./apply-lock.ts";
import { leftoversPending } from "./leftovers.ts";
import { applyVerifyingUnits, unitRevertHold } from "./revert.ts";
import { step } from "./context.ts";
import { summarizeChanges } from "./history.ts";
import { skipsStateFiles } from "./gardenadm.ts";
import { bootstrapTokenPath, kubeletBootstrapKubeconfigPath, type OscControllerDeps } from "./deps.ts";
import {
  checksumAnnotation,
  desiredNodeLabels,
  findNode,
  kubernetesVersionLabel,
  kubernetesVersionLabelValue,
  patchNodeMetadata,
} from "./node.ts";
import { holdGate, holdReason } from "./hold.ts";
import { noOscMetrics } from "./metrics.ts";
import { pendingChanges } from "./pending.ts";
import { permanentInputError, secretValue } from "./plan.ts";
import { OscReporter } from "./report.ts";
import { enterSerial, leaveSerial } from "./serial/index.ts";
import { enterRollout, failRolloutOnUnitError, rolloutOff, verifyRollout } from "./rollout/index.ts";
import { checkStaticPods } from "./staticpods/index.ts";

export const oscDataKey = "osc.yaml";
export const checksumDataScriptAnnotation = "checksum/data-script";
const bootstrapRequeueMs = 5_000;

/**
 * The Secret is unusable (no osc.yaml, undecodable): reported as a TerminalError, retried only when its
 * osc.yaml changes (the watch predicate enqueues it then).
 */
export class OscSecretError extends Error {
  override readonly name = "OscSecretError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

async function readSecret(deps: OscControllerDeps, key: ObjectKey, signal: AbortSignal): Promise<KubeObject | undefined> {
  if (deps.readSecret !== undefined) return deps.readSecret(key, signal);
  try {
    return await deps.kube.get<KubeObject>(secrets, key.namespace, key.name, { signal });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function decodeSecret(secret: KubeObject, key: ObjectKey): { osc: Osc; checksum: string } {
  let bytes: Uint8Array | undefined;
  try {
    bytes = secretValue(secret, oscDataKey);
  } catch (err) {
    throw new OscSecretError(`invalid ${oscDataKey} data in secret ${key.namespace}/${key.name}`, { cause: err });
  }
  if (bytes === undefined) throw new OscSecretError(`no ${oscDataKey} key found in secret ${key.namespace}/${key.name}`);
  let osc: Osc;
  try {
    osc = decodeOsc(bytes);
  } catch (err) {
    throw new OscSecretError(`failed decoding ${oscDataKey} of secret ${key.namespace}/${key.name}: ${(err as Error).message}`, { cause: err });
  }
  const checksum = secret.metadata.annotations?.[checksumDataScriptAnnotation] ?? "";
  return { osc, checksum };
}

/**
 * The Secret lacks `checksum/data-script`: retried with backoff, since adding the annotation alone does
 * not change osc.yaml and so would not wake the controller (spec §4 step 5).
 */
export class OscChecksumError extends Error {
  override readonly name = "OscChecksumError";
  constructor(message: string) {
    super(message);
  }
}

/** Lets requests just started reach the wire before synchronous work occupies the thread. */
const afterPendingIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The OSC controller's reconcile (§4, CORE steps). */
export function createReconciler(deps: OscControllerDeps): Reconcile {
  const report = new OscReporter({ ...deps, metrics: deps.metrics ?? noOscMetrics }, { namespace: "kube-system", name: deps.config.secretName });
  // Every gate reports its GateHold here (condition, event once per version and reason, metrics, status).
  const holds = report;
  return async (key, signal) => {
    const { log, host, kube, config, events } = deps;
    const secret = await step("failed getting secret", () => readSecret(deps, key, signal));
    if (secret === undefined) {
      const missingOn = await step("failed getting node", () => findNode(kube, deps.node, signal));
      return report.secretMissing(missingOn, signal);
    }

    // Checked before anything is applied so a bad configuration cannot fail only the very last step.
    const version = kubernetesVersionLabelValue(config.kubernetesVersion);
    const known = deps.node.nodeName !== undefined;
    // The Secret is decoded while the Node GET is in flight; its outcome counts only after the GET's.
    const nodeRead = step("failed getting node", () => findNode(kube, deps.node, signal));
    nodeRead.catch(() => undefined); // awaited below
    await afterPendingIo();
    let decoded: { osc: Osc; checksum: string } | undefined;
    let decodeFailure: { readonly err: unknown } | undefined;
    try {
      decoded = decodeSecret(secret, key);
    } catch (err) {
      decodeFailure = { err };
    }
    const node = await nodeRead;
    // gardenadm's provision OSC never restarts the agent (9.4); it carries on with the Node found.
    const restartOnNode = decoded === undefined || !skipsStateFiles(deps.selfHosted, decoded.osc);
    if (!known && node !== undefined && !restartOnNode) deps.node.nodeName = node.metadata.name;
    if (!known && node !== undefined && restartOnNode) {
      deps.node.nodeName = node.metadata.name;
      log.info("Node registered, restarting to narrow the caches to it", { nodeName: node.metadata.name });
      throw new RestartRequested("node discovered");
    }
    if (decoded === undefined) {
      const err = decodeFailure?.err;
      if (node !== undefined) await events.event(nodeRef(node), "Warning", "OSCApplyFailed", "Reconcile", (err as Error).message);
      await report.rejected(node, secret.metadata.annotations?.[checksumDataScriptAnnotation] ?? "", err, signal);
      throw new TerminalError((err as Error).message, { cause: err });
    }
    const { osc, checksum } = decoded;

    // Step 4's label patch runs while the change set is planned; nothing on the host is written before
    // it succeeded, and its failure is the reconcile's error (without an apply event), as if it ran alone.
    let labelsPatched: Promise<unknown> = Promise.resolve();
    if (node !== undefined) {
      const labels = await step("failed computing node labels", () => desiredNodeLabels(host, osc));
      labelsPatched = step("failed patching node labels", () => patchNodeMetadata(kube, node, { labels }, signal));
      labelsPatched.catch(() => undefined); // awaited before the host is touched and on every way out
    }
    if (checksum === "") {
      await labelsPatched;
      const err = new OscChecksumError(`secret ${key.namespace}/${key.name} has no ${checksumDataScriptAnnotation} annotation`);
      if (node !== undefined) await events.event(nodeRef(node), "Warning", "OSCApplyFailed", "Reconcile", err.message);
      // The condition says so too (False/ApplyFailed): without it the Node would keep showing the old state.
      await report.rejected(node, "", err, signal);
      throw err;
    }
    // A labels-only merge patch leaves the annotations as the GET returned them.
    if (node !== undefined && node.metadata.annotations?.[checksumAnnotation] === checksum && !(await leftoversPending(host, checksum))) {
      await labelsPatched;
      log.info("Node is up to date with the operating system config", { checksum });
      await report.upToDate(node, checksum, signal);
      return {};
    }

    // The operator's hold annotation comes first: nothing of a held version runs.
    if (holdReason(node) !== undefined) {
      await labelsPatched;
      const pending = await pendingChanges(host, osc, checksum, deps.node.hostName, deps.processPath);
      const held = holdGate(node, checksum, summarizeChanges(pending.changes), config.syncPeriodMs);
      if (held !== undefined) return holds.report(node, checksum, held, signal);
    }

    // A version whose restarted units failed and were reverted waits for a new Secret (or the policy's removal).
    const reverted = await unitRevertHold(deps, node, checksum);
    if (reverted !== undefined) {
      await labelsPatched;
      return holds.report(node, checksum, reverted, signal);
    }

    // §4 step 6: one node at a time for serial Secrets (9.2).
    const serial = await step("failed acquiring serial reconciliation lock", () => enterSerial(deps, secret, known, signal));
    if (serial.kind === "hold") {
      await labelsPatched;
      return holds.report(node, checksum, serial.hold, signal);
    }
    // Chunked rollouts (issue 16): at most N nodes of the pool change at once; serial wins.
    const rollout =
      serial.kind === "off" ? await step("failed taking a rollout slot", () => enterRollout(deps, secret, node, known, checksum, signal)) : rolloutOff;
    if (rollout.kind === "hold") {
      await labelsPatched;
      return holds.report(node, checksum, rollout.hold, signal);
    }

    const run = await report.startApply(node, checksum, signal);
    let stop: ApplyStop | undefined;
    try {
      // A verifying slot was taken by an apply that finished: only the health check is left.
      if (rollout.kind === "slot" && rollout.state === "verifying") await labelsPatched;
      else stop = await exclusively(deps.applyLock, () => applyVerifyingUnits(deps, { osc, checksum, node, ready: labelsPatched, onPlanned: run.planned }, signal));
    } catch (err) {
      // The agent restarts to continue the apply: the condition stays Applying.
      if (!(err instanceof RestartRequested)) await run.failed(node, err, signal);
      // The label patch's own failure is reported as such (no apply was attempted).
      if (err === (await labelsPatched.then(() => undefined, (e: unknown) => e))) throw err;
      await failRolloutOnUnitError(deps, rollout, node, err, signal).catch((e: unknown) =>
        log.error("Failed marking the rollout slot failed", { err: e }),
      );
      if (!(err instanceof RestartRequested) && node !== undefined) {
        await events.event(nodeRef(node), "Warning", "OSCApplyFailed", "Reconcile", (err as Error).message);
      }
      // An OSC that can never be applied: reported once, retried when the Secret's osc.yaml changes.
      if (permanentInputError(err)) throw new TerminalError((err as Error).message, { cause: err });
      throw err;
    }
    if (stop !== undefined && "hold" in stop) return holds.report(node, checksum, stop.hold, signal);
    if (stop !== undefined) {
      log.info("Operating system config not fully applied, trying again later", { why: stop.why, requeueAfterMs: stop.retryAfterMs });
      return { requeueAfterMs: stop.retryAfterMs };
    }

    await run.hostApplied();
    if (node === undefined) {
      log.info("Node not registered yet, checking again shortly");
      return { requeueAfterMs: bootstrapRequeueMs };
    }

    log.info("Deleting bootstrap credentials");
    await step("failed deleting bootstrap credentials", async () => {
      await host.remove(kubeletBootstrapKubeconfigPath);
      await host.remove(bootstrapTokenPath);
    });

    // §4 step 29: the checksum waits until the static pods run as their manifests say (9.1).
    const staticPods = await step("failed checking static pods", () =>
      checkStaticPods(kube, osc, deps.node.hostName.toLowerCase(), node.metadata.name ?? "", signal),
    ).catch(async (err: unknown) => {
      await events.event(nodeRef(node), "Warning", "OSCApplyFailed", "Reconcile", (err as Error).message);
      await run.failed(node, err, signal);
      throw err;
    });
    if (staticPods !== undefined) return holds.report(node, checksum, staticPods, signal);
    const verifying = await step("failed verifying the rollout", () => verifyRollout(deps, rollout, node, signal));
    if (verifying !== undefined) return holds.report(node, checksum, verifying, signal);

    await events.event(nodeRef(node), "Normal", "OSCApplied", "Reconcile", "Operating system config has been applied successfully");
    const applied = node;
    await step("failed patching node", () =>
      patchNodeMetadata(
        kube,
        applied,
        {
          ...(version !== undefined ? { labels: { [kubernetesVersionLabel]: version } } : {}),
          annotations: { [checksumAnnotation]: checksum, ...run.historyAnnotations(applied, "Applied") },
        },
        signal,
      ),
    );
    await run.applied(node, signal);
    log.info("Successfully applied operating system config", { checksum });
    await step("failed releasing serial reconciliation lock", () => leaveSerial(deps, serial, signal));
    const result: Result = { requeueAfterMs: config.syncPeriodMs };
    return result;
  };
}
