import type { ApplyPorts } from "./ports.ts";

/**
 * Quiet time after an applied version before the heap is shrunk: a version that follows at once (a
 * back-to-back update, a rollout's next step) still finds the apply's code compiled.
 */
const shrinkQuietMs = 10_000;

/**
 * Shrinks the heap once an applied version has been left alone for a while. JSC's shrink collects in full,
 * drops the compiled code of every function not on the stack (the apply path's, which runs again only for
 * the next version) and returns free pages: an agent otherwise keeps the apply's code and garbage for its
 * lifetime. A full collection, so never right after an apply: a next version would wait for it.
 */
export class HeapShrinker {
  #generation = 0;

  constructor(private readonly ports: Pick<ApplyPorts, "clock" | "log">) {}

  /** A version was applied: shrink after the quiet time unless another apply starts first. */
  applied(signal: AbortSignal): void {
    const generation = ++this.#generation;
    this.ports.clock.sleep(shrinkQuietMs, signal).then(
      () => {
        if (generation !== this.#generation) return;
        const start = performance.now();
        Bun.shrink();
        this.ports.log.debug("Shrank the heap after the apply", { ms: Math.round(performance.now() - start) });
      },
      // Shutting down: nothing to give back.
      () => {},
    );
  }

  /** An apply starts: a pending shrink is dropped. */
  applying(): void {
    this.#generation++;
  }
}
