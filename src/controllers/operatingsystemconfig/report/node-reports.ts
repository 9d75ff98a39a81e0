import type { Clock } from "../../../clock/index.ts";
import { type ExistingCondition, type Kube, type KubeObject, nodes } from "../../../kube/index.ts";
import type { Logger } from "../../../log/index.ts";
import { conditionUnchanged, findOscCondition, oscCondition, type OscConditionState } from "./condition.ts";

/** Sends the Node condition (only when it changed) and other Node patches of the reporter, best effort. */
export class NodeReports {
  /** The condition this process last sent (fresher than the Node read at the start of a reconcile). */
  #sent: ExistingCondition | undefined;

  constructor(private readonly deps: { readonly kube: Kube; readonly clock: Clock; readonly log: Logger }) {}

  existing(node: KubeObject | undefined): ExistingCondition | undefined {
    return this.#sent ?? findOscCondition(node);
  }

  async condition(node: KubeObject | undefined, state: OscConditionState, signal: AbortSignal | undefined): Promise<void> {
    if (node === undefined) return;
    const existing = this.existing(node);
    if (conditionUnchanged(existing, state)) return;
    const condition = oscCondition(state, this.deps.clock.now(), existing);
    // Only this condition: the server merges conditions by type, so kubelet's are never overwritten.
    await this.patch(node, "condition", { status: { conditions: [condition] } }, "status", signal);
    this.#sent = { ...condition };
  }

  async patch(
    node: KubeObject,
    what: string,
    body: Record<string, unknown>,
    subresource: "status" | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    try {
      await this.deps.kube.patch(nodes, "", node.metadata.name ?? "", "strategic", body, {
        ...(subresource ? { subresource } : {}),
        ...(signal !== undefined ? { signal } : {}),
      });
    } catch (err) {
      // Best effort, like events: the next reconcile sends it again (the condition differs from what is stored).
      this.#sent = undefined;
      this.deps.log.error(`Failed reporting operating system config ${what} on the node`, { err });
    }
  }
}
