import type { KubeObject, Reader, Reconcile } from "../../kube/index.ts";
import { errorText, StepError } from "../../log/index.ts";
import { nodes } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { HealthChecker } from "./checker.ts";
import { checkIntervalMs } from "./watch.ts";

export interface HealthCheckDeps {
  /** Cached read of the own Node (informer). */
  readonly nodes: Reader;
  /** containerd and kubelet in production; each keeps its failure history across passes. */
  readonly checkers: readonly HealthChecker[];
  readonly log: Logger;
}

/** The Node could not be read; retried with backoff (NotFound included, as upstream). */
export class HealthCheckNodeError extends StepError {
  override readonly name = "HealthCheckNodeError";
  constructor(cause: unknown) {
    super("error retrieving object from store", cause);
  }
}

/** One or more checkers failed; `errors` holds each failure (named by checker in the message). */
export class HealthCheckFailedError extends AggregateError {
  override readonly name = "HealthCheckFailedError";
  constructor(failures: ReadonlyArray<{ readonly checker: string; readonly error: unknown }>) {
    super(
      failures.map((f) => f.error),
      `health checks failed: ${failures.map((f) => `${f.checker}: ${errorText(f.error)}`).join("; ")}`,
    );
  }
}

/**
 * The health-check controller (controllers.md §7): run every checker in parallel on its own copy of
 * the Node; any failure fails the pass (backoff), else look again after 30 s.
 */
export function createReconciler(deps: HealthCheckDeps): Reconcile {
  return async (key, signal) => {
    deps.log.debug("Reconcile health checks");
    let node: KubeObject;
    try {
      node = await deps.nodes.get<KubeObject>(nodes, "", key.name, { signal });
    } catch (err) {
      throw new HealthCheckNodeError(err);
    }
    const results = await Promise.allSettled(deps.checkers.map((c) => c.check(structuredClone(node), signal)));
    const failures = results.flatMap((r, i) =>
      r.status === "rejected" ? [{ checker: deps.checkers[i]?.name ?? "", error: r.reason as unknown }] : [],
    );
    if (failures.length > 0) throw new HealthCheckFailedError(failures);
    return { requeueAfterMs: checkIntervalMs };
  };
}
