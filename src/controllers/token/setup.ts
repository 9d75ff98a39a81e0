import type { Clock } from "../../clock/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Controller, Kube, ObjectKey, Reconcile } from "../../kube/index.ts";
import { liveReader } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { EventRecorder } from "../events.ts";
import type { NodeIdentity } from "../shared/index.ts";
import { createReconciler } from "./reconcile.ts";
import type { TokenSyncConfig } from "../../config/index.ts";
import { newTokenController, type TokenResync } from "./watch.ts";

export interface TokenControllerSetup {
  /** Live GETs of the token Secrets (no cache, no informer). */
  readonly kube: Kube;
  readonly host: HostFs;
  readonly events: EventRecorder;
  /** Warning events go to the Node when its name is known. */
  readonly node: NodeIdentity;
  readonly clock: Clock;
  readonly log: Logger;
  /** controllers.token.syncConfigs */
  readonly syncConfigs: readonly TokenSyncConfig[];
  /** controllers.token.syncPeriod in ms */
  readonly syncPeriodMs: number;
  /** From `createTokenResync()`; its `trigger` is what the OSC controller gets as `onTokenResync`. */
  readonly resync: TokenResync;
}

/** The token reconcile, shared by the controller and the OSC controller's file writer. */
function tokenReconciler(s: Omit<TokenControllerSetup, "resync">): Reconcile {
  const nodeName = s.node.nodeName;
  return createReconciler({
    apiReader: liveReader(s.kube),
    host: s.host,
    events: s.events,
    eventTarget: nodeName !== undefined && nodeName !== "" ? { kind: "Node", apiVersion: "v1", name: nodeName } : undefined,
    log: s.log.child({ controller: "token" }),
    syncConfigs: s.syncConfigs,
    syncPeriodMs: s.syncPeriodMs,
  });
}

/** Builds the `token` controller with one start key per sync config (not started: run `controller.start(signal)`). */
export function setupTokenController(s: TokenControllerSetup): Controller {
  const reconcile = tokenReconciler(s);
  return newTokenController({
    reconcile,
    resync: s.resync.source,
    syncConfigs: s.syncConfigs,
    clock: s.clock,
    log: s.log,
  });
}

/**
 * The token sync of one Secret as a call that resolves when the file is on disk (for the OSC
 * controller, which starts units that read a token only after it exists; gardener#15028).
 */
export function createTokenFileWriter(s: Omit<TokenControllerSetup, "resync">): (secret: ObjectKey, signal: AbortSignal) => Promise<void> {
  const reconcile = tokenReconciler(s);
  return async (secret, signal) => {
    await reconcile(secret, signal);
  };
}
