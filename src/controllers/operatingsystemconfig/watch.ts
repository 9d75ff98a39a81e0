import { parseDuration } from "../../config/index.ts";
import type { Clock } from "../../clock/index.ts";
import {
  and,
  type Controller,
  defaultControllerRateLimiter,
  enqueueMapped,
  type EventHandler,
  keyString,
  newController,
  nodes,
  type ObjectKey,
  objectKeyOf,
  or,
  type Predicate,
  type Reconcile,
} from "../../kube/index.ts";
import type { Kube, KubeObject, Reader, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { NodeIdentity } from "./apply/ports.ts";
import { isSerial } from "./constants.ts";
import { rolloutParallelism } from "./features/rollout/index.ts";
import { namedSecretPredicate } from "./input/gardenadm.ts";
import { oscDataIdentity } from "./input/secret.ts";
import { blockingPodsPredicate } from "./features/blockingpods/index.ts";
import { holdAnnotationPredicate } from "./features/hold/index.ts";
import { disruptionHooksPredicate } from "./features/hooks/index.ts";
import { maintenanceWindowPredicate } from "./features/maintenance-window/index.ts";
import { inPlaceNodePredicate, nodeToSecret } from "./features/inplace/index.ts";

const controllerName = "operatingsystemconfig";
/** Each reconcile runs under this deadline (§2.4). */
const reconcileTimeoutMs = 3 * 60 * 1000;
const maxConcurrentReconciles = 1;
const reconciliationDelayAnnotation = "node-agent.gardener.cloud/reconciliation-delay";

/**
 * §2.1: Create always; Update only when the osc.yaml bytes differ; Generic never. Delete passes too
 * (upstream drops it): the reconcile then reports the missing Secret on the Node at once (report/reporter.ts).
 */
export const secretPredicate: Predicate<KubeObject> = {
  create: () => true,
  update: (oldObj, newObj) => oscDataIdentity(oldObj) !== oscDataIdentity(newObj),
  delete: () => true,
  generic: () => false,
};

/**
 * The pause before a chunked-rollout node first looks at a new Secret version (issue 25), by its pool's
 * parallelism N; `secret` is the new version. The rollout gate's, so that its first look takes at once.
 */
export type RolloutFirstLookPause = (n: number, secret: KubeObject) => number;

/**
 * The per-node reconciliation delay (§2.1): 0 while the Node is unknown, else the annotation (last good value
 * when unreadable); in a chunked rollout the rollout's first-look pause instead (0 without `rolloutPause`).
 */
export class ReconciliationDelay {
  #last = 0;

  /** `reader` is the Node cache in the agent (like upstream's cached client): no API call before the enqueue. */
  constructor(
    private readonly reader: Pick<Reader, "get">,
    private readonly node: NodeIdentity,
    private readonly log: Logger,
    private readonly rolloutPause?: RolloutFirstLookPause,
  ) {}

  get lastKnownMs(): number {
    return this.#last;
  }

  /** `secret`: the new version (for the rollout's first-look pause). */
  async get(signal: AbortSignal, secret?: KubeObject): Promise<number> {
    const name = this.node.nodeName;
    if (name === undefined) return 0;
    let node: KubeObject;
    try {
      node = await this.reader.get<KubeObject>(nodes, "", name, { signal });
    } catch (err) {
      // Falling back to the last known delay is the documented behaviour when the Node cannot be read.
      this.log.info("Cannot read node for the reconciliation delay, using the last known value", { err, delayMs: this.#last });
      return this.#last;
    }
    // Chunked rollouts pace the pool by slots: the annotation's delay would only stretch each chunk (issue 16).
    // The rollout's own first-look pause comes here instead, before the reconcile: a new version reaches the
    // whole pool at once, and 200 reconciles at once held up the first takes by seconds (issue 25).
    const n = rolloutParallelism(node.metadata.annotations);
    if (n !== undefined) return secret === undefined || this.rolloutPause === undefined ? 0 : this.rolloutPause(n, secret);
    const text = node.metadata.annotations?.[reconciliationDelayAnnotation];
    if (text === undefined) return this.#last;
    try {
      const ms = parseDuration(text);
      this.#last = Math.max(0, ms);
    } catch (err) {
      this.log.info("Cannot parse the reconciliation delay, using the last known value", { err, value: text, delayMs: this.#last });
    }
    return this.#last;
  }
}

export interface SecretHandlerDeps {
  readonly delay: ReconciliationDelay;
  /** Enqueue after a delay (the work queue's addAfter). */
  readonly addAfter: (key: ObjectKey, ms: number) => void;
  readonly log: Logger;
  /** Process lifetime; aborts a pending delay lookup on shutdown. */
  readonly signal: AbortSignal;
}

/** Create and Delete → enqueue now; Update → now for serial Secrets, else after the reconciliation delay. */
export function secretHandler(deps: SecretHandlerDeps): EventHandler<KubeObject> {
  return {
    create: (obj, q) => q.add(objectKeyOf(obj)),
    update: (_old, obj, q) => {
      const key = objectKeyOf(obj);
      if (isSerial(obj)) return q.add(key);
      deps.delay.get(deps.signal, obj).then(
        (ms) => {
          deps.log.info("Enqueuing operating system config secret after the reconciliation delay", { delayMs: ms });
          if (ms > 0) deps.addAfter(key, ms);
          else q.add(key);
        },
        (err: unknown) => deps.log.error("Failed computing the reconciliation delay", { err }),
      );
    },
    delete: (obj, q) => q.add(objectKeyOf(obj)),
    generic: () => {},
  };
}

/** Node events (hold, disruption hooks, blocking pods annotations) wake the OSC Secret's key: a released hold applies at once. */
export const nodeHandler = (secret: ObjectKey): EventHandler<KubeObject> => enqueueMapped(() => [secret]);

/** Builds the controller: one worker, 3-minute deadline, the name-scoped Secret source behind the predicate. */
export function newOscController(opts: {
  readonly reconcile: Reconcile;
  readonly source: Source<KubeObject>;
  /** The own Node (§2.2): wakes the drain gate (InPlaceUpdate/ReadyForUpdate) and the hold annotation. */
  readonly nodeSource?: Source<KubeObject>;
  readonly kube: Kube;
  /** Where the reconciliation delay annotation is read (the Node cache); the API server when absent. */
  readonly nodeReader?: Pick<Reader, "get">;
  readonly node: NodeIdentity;
  readonly clock: Clock;
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly onRestartRequested?: (why: string) => void;
  /** The OSC Secret's key: looked at once at start, woken by the hold annotation. */
  readonly secretKey?: ObjectKey;
  /** Only this Secret is reconciled (the gardenadm-mode cache holds every pool's OSC Secret). */
  readonly secretName?: string;
  /** Retry backoff cap after failed reconciles; client-go's 1000 s when absent (tests shorten it). */
  readonly backoffMaxMs?: number;
  /** A chunked rollout's first-look pause, served as the Secret update's delay (issue 25). */
  readonly rolloutPause?: RolloutFirstLookPause;
}): Controller {
  const c = newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: maxConcurrentReconciles,
    timeoutMs: reconcileTimeoutMs,
    log: opts.log,
    clock: opts.clock,
    onRestartRequested: opts.onRestartRequested,
    rateLimiter: opts.backoffMaxMs === undefined ? undefined : defaultControllerRateLimiter(opts.clock, { maxDelayMs: opts.backoffMaxMs }),
  });
  const delay = new ReconciliationDelay(opts.nodeReader ?? opts.kube, opts.node, opts.log, opts.rolloutPause);
  c.watch(
    opts.source,
    secretHandler({ delay, addAfter: (k, ms) => c.queue.addAfter(keyString(k), ms), log: opts.log, signal: opts.signal }),
    opts.secretName === undefined ? secretPredicate : and(secretPredicate, namedSecretPredicate(opts.secretName)),
  );
  if (opts.nodeSource !== undefined) c.watch(opts.nodeSource, enqueueMapped(nodeToSecret), inPlaceNodePredicate);
  if (opts.nodeSource !== undefined && opts.secretKey !== undefined)
    c.watch(
      opts.nodeSource,
      nodeHandler(opts.secretKey),
      or(holdAnnotationPredicate, maintenanceWindowPredicate, disruptionHooksPredicate, blockingPodsPredicate),
    );
  // A Secret missing at start sends no event: one look at start reports it (deduplicated with the
  // informer's create when the Secret exists).
  if (opts.secretKey !== undefined) c.add(opts.secretKey);
  return c;
}
