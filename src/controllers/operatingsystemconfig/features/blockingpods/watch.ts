import type { Clock } from "../../../../clock/index.ts";
import { Informer, type Kube, type KubeObject, type ObjectKey, pods, type Source } from "../../../../kube/index.ts";
import type { Logger } from "../../../../log/index.ts";
import { type EventRecorder, nodeRef } from "../../../events.ts";
import { blockingPodsAnnotation, labelSelectorProblem } from "./selector.ts";

/** How long a reconcile waits for the pod watch's first list. */
const syncWaitMs = 10_000;

/** The server-side filter: pods bound to this node that are running (the authorizer needs the node name). */
export const runningPodsOnNode = (nodeName: string): string => `spec.nodeName=${nodeName},status.phase=Running`;

/** The Node's blocking-pods selector: absent, valid, or invalid (with what is wrong, never the value). */
export type BlockingSelector =
  | { readonly kind: "none" }
  | { readonly kind: "ok"; readonly selector: string }
  | { readonly kind: "invalid"; readonly problem: string };

export function blockingSelectorOf(node: KubeObject | undefined): BlockingSelector {
  const value = node?.metadata.annotations?.[blockingPodsAnnotation]?.trim();
  if (value === undefined || value === "") return { kind: "none" };
  const problem = labelSelectorProblem(value);
  return problem === undefined ? { kind: "ok", selector: value } : { kind: "invalid", problem };
}

export interface BlockingPodsWatchSetup {
  readonly kube: Kube;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: EventRecorder;
  readonly nodeName: string;
  /** Process lifetime. */
  readonly signal: AbortSignal;
}

/** What the blocking-pods gate asks the live agent: the running pods on this node that match. */
export interface BlockingPodsSource {
  matching(selector: string, signal: AbortSignal): Promise<readonly KubeObject[]>;
  /** The gate's verdict: while the node waits, pod events wake the OSC Secret's key. */
  waiting(value: boolean): void;
}

interface Running {
  readonly selector: string;
  readonly informer: Informer<KubeObject>;
  readonly stop: AbortController;
}

/**
 * The pod watch of the blocking-pods gate. It exists only while the Node carries a valid
 * `node-agent.gardener.cloud/blocking-pods` selector (it follows the Node informer), lists and watches
 * with the field selector spec.nodeName=<node> (no cluster-wide list, no polling), and while a disruptive
 * apply waits every pod event enqueues the OSC Secret.
 */
export class BlockingPodsWatch implements BlockingPodsSource {
  #running: Running | undefined;
  #waiting = false;
  #warned = "";
  #wake: () => void = () => {};

  constructor(private readonly s: BlockingPodsWatchSetup) {}

  /** Follows the own Node (annotation set, changed, removed) and wakes `secret` on pod events while waiting. */
  attach(c: { add(key: ObjectKey): void }, nodeSource: Source<KubeObject>, secret: ObjectKey): void {
    this.#wake = () => c.add(secret);
    nodeSource.subscribe({
      create: (n) => this.follow(n),
      update: (_o, n) => this.follow(n),
      delete: () => this.#stop(),
      generic: () => {},
    });
  }

  /** Keeps the watch in step with the Node's annotation: started, restarted for a new selector, stopped. */
  follow(node: KubeObject): void {
    const sel = blockingSelectorOf(node);
    if (sel.kind === "invalid") this.#warn(node, sel.problem);
    else this.#warned = "";
    if (sel.kind !== "ok") return this.#stop();
    if (this.#running?.selector === sel.selector) return;
    this.#stop();
    this.#start(sel.selector);
  }

  waiting(value: boolean): void {
    this.#waiting = value;
  }

  async matching(selector: string, signal: AbortSignal): Promise<readonly KubeObject[]> {
    // The reconcile may see the annotation before the Node informer's handler did.
    if (this.#running?.selector !== selector) {
      this.#stop();
      this.#start(selector);
    }
    const informer = (this.#running as Running).informer;
    await informer.waitForSync(AbortSignal.any([signal, AbortSignal.timeout(syncWaitMs)]));
    return informer.list();
  }

  /** Whether a pod watch runs now (tests and `status`). */
  get selector(): string | undefined {
    return this.#running?.selector;
  }

  #start(selector: string): void {
    const informer = new Informer<KubeObject>({
      kube: this.s.kube,
      clock: this.s.clock,
      log: this.s.log,
      resource: pods,
      namespace: "",
      selectors: { fieldSelector: runningPodsOnNode(this.s.nodeName), labelSelector: selector },
    });
    const wake = () => {
      if (this.#waiting) this.#wake();
    };
    informer.addHandler({ onAdd: wake, onUpdate: wake, onDelete: wake });
    const stop = new AbortController();
    this.#running = { selector, informer, stop };
    this.s.log.info("Watching the pods that block disruptive applies", { selector });
    informer
      .run(AbortSignal.any([this.s.signal, stop.signal]))
      .catch((err: unknown) => this.s.log.error("Blocking pods watch ended", { err }));
  }

  #stop(): void {
    if (this.#running === undefined) return;
    this.s.log.info("Stopping the blocking pods watch", { selector: this.#running.selector });
    this.#running.stop.abort();
    this.#running = undefined;
    // A node no longer waiting for pods may apply at once.
    if (this.#waiting) this.#wake();
    this.#waiting = false;
  }

  #warn(node: KubeObject, problem: string): void {
    const value = node.metadata.annotations?.[blockingPodsAnnotation] ?? "";
    if (this.#warned === value) return;
    this.#warned = value;
    void this.s.events.event(
      nodeRef(node),
      "Warning",
      "InvalidBlockingPodsSelector",
      "Reconcile",
      `Node annotation ${blockingPodsAnnotation} is not a valid label selector (${problem}); it is ignored`,
    );
  }
}
