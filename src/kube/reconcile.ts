/** What a reconcile works on: a namespaced name, never the event that woke it (level-based). */
export interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

export const keyString = (k: ObjectKey): string => (k.namespace === "" ? k.name : `${k.namespace}/${k.name}`);

/** Done, or look again after a delay. Retrying after a failure is expressed by throwing. */
export interface Result {
  readonly requeueAfterMs?: number;
}

export type Reconcile = (key: ObjectKey, signal: AbortSignal) => Promise<Result>;

/** Reported (event + log) but never retried. */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * A controller decided the process must restart (node appeared, own unit or binary changed).
 * The runtime finishes in-flight work, notifies systemd and exits 0; systemd starts it again.
 */
export class RestartRequested extends Error {
  override readonly name = "RestartRequested";
  constructor(readonly why: string) {
    super(`restart requested: ${why}`);
  }
}
