import { pods } from "../../../../kube/index.ts";
import type { Kube, KubeObject } from "../../../../kube/index.ts";
import type { Osc } from "../../../../osc/index.ts";
import type { GateHold } from "../../gates/gate.ts";
import { desiredStaticPods } from "./manifests.ts";
import { staticPodsVerdict } from "./verdict.ts";

/** §2.4: static pods not converged → look again after 5 s (no Pod watch). */
const staticPodsRequeueMs = 5_000;

/**
 * §4 step 29 / 9.1: holds the checksum annotation until every static pod of the OSC runs as its manifest
 * says on this node. An undecodable manifest or one that is not a Pod throws StaticPodManifestError.
 */
export async function checkStaticPods(
  kube: Kube,
  osc: Osc,
  hostName: string,
  nodeName: string,
  signal: AbortSignal,
): Promise<GateHold | undefined> {
  const desired = await desiredStaticPods(kube, osc, hostName, signal);
  if (desired.size === 0) return undefined;
  // The node-agent authorizer lets an agent list only the Pods bound to its own Node.
  const list = await kube.list<KubeObject>(pods, "", {
    fieldSelector: `spec.nodeName=${nodeName}`,
    labelSelector: "static-pod=true",
    signal,
  });
  const verdict = staticPodsVerdict(desired, list.items, nodeName);
  if (verdict.converged) return undefined;
  return {
    reason: "WaitingForStaticPods",
    message: `Waiting for static pods: ${verdict.why}`,
    requeueAfterMs: staticPodsRequeueMs,
  };
}
