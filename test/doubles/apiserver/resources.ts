/** The resource kinds the simulator serves, with the per-type behaviour switches of kube-apiserver. */

export interface ResourceDef {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly subresources: readonly string[];
  /** PUT on a missing object creates it (true only for events among ours). */
  readonly allowCreateOnUpdate: boolean;
  /** DELETE answers with the object instead of a Status (pods). */
  readonly returnDeletedObject: boolean;
  /** The main resource ignores `status` on update; status is written through the subresource. */
  readonly hasStatus: boolean;
  /** Another version of a stored type (events.k8s.io Events are core Events in storage): the storing def's resource.group. */
  readonly storedAs?: string;
}

function def(d: Partial<ResourceDef> & Pick<ResourceDef, "resource" | "kind" | "namespaced">): ResourceDef {
  return {
    group: "",
    version: "v1",
    subresources: [],
    allowCreateOnUpdate: false,
    returnDeletedObject: false,
    hasStatus: false,
    ...d,
  };
}

const resourceDefs: readonly ResourceDef[] = [
  def({ resource: "namespaces", kind: "Namespace", namespaced: false, subresources: ["status"], hasStatus: true }),
  def({ resource: "nodes", kind: "Node", namespaced: false, subresources: ["status"], hasStatus: true }),
  def({ resource: "secrets", kind: "Secret", namespaced: true }),
  def({ resource: "configmaps", kind: "ConfigMap", namespaced: true }),
  def({ resource: "events", kind: "Event", namespaced: true, allowCreateOnUpdate: true }),
  def({
    resource: "pods",
    kind: "Pod",
    namespaced: true,
    subresources: ["status"],
    hasStatus: true,
    returnDeletedObject: true,
  }),
  def({ group: "events.k8s.io", resource: "events", kind: "Event", namespaced: true, allowCreateOnUpdate: true, storedAs: "events." }),
  def({ group: "coordination.k8s.io", resource: "leases", kind: "Lease", namespaced: true }),
  def({
    group: "certificates.k8s.io",
    resource: "certificatesigningrequests",
    kind: "CertificateSigningRequest",
    namespaced: false,
    subresources: ["status", "approval"],
    hasStatus: true,
  }),
];

export function apiVersionOfDef(d: ResourceDef): string {
  return d.group === "" ? d.version : `${d.group}/${d.version}`;
}

/** Finds a resource by plural name (optionally group-qualified: "leases.coordination.k8s.io"). */
export function findDef(name: string): ResourceDef | undefined {
  return resourceDefs.find((d) => d.resource === name || `${d.resource}.${d.group}` === name);
}

/** The def whose objects are stored for `d` (itself, unless `d` is another version of a stored type). */
export function storageOf(d: ResourceDef): ResourceDef {
  if (d.storedAs === undefined) return d;
  return resourceDefs.find((x) => `${x.resource}.${x.group}` === d.storedAs) ?? d;
}

export function findDefByPath(group: string, version: string, resource: string): ResourceDef | undefined {
  return resourceDefs.find((d) => d.group === group && d.version === version && d.resource === resource);
}

/** Accepts "secrets", "leases.coordination.k8s.io" or anything with a `resource` (and `group`) field. */
export type ResourceRef = string | { readonly resource: string; readonly group?: string };

export function resolveDef(ref: ResourceRef): ResourceDef {
  const d =
    typeof ref === "string"
      ? findDef(ref)
      : resourceDefs.find((x) => x.resource === ref.resource && (ref.group === undefined || ref.group === x.group));
  if (d === undefined) throw new Error(`simulator does not serve resource ${JSON.stringify(ref)}`);
  return d;
}
