import type { Logger } from "../../log/index.ts";

/** A controller (or the cache) ended while the agent was meant to keep running. */
export class ControllerExitedError extends Error {
  override readonly name = "ControllerExitedError";
  constructor(
    readonly controller: string,
    options?: ErrorOptions,
  ) {
    super(options?.cause === undefined ? `controller ${controller} stopped unexpectedly` : `controller ${controller} failed`, options);
  }
}

export interface Supervised {
  readonly name: string;
  /** Settles when the controller's workers have all returned. */
  readonly run: Promise<unknown>;
}

/**
 * Watches long-running parts that must only end on shutdown: one that rejects, or returns while
 * `signal` is not aborted (a restart request aborts it first), is logged with its name and stops
 * the agent with ControllerExitedError, so the run command exits 1 and systemd restarts the agent,
 * instead of living on without that controller while /readyz says 200. Resolves when all settled.
 */
export function supervise(
  parts: readonly Supervised[],
  deps: { readonly signal: AbortSignal; readonly stop: (reason: Error) => void; readonly log: Logger },
): Promise<void> {
  const { signal, stop, log } = deps;
  return Promise.all(
    parts.map(({ name, run }) =>
      run.then(
        () => {
          if (signal.aborted) return;
          log.error("Controller stopped unexpectedly", { controller: name });
          stop(new ControllerExitedError(name));
        },
        (err: unknown) => {
          if (signal.aborted && err === signal.reason) return;
          log.error("Controller failed", { controller: name, err });
          stop(new ControllerExitedError(name, { cause: err }));
        },
      ),
    ),
  ).then(() => undefined);
}
