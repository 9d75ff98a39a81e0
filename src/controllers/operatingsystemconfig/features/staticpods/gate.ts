import { pods, type Kube, type KubeObject } from "../../../../kube/index.ts";
import type { Osc } from "../../../../osc/index.ts";
import type { Decision, Gate, GateContext, GateHold } from "../../gates/gate.ts";
import { offlineText } from "../../gates/preview.ts";
import { desiredStaticPods, manifestsDir, StaticPodManifestError, staticPodFiles } from "./manifests.ts";
import { staticPodsVerdict } from "./verdict.ts";

/** §2.4: static pods not converged → look again after 5 s (no Pod watch). */
const staticPodsRequeueMs = 5_000;

/** §4 step 29 / 9.1; an undecodable manifest or one that is not a Pod throws StaticPodManifestError. */
async function checkStaticPods(
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

/** The checksum waits until the OSC's static pods run as their manifests say; `diff` also names the manifests written. */
export const staticPodsGate = (d: { readonly kube: Kube; readonly hostName: string }): Gate => ({
  name: "static-pods",
  phase: "record",
  step: "failed checking static pods",
  async decide(ctx) {
    if (ctx.dryRun) return previewStaticPods(d, ctx);
    const hold = await checkStaticPods(d.kube, ctx.osc, d.hostName.toLowerCase(), ctx.node?.metadata.name ?? "", ctx.signal);
    return hold === undefined ? { kind: "proceed" } : { kind: "hold", hold };
  },
});

async function previewStaticPods(d: { readonly kube: Kube; readonly hostName: string }, ctx: GateContext): Promise<Decision> {
  const host = d.hostName.toLowerCase();
  if (staticPodFiles(ctx.osc, host).length === 0) return { kind: "proceed" };
  const changes = await ctx.changes();
  const written = changes.files.changed.filter((f) => f.path.startsWith(`${manifestsDir}/`)).map((f) => f.path);
  const writes = written.length === 0 ? "" : `the new config writes ${written.join(", ")}; `;
  const waits = `${writes}the checksum is recorded only once kubelet runs the mirror pods of the manifests`;
  if (!ctx.online) return { kind: "unknown", why: `${offlineText}: ${waits}` };
  const nodeName = ctx.node?.metadata.name;
  if (nodeName === undefined) return { kind: "unknown", why: `not checked (no Node yet): ${waits}` };
  let hold: GateHold | undefined;
  try {
    hold = await checkStaticPods(d.kube, ctx.osc, host, nodeName, ctx.signal);
  } catch (err) {
    if (!(err instanceof StaticPodManifestError)) throw err;
    return { kind: "proceed", note: { reason: "ApplyFailed", message: err.message } };
  }
  if (hold !== undefined) {
    const why = written.length === 0 ? "" : ` (the new config writes ${written.join(", ")}; the checksum waits for their mirror pods)`;
    return { kind: "hold", hold: { ...hold, message: `${hold.message}${why}` } };
  }
  if (written.length === 0) return { kind: "proceed" };
  return {
    kind: "proceed",
    note: { reason: "WaitingForStaticPods", message: `${waits} (their mirror pods match the new manifests already)` },
  };
}
