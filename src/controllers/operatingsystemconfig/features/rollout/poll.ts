import type { Clock } from "../../../../clock/index.ts";
import type { Kube } from "../../../../kube/index.ts";
import { readLease } from "./lease-slots.ts";
import { decide, slotsOf } from "./slots.ts";
import type { RolloutTimings } from "./timings.ts";

/**
 * A waiting node looks at the pool's Lease every this × random(0.5, 1.5) (issue 25): with K waiters
 * the pool polls about K / this per second, and a freed slot is seen after about this / K.
 */
const slotPollMs = 4_000;

export interface SlotPollDeps {
  readonly kube: Kube;
  readonly clock: Clock;
  readonly timings: RolloutTimings;
  /** Enqueues the OSC Secret's reconcile (which then takes the slot as before). */
  readonly wake: () => void;
  /** Process lifetime. */
  readonly signal: AbortSignal;
}

/** What a waiting node polls for: a slot it would take for `checksum` on the Lease named `pool`. */
interface Wait {
  readonly pool: string;
  readonly me: string;
  readonly checksum: string;
  readonly n: number;
  /**
   * The mean pause between looks when not `slotPollMs`: a halted pool waits for an operator, not for the
   * next handoff, so 200 halted nodes do not GET the Lease 50 times a second for as long as the halt lasts.
   */
  readonly everyMs?: number;
}

/**
 * Issue 25: a node waiting for a rollout slot polls the pool's Lease (a GET now and then) instead of
 * watching it, so a slot change is no longer sent to every waiting node; once a GET shows a slot this node would
 * take, it enqueues its reconcile once and stops (the reconcile polls again if it still has to wait).
 */
export class SlotPoll {
  #wait: Wait | undefined;
  #running = false;

  constructor(private readonly d: SlotPollDeps) {}

  /** Polls for `w` (replacing what was polled for); one loop per agent. */
  wait(w: Wait): void {
    this.#wait = w;
    if (this.#running) return;
    this.#running = true;
    this.#loop().finally(() => {
      this.#running = false;
    });
  }

  /** This node holds a slot (or needs none): nothing to poll for. */
  stop(): void {
    this.#wait = undefined;
  }

  async #loop(): Promise<void> {
    while (this.#wait !== undefined && !this.d.signal.aborted) {
      try {
        await this.d.clock.sleep((this.#wait?.everyMs ?? slotPollMs) * (0.5 + Math.random()), this.d.signal);
      } catch {
        return; // aborted
      }
      const w = this.#wait;
      if (w === undefined) return;
      try {
        const lease = await readLease(this.d.kube, w.pool, this.d.signal);
        if (this.#wait !== w) continue; // replaced or stopped meanwhile
        const decision = decide(slotsOf(lease?.metadata.annotations), w.me, w.checksum, w.n, this.d.clock.now(), this.d.timings);
        if (decision.kind === "wait" || decision.kind === "halted") continue;
        this.#wait = undefined;
        this.d.wake();
      } catch {
        // A failed GET: the next poll, or the hold's requeue, looks again.
      }
    }
  }
}
