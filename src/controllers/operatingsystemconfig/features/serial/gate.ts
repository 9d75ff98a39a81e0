import type { KubeObject } from "../../../../kube/index.ts";
import type { OscControllerDeps } from "../../deps.ts";
import type { GateHold } from "../../gates/gate.ts";
import { isSerial } from "../../watch.ts";
import { acquireSerialLock, releaseSerialLock } from "./lock.ts";

/** What the serial gate decided for this reconcile. */
export type SerialEntry =
  | { readonly kind: "off" }
  | { readonly kind: "hold"; readonly hold: GateHold }
  /** This node holds the Lease named `lease` until `leaveSerial`. */
  | { readonly kind: "held"; readonly lease: string };

const lockDeps = (deps: OscControllerDeps) => ({
  kube: deps.kube,
  clock: deps.clock,
  log: deps.log,
  identity: deps.node.hostName.toLowerCase(),
});

/**
 * §4 step 6 / 9.2, after the up-to-date check. Serial only for a Secret annotated serial and a Node
 * known since process start (2.3: a machine that has no Node yet applies without the lock — upstream
 * fails forever there); `nodeKnownAtStart` is false during bootstrap.
 */
export async function enterSerial(
  deps: OscControllerDeps,
  secret: KubeObject,
  nodeKnownAtStart: boolean,
  signal: AbortSignal,
): Promise<SerialEntry> {
  if (!isSerial(secret) || !nodeKnownAtStart) return { kind: "off" };
  // The Lease watch wakes this node when the holder releases; started on first need (see wiring).
  await deps.serialLeaseWatch?.start(signal);
  const outcome = await acquireSerialLock(lockDeps(deps), secret, signal);
  return outcome.held ? { kind: "held", lease: secret.metadata.name ?? "" } : { kind: "hold", hold: outcome.hold };
}

/** §4 step 31: release the Lease after a fully successful serial apply (no-op when not serial). */
export async function leaveSerial(deps: OscControllerDeps, entry: SerialEntry, signal: AbortSignal): Promise<void> {
  if (entry.kind !== "held") return;
  await releaseSerialLock(lockDeps(deps), entry.lease, signal);
}
