import { secrets } from "../../kube/index.ts";
import type { KubeObject, Reader } from "../../kube/index.ts";
import { decodeBase64Strict, decodeOsc, type Osc } from "../../osc/index.ts";
import type { CheckedFile, CheckedOsc, CheckedUnit } from "./last-applied.ts";

/** The OSC the agent is converging to (the Secret's), or undefined when it cannot be had. */
export type ReadTargetOsc = (signal: AbortSignal) => Promise<CheckedOsc | undefined>;

/** The checker's view of a decoded OSC: every file and unit by path and name (first one wins). */
export function checkedView(osc: Osc): CheckedOsc {
  const files: CheckedFile[] = [...(osc.spec.files ?? []), ...(osc.status.extensionFiles ?? [])].map((f) => ({
    path: f.path,
    inline: f.content.inline === undefined ? undefined : { encoding: f.content.inline.encoding, data: f.content.inline.data },
    hasImageRef: f.content.imageRef !== undefined,
  }));
  const units: CheckedUnit[] = [...(osc.spec.units ?? []), ...(osc.status.extensionUnits ?? [])].map((u) => ({
    name: u.name,
    enable: u.enable,
    content: u.content,
    dropIns: u.dropIns ?? [],
    filePaths: u.filePaths ?? [],
  }));
  return { files, units };
}

/**
 * Reads the OSC Secret from the cache (`osc.yaml`, base64 in `data`). Anything missing or undecodable
 * is undefined: the target only excuses differences, the OSC controller reports a bad Secret.
 */
export function secretTargetOsc(cache: Reader, secretName: string): ReadTargetOsc {
  return async (signal) => {
    try {
      const secret = await cache.get<KubeObject>(secrets, "kube-system", secretName, { signal });
      const data = (secret["data"] as Record<string, unknown> | undefined)?.["osc.yaml"];
      return typeof data === "string" ? checkedView(decodeOsc(decodeBase64Strict(data))) : undefined;
    } catch {
      // Diagnostic aid only (see above): without a target, every difference counts.
      return undefined;
    }
  };
}
