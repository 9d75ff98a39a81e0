import type { Clock } from "../../clock/index.ts";
import type { HostFs } from "../../host/index.ts";
import { findCondition, isNotFound, nodes } from "../../kube/index.ts";
import type { Kube, KubeObject, Reader, Reconcile, Result } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd, UnitStatus } from "../../systemd/index.ts";
import { conditionType, systemdUnitsCondition } from "./condition.ts";
import { UnitCheckError } from "./errors.ts";
import { readLastAppliedOsc } from "./last-applied.ts";
import { type ManagedUnit, managedUnits } from "./managed-units.ts";
import { type UnitFacts, type UnitVerdict, unitVerdict } from "./verdict.ts";

export interface SystemdUnitCheckDeps {
  /** Cached read of the own Node (informer). */
  readonly nodes: Reader;
  /** Patches the Node's status subresource. */
  readonly kube: Kube;
  /** Reads the last-applied OSC. */
  readonly host: HostFs;
  readonly systemd: Systemd;
  readonly clock: Clock;
  readonly log: Logger;
  readonly syncPeriodMs: number;
  readonly stuckThresholdMs: number;
}

/** D-Bus property reads, each failure named after the unit (upstream's wording). */
function factsOf(systemd: Systemd, signal: AbortSignal): UnitFacts {
  const wrap = async <T>(what: string, unit: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw new UnitCheckError(`unable to get ${what} for unit ${unit}`, err);
    }
  };
  return {
    stateChangeMs: (u) => wrap("state change timestamp", u, async () => (await systemd.unitProperties(u, signal)).stateChangeTimestampMs),
    serviceType: (u) => wrap("service type", u, () => systemd.serviceType(u, signal)),
    triggeredBy: (u) => wrap("TriggeredBy", u, () => systemd.triggeredBy(u, signal)),
  };
}

async function checkUnits(deps: SystemdUnitCheckDeps, units: readonly ManagedUnit[], signal: AbortSignal): Promise<UnitVerdict[]> {
  let statuses: UnitStatus[];
  try {
    statuses = await deps.systemd.listUnitsByNames(
      units.map((u) => u.name),
      signal,
    );
  } catch (err) {
    throw new UnitCheckError("unable to list systemd unit statuses", err);
  }
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const ctx = { facts: factsOf(deps.systemd, signal), nowMs: deps.clock.now(), stuckThresholdMs: deps.stuckThresholdMs };
  const verdicts: UnitVerdict[] = [];
  // One unit after the other, in name order: the message lists them in that order.
  for (const u of units) verdicts.push(await unitVerdict(u, byName.get(u.name), ctx));
  return verdicts;
}

/**
 * The systemd-unit-check controller (controllers.md §10): judge every unit of the last-applied OSC
 * by its systemd state and publish the verdict as the Node condition `SystemdUnitsReady`.
 */
export function createReconciler(deps: SystemdUnitCheckDeps): Reconcile {
  const again: Result = { requeueAfterMs: deps.syncPeriodMs };
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
      throw new UnitCheckError("error retrieving object from store", err);
    }

    let units: ManagedUnit[];
    try {
      const osc = await readLastAppliedOsc(deps.host);
      units = osc === undefined ? [] : managedUnits(osc);
    } catch (err) {
      throw new UnitCheckError("failed reading managed units", err);
    }
    if (units.length === 0) {
      log.debug("No last-applied OSC found, skipping systemd unit check");
      return again;
    }

    let verdicts: UnitVerdict[];
    try {
      verdicts = await checkUnits(deps, units, signal);
    } catch (err) {
      throw new UnitCheckError("failed checking units", err);
    }

    const condition = systemdUnitsCondition(verdicts, deps.clock.now(), findCondition(node, conditionType));
    const name = node.metadata.name ?? key.name;
    try {
      // Only this condition: the server merges conditions by type, so newer kubelet heartbeats
      // in other conditions are never overwritten with what this agent's cache saw.
      await deps.kube.patch(nodes, "", name, "strategic", { status: { conditions: [condition] } }, { subresource: "status", signal });
    } catch (err) {
      throw new UnitCheckError("failed patching node status with systemd unit check condition", err);
    }
    log.debug("Updated systemd unit condition", { status: condition.status, reason: condition.reason });
    return again;
  };
}
