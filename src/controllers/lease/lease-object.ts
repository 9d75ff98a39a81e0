import { controllerRef, type KubeObject, microTime, type OwnerReference } from "../../kube/index.ts";

const leaseNamePrefix = "gardener-node-agent-";

/** `gardener-node-agent-<nodeName>` (gardenerutils.NodeAgentLeaseName). */
export const leaseName = (nodeName: string): string => `${leaseNamePrefix}${nodeName}`;

/** The existing Lease already has a controller owner that is not this Node (AlreadyOwnedError). */
export class AlreadyOwnedError extends Error {
  override readonly name = "AlreadyOwnedError";
  constructor(lease: string, owner: OwnerReference) {
    super(`Object kube-system/${lease} is already owned by another ${owner.kind} controller ${owner.name}`);
  }
}

const groupOf = (apiVersion: string): string => (apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "");

/**
 * controllerutil.SetControllerReference: upsert a controller reference to the Node, matched by
 * (API group, kind, name) so a re-created Node's new UID replaces the old one. A different
 * controller owner is left in place and reported.
 */
export function withControllerRef(
  refs: readonly OwnerReference[],
  node: KubeObject,
  lease: string,
): { refs: OwnerReference[]; error?: AlreadyOwnedError } {
  const ref = controllerRef("Node", node);
  const same = (r: OwnerReference) => groupOf(r.apiVersion) === "" && r.kind === ref.kind && r.name === ref.name;
  const other = refs.find((r) => r.controller === true && !same(r));
  if (other !== undefined) return { refs: [...refs], error: new AlreadyOwnedError(lease, other) };
  const i = refs.findIndex(same);
  if (i < 0) return { refs: [...refs, ref] };
  const out = [...refs];
  out[i] = ref;
  return { refs: out };
}

export interface DesiredLease {
  readonly lease: KubeObject;
  /** Set when the controller reference could not be set (logged; the spec is written anyway). */
  readonly ownerError?: AlreadyOwnedError;
}

/**
 * The heartbeat Lease (controllers.md §3): `existing` (as read, or undefined) with the controller
 * reference upserted and `spec` replaced completely — any other spec field is dropped.
 */
export function desiredLease(opts: {
  readonly existing: KubeObject | undefined;
  readonly node: KubeObject;
  readonly namespace: string;
  readonly leaseDurationSeconds: number;
  readonly nowMs: number;
}): DesiredLease {
  const name = leaseName(opts.node.metadata.name ?? "");
  const base = opts.existing ?? { metadata: { name, namespace: opts.namespace } };
  const owners = withControllerRef(base.metadata.ownerReferences ?? [], opts.node, name);
  const lease: KubeObject = {
    ...base,
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { ...base.metadata, name, namespace: opts.namespace, ownerReferences: owners.refs },
    spec: { holderIdentity: name, leaseDurationSeconds: opts.leaseDurationSeconds, renewTime: microTime(opts.nowMs) },
  };
  return owners.error !== undefined ? { lease, ownerError: owners.error } : { lease };
}
