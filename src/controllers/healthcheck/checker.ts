import type { KubeObject } from "../../kube/index.ts";

/** One component's health check; it keeps its own failure history between passes (in memory only). */
export interface HealthChecker {
  readonly name: string;
  /** Works on a private copy of the Node; throws to make the pass fail (retried with backoff). */
  check(node: KubeObject, signal: AbortSignal): Promise<void>;
}

/** A component failing this long in a row gets restarted. */
export const maxFailureDurationMs = 60_000;
/** The action of every health-check event; the reason is the checker's name. */
export const eventAction = "HealthCheck";
