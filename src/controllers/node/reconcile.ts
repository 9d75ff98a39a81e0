import { isNotFound, nodes } from "../../kube/index.ts";
import type { Kube, KubeObject, Reader, Reconcile } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import { type EventRecorder, nodeRef } from "../events.ts";
import { agentUnitName, restartPlan } from "./restart-plan.ts";
import { restartAnnotation } from "./watch.ts";
import { errorText, StepError } from "../../log/index.ts";

export interface NodeReconcilerDeps {
  /** Cached read of the own Node (informer). */
  readonly nodes: Reader;
  /** Removes the annotation (JSON merge patch). */
  readonly kube: Kube;
  readonly systemd: Systemd;
  readonly events: EventRecorder;
  readonly log: Logger;
}

const restartReason = "SystemDUnitRestart";
const restartAction = "restart";

/** The annotation could not be removed; the next attempt restarts the services again (upstream behaviour). */
class RemoveAnnotationError extends StepError {
  override readonly name = "RemoveAnnotationError";
  constructor(node: string, cause: unknown) {
    super(`failed removing annotation ${restartAnnotation} from node ${node}`, cause);
  }
}

/** Restarts one unit and records the outcome on the Node. Never throws for a failed restart. */
async function restartService(deps: NodeReconcilerDeps, node: KubeObject, unit: string, signal: AbortSignal): Promise<void> {
  deps.log.info("Restarting systemd service", { serviceName: unit });
  try {
    await deps.systemd.restart(unit, signal);
  } catch (err) {
    // Deliberately not returned: an error would requeue the key and restart every listed service
    // again and again (the annotation stays until the pass finishes). The Warning event on the Node
    // shows the failure instead; the operator can set the annotation again.
    deps.log.error("Failed restarting systemd service", { err, serviceName: unit });
    const msg = errorText(err);
    await deps.events.event(
      nodeRef(node),
      "Warning",
      restartReason,
      restartAction,
      `processed restart of unit ${unit} failed with error ${msg}`,
    );
    return;
  }
  await deps.events.event(nodeRef(node), "Normal", restartReason, restartAction, `processed restart of unit ${unit}`);
}

/**
 * The node controller (controllers.md §4): restart the services named in the restart annotation,
 * remove the annotation, and restart the agent's own unit last.
 */
export function createReconciler(deps: NodeReconcilerDeps): Reconcile {
  return async (key, signal) => {
    const { log } = deps;
    let node: KubeObject;
    try {
      node = await deps.nodes.get<KubeObject>(nodes, "", key.name, { signal });
    } catch (err) {
      if (isNotFound(err)) {
        log.debug("Object is gone, stop reconciling");
        return {};
      }
      throw new StepError("error retrieving object from store", err);
    }

    const value = node.metadata.annotations?.[restartAnnotation];
    if (value === undefined) return {};
    const plan = restartPlan(value);

    for (const unit of plan.restart) await restartService(deps, node, unit, signal);
    // Decision: a piece systemd would refuse as a unit name is not restarted, but it is reported
    // (Warning event naming Node and unit, log line) and the annotation is still removed below —
    // keeping it would only make every later annotation change fail the same way.
    for (const unit of plan.invalid) {
      log.error("Refusing to restart unit with an invalid name", { serviceName: unit, annotation: restartAnnotation });
      await deps.events.event(
        nodeRef(node),
        "Warning",
        restartReason,
        restartAction,
        `refused restart of unit ${JSON.stringify(unit)} on node ${node.metadata.name ?? key.name}: invalid systemd unit name in annotation ${restartAnnotation}`,
      );
    }

    log.info("Removing annotation from node", { annotation: restartAnnotation });
    const name = node.metadata.name ?? key.name;
    try {
      // No resourceVersion precondition: the annotation goes whatever else changed meanwhile.
      await deps.kube.patch(nodes, "", name, "merge", { metadata: { annotations: { [restartAnnotation]: null } } }, { signal });
    } catch (err) {
      throw new RemoveAnnotationError(name, err);
    }

    // Last, and only after the annotation is gone: restarting the agent ends this process, and a
    // still-present annotation would make the next process restart itself again (endless loop).
    if (plan.restartAgent) await restartService(deps, node, agentUnitName, signal);
    return {};
  };
}
