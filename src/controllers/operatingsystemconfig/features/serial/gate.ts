import { step } from "../../../../log/index.ts";
import type { Gate } from "../../gates/gate.ts";
import { leaseSpecOf, serialLockHold } from "./lease-spec.ts";
import { acquireSerialLock, getLease, releaseSerialLock, type SerialLockDeps } from "./lock.ts";

export interface SerialGateDeps extends Omit<SerialLockDeps, "identity"> {
  /** The lock identity (9.2). */
  readonly hostName: string;
  /** The Lease watch wakes this node when the holder releases; started on first need (see wiring), done once released. */
  readonly leaseWatch?: { start(signal: AbortSignal): Promise<void>; done?(): void } | undefined;
}

/**
 * §4 step 6 / 9.2: serial only with a Node known since start (2.3: without one the machine applies
 * without the lock; upstream fails forever there). `reserve` takes the Lease, `decide` only reads it.
 */
export function serialGate(d: SerialGateDeps): Gate {
  const lock = { kube: d.kube, clock: d.clock, log: d.log, identity: d.hostName.toLowerCase() };
  return {
    name: "serial-lock",
    phase: "admit",
    step: "failed acquiring serial reconciliation lock",
    online: true,
    async decide(ctx) {
      if (!ctx.serial || !ctx.nodeKnownAtStart || ctx.secret === undefined) return { kind: "proceed" };
      const name = ctx.secret.metadata.name ?? "";
      const lease = await getLease(d.kube, name, ctx.signal);
      const hold = serialLockHold(leaseSpecOf(lease), lock.identity, name, d.clock.now());
      return hold === undefined ? { kind: "proceed" } : { kind: "hold", hold };
    },
    async reserve(ctx) {
      if (!ctx.serial || !ctx.nodeKnownAtStart || ctx.secret === undefined) return { kind: "reserved" };
      await d.leaseWatch?.start(ctx.signal);
      const outcome = await acquireSerialLock(lock, ctx.secret, ctx.signal);
      if (!outcome.held) return { kind: "hold", hold: outcome.hold };
      const lease = ctx.secret.metadata.name ?? "";
      return {
        kind: "reserved",
        reservation: {
          release: async (signal) => {
            await step("failed releasing serial reconciliation lock", () => releaseSerialLock(lock, lease, signal));
            d.leaseWatch?.done?.();
          },
        },
      };
    },
  };
}
