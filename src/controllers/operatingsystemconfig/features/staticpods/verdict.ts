import type { KubeObject } from "../../../../kube/index.ts";
import { configMirrorAnnotation, isRecord } from "./manifests.ts";

/** Either every static pod runs as its manifest says, or the first reason it does not. */
export type StaticPodsVerdict = { readonly converged: true } | { readonly converged: false; readonly why: string };

/** Mirror pod name without the `-<nodeName>` suffix kubelet appends. */
export const staticPodName = (mirrorName: string, nodeName: string): string =>
  mirrorName.endsWith(`-${nodeName}`) ? mirrorName.slice(0, -(nodeName.length + 1)) : mirrorName;

function phaseOf(pod: KubeObject): string {
  const status = pod["status"];
  return isRecord(status) && typeof status["phase"] === "string" ? status["phase"] : "";
}

function isReady(pod: KubeObject): boolean {
  const status = pod["status"];
  const conditions = isRecord(status) && Array.isArray(status["conditions"]) ? status["conditions"] : [];
  return conditions.some((c: unknown) => isRecord(c) && c["type"] === "Ready" && c["status"] === "True");
}

/**
 * 9.1: the mirror pods of this node (`static-pod=true`, already filtered by node) must match the
 * desired name → hash map exactly, and each must be Running or Succeeded and Ready.
 */
export function staticPodsVerdict(
  desired: ReadonlyMap<string, string>,
  mirrorPods: readonly KubeObject[],
  nodeName: string,
): StaticPodsVerdict {
  if (desired.size === 0) return { converged: true };
  const actual = new Map<string, KubeObject>();
  for (const p of mirrorPods) actual.set(staticPodName(p.metadata.name ?? "", nodeName), p);
  for (const [name, hash] of desired) {
    const pod = actual.get(name);
    if (pod === undefined) return { converged: false, why: `static pod ${name} has no mirror pod yet` };
    const running = pod.metadata.annotations?.[configMirrorAnnotation] ?? "";
    if (running !== hash) return { converged: false, why: `static pod ${name} does not run the current manifest yet` };
  }
  for (const name of actual.keys()) {
    if (!desired.has(name)) return { converged: false, why: `mirror pod of static pod ${name} is not in the operating system config` };
  }
  for (const [name, pod] of actual) {
    const phase = phaseOf(pod);
    if (phase !== "Running" && phase !== "Succeeded")
      return { converged: false, why: `static pod ${name} is ${phase === "" ? "without phase" : phase}` };
    if (!isReady(pod)) return { converged: false, why: `static pod ${name} is not Ready` };
  }
  return { converged: true };
}
