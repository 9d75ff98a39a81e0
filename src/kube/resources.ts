/** A Kubernetes resource the agent talks to, addressed by group/version/resource. */
export interface Resource {
  readonly group: string; // "" for the core group
  readonly version: string;
  readonly resource: string; // plural, lower-case
  readonly kind: string;
  readonly namespaced: boolean;
}

export const nodes: Resource = { group: "", version: "v1", resource: "nodes", kind: "Node", namespaced: false };
export const secrets: Resource = { group: "", version: "v1", resource: "secrets", kind: "Secret", namespaced: true };
export const events: Resource = { group: "", version: "v1", resource: "events", kind: "Event", namespaced: true };
export const pods: Resource = { group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true };
export const leases: Resource = {
  group: "coordination.k8s.io",
  version: "v1",
  resource: "leases",
  kind: "Lease",
  namespaced: true,
};
export const certificateSigningRequests: Resource = {
  group: "certificates.k8s.io",
  version: "v1",
  resource: "certificatesigningrequests",
  kind: "CertificateSigningRequest",
  namespaced: false,
};

export function apiVersionOf(r: Resource): string {
  return r.group === "" ? r.version : `${r.group}/${r.version}`;
}

/** REST path of a collection or an object: /api/v1/namespaces/ns/secrets[/name[/sub]] */
export function resourcePath(r: Resource, namespace?: string, name?: string, subresource?: string): string {
  let p = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (r.namespaced && namespace !== undefined && namespace !== "") p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.resource}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) p += `/${subresource}`;
  return p;
}
