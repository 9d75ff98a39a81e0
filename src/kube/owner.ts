import type { KubeObject, OwnerReference } from "./types.ts";

/** The controller owner reference to a core/v1 object (`kind` Node, Secret, …): the owner's deletion collects the owned one. */
export const controllerRef = (kind: string, owner: KubeObject): OwnerReference => ({
  apiVersion: "v1",
  kind,
  name: owner.metadata.name ?? "",
  uid: owner.metadata.uid ?? "",
  controller: true,
  blockOwnerDeletion: true,
});
