import { type Kube, type KubeObject, type Predicate, pods } from "../../../../kube/index.ts";
import type { Gate, GateContext, GateHold } from "../../gates/gate.ts";
import { blockingPodsAnnotation } from "./selector.ts";
import { type BlockingPodsSource, blockingSelectorOf, runningPodsOnNode } from "./watch.ts";

/** The message names this many pods, then how many more. */
const namedPods = 5;

export interface BlockingPodsGateDeps {
  readonly kube: Kube;
  readonly syncPeriodMs: number;
  /** The live agent's pod watch; `diff` (absent) lists once with the same selectors. */
  readonly watch?: BlockingPodsSource;
}

const podName = (p: KubeObject): string => `${p.metadata.namespace ?? ""}/${p.metadata.name ?? ""}`;

async function runningMatches(d: BlockingPodsGateDeps, ctx: GateContext, selector: string): Promise<readonly KubeObject[]> {
  if (d.watch !== undefined && !ctx.dryRun) return d.watch.matching(selector, ctx.signal);
  const nodeName = ctx.node?.metadata.name ?? "";
  const list = await d.kube.list<KubeObject>(pods, "", {
    fieldSelector: runningPodsOnNode(nodeName),
    labelSelector: selector,
    signal: ctx.signal,
  });
  return list.items;
}

async function blockedBy(d: BlockingPodsGateDeps, ctx: GateContext): Promise<GateHold | undefined> {
  const sel = blockingSelectorOf(ctx.node);
  // An invalid selector is reported by the watch (Warning event) and ignored: never blocked forever by a typo.
  if (sel.kind !== "ok") return undefined;
  const disruption = await ctx.disruption();
  if (!disruption.disruptive) return undefined;
  const found = [...(await runningMatches(d, ctx, sel.selector))].map(podName).sort();
  if (found.length === 0) return undefined;
  const shown = found.slice(0, namedPods).join(", ");
  const more = found.length > namedPods ? ` and ${found.length - namedPods} more` : "";
  return {
    reason: "WaitingForBlockingPods",
    message: `Disruptive apply of operating system config ${ctx.checksum.slice(0, 12)} (${disruption.text}) waits while ${found.length === 1 ? "a running pod on this node matches" : `${found.length} running pods on this node match`} ${blockingPodsAnnotation} (${sel.selector}): ${shown}${more}`,
    requeueAfterMs: d.syncPeriodMs,
  };
}

/**
 * A disruptive apply waits while a running pod on this node matches the Node's blocking-pods selector
 * (issue 26); the pod watch wakes the reconcile when they go. Before the serial lock and the rollout slot.
 */
export const blockingPodsGate = (d: BlockingPodsGateDeps): Gate => ({
  name: "blocking-pods",
  phase: "admit",
  online: true,
  step: "failed looking for blocking pods",
  async decide(ctx) {
    const hold = await blockedBy(d, ctx);
    if (!ctx.dryRun) d.watch?.waiting(hold !== undefined);
    return hold === undefined ? { kind: "proceed" } : { kind: "hold", hold };
  },
});

const selectorOf = (o: KubeObject): string => o.metadata.annotations?.[blockingPodsAnnotation] ?? "";

/** Node events that matter to the blocking-pods gate: its annotation set, changed or removed. */
export const blockingPodsPredicate: Predicate<KubeObject> = {
  create: () => false,
  update: (oldObj, newObj) => selectorOf(oldObj) !== selectorOf(newObj),
  delete: () => false,
  generic: () => false,
};
