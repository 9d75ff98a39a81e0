import { pods, type Kube, type KubeObject } from "../../../../kube/index.ts";
import { type Decision, type Gate, type GateContext, offlineText } from "../../gates/gate.ts";
import { desiredStaticPods, manifestsDir, StaticPodManifestError, staticPodFiles } from "./manifests.ts";
import { staticPodsVerdict } from "./verdict.ts";

/** §2.4: static pods not converged → look again after 5 s (no Pod watch). */
const staticPodsRequeueMs = 5_000;

type StaticPodsDeps = { readonly kube: Kube; readonly hostName: string };

/** §4 step 29 / 9.1: why the mirror pods do not match the manifests yet; an undecodable manifest throws StaticPodManifestError. */
async function notConverged(d: StaticPodsDeps, ctx: GateContext, nodeName: string): Promise<string | undefined> {
  const desired = await desiredStaticPods(d.kube, ctx.osc, d.hostName.toLowerCase(), ctx.signal);
  if (desired.size === 0) return undefined;
  // The node-agent authorizer lets an agent list only the Pods bound to its own Node.
  const list = await d.kube.list<KubeObject>(pods, "", {
    fieldSelector: `spec.nodeName=${nodeName}`,
    labelSelector: "static-pod=true",
    signal: ctx.signal,
  });
  const verdict = staticPodsVerdict(desired, list.items, nodeName);
  return verdict.converged ? undefined : verdict.why;
}

/** The live and the dry run hold with the same message; `diff` may add what the new config writes. */
const waiting = (why: string | undefined, written = ""): Decision =>
  why === undefined
    ? { kind: "proceed" }
    : {
        kind: "hold",
        hold: { reason: "WaitingForStaticPods", message: `Waiting for static pods: ${why}${written}`, requeueAfterMs: staticPodsRequeueMs },
      };

/** The checksum waits until the OSC's static pods run as their manifests say; `diff` also names the manifests written. */
export const staticPodsGate = (d: StaticPodsDeps): Gate => ({
  name: "static-pods",
  phase: "record",
  step: "failed checking static pods",
  async decide(ctx) {
    return ctx.dryRun ? previewStaticPods(d, ctx) : waiting(await notConverged(d, ctx, ctx.node?.metadata.name ?? ""));
  },
});

async function previewStaticPods(d: StaticPodsDeps, ctx: GateContext): Promise<Decision> {
  if (staticPodFiles(ctx.osc, d.hostName.toLowerCase()).length === 0) return { kind: "proceed" };
  const changes = await ctx.changes();
  const written = changes.files.changed.filter((f) => f.path.startsWith(`${manifestsDir}/`)).map((f) => f.path);
  const writes = written.length === 0 ? "" : `the new config writes ${written.join(", ")}; `;
  const waits = `${writes}the checksum is recorded only once kubelet runs the mirror pods of the manifests`;
  if (!ctx.online) return { kind: "unknown", why: `${offlineText}: ${waits}` };
  const nodeName = ctx.node?.metadata.name;
  if (nodeName === undefined) return { kind: "unknown", why: `not checked (no Node yet): ${waits}` };
  let why: string | undefined;
  try {
    why = await notConverged(d, ctx, nodeName);
  } catch (err) {
    if (!(err instanceof StaticPodManifestError)) throw err;
    return { kind: "proceed", note: { reason: "ApplyFailed", message: err.message } };
  }
  if (why !== undefined) {
    return waiting(
      why,
      written.length === 0 ? "" : ` (the new config writes ${written.join(", ")}; the checksum waits for their mirror pods)`,
    );
  }
  if (written.length === 0) return { kind: "proceed" };
  return {
    kind: "proceed",
    note: { reason: "WaitingForStaticPods", message: `${waits} (their mirror pods match the new manifests already)` },
  };
}
