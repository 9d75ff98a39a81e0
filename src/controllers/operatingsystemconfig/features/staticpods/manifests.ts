import { yamlPackage } from "../../../../config/index.ts";
import type { Kube } from "../../../../kube/index.ts";
import type { Osc } from "../../../../osc/index.ts";
import { allFiles } from "../../plan/merge.ts";
import { fileBytes } from "../../plan/content.ts";

export const manifestsDir = "/etc/kubernetes/manifests";
export const configMirrorAnnotation = "gardener.cloud/config.mirror";

/** A static pod manifest of the OSC is not a decodable core/v1 Pod: the apply cannot be confirmed. */
export class StaticPodManifestError extends Error {
  override readonly name = "StaticPodManifestError";
  constructor(
    readonly path: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`static pod manifest "${path}": ${message}`, options);
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Decodes one manifest as a core/v1 Pod and returns its name and config hash. Another kind, a missing
 * name or unparsable bytes are a StaticPodManifestError (the message names the path, never the content).
 */
export function decodeStaticPod(path: string, bytes: Uint8Array): { name: string; hash: string } {
  let doc: unknown;
  try {
    doc = yamlPackage().parse(new TextDecoder().decode(bytes));
  } catch {
    // Not kept as cause: the parser's message quotes the offending line (errorText would repeat it).
    throw new StaticPodManifestError(path, "cannot be decoded");
  }
  if (!isRecord(doc)) throw new StaticPodManifestError(path, "cannot be decoded: not an object");
  const { apiVersion, kind, metadata } = doc;
  if (apiVersion !== "v1" || kind !== "Pod") {
    throw new StaticPodManifestError(path, `is not a Pod (apiVersion "${String(apiVersion ?? "")}", kind "${String(kind ?? "")}")`);
  }
  const name = isRecord(metadata) ? metadata["name"] : undefined;
  if (typeof name !== "string" || name === "") throw new StaticPodManifestError(path, "has no metadata.name");
  const annotations = isRecord(metadata) && isRecord(metadata["annotations"]) ? metadata["annotations"] : {};
  const hash = annotations[configMirrorAnnotation];
  return { name, hash: typeof hash === "string" ? hash : "" };
}

/** Files (spec + status) of this host under the manifests directory. */
export function staticPodFiles(osc: Osc, hostName: string) {
  return allFiles(osc, hostName).filter((f) => f.path.startsWith(manifestsDir));
}

/**
 * 9.1 desired state: pod name → config-mirror hash of every manifest for this host (inline and
 * secretRef contents; imageRef manifests are skipped as upstream does).
 */
export async function desiredStaticPods(kube: Kube, osc: Osc, hostName: string, signal: AbortSignal): Promise<Map<string, string>> {
  const desired = new Map<string, string>();
  for (const f of staticPodFiles(osc, hostName)) {
    const bytes = await fileBytes(kube, f, signal);
    if (bytes === undefined) continue;
    const pod = decodeStaticPod(f.path, bytes);
    desired.set(pod.name, pod.hash);
  }
  return desired;
}
