import { decodeInline, type Osc, readYaml } from "../../../../osc/index.ts";
import { parseSemVer } from "../../../../config/index.ts";

const kubeletConfigPath = "/var/lib/kubelet/config/kubelet";

class KubeletConfigError extends Error {
  override readonly name = "KubeletConfigError";
}

/** The eviction signals and reservations whose change makes an in-place kubelet config update (§9.3). */
const evictionSignals = ["memory.available", "imagefs.available", "imagefs.inodesFree", "nodefs.available", "nodefs.inodesFree"] as const;
const reservedResources = ["cpu", "memory", "ephemeral-storage", "pid"] as const;

/** A Kubernetes resource quantity (`100m`, `1Gi`, `1e3`, `0.5`). */
const quantityPattern = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

interface KubeletConfigView {
  readonly cpuManagerPolicy: unknown;
  readonly evictionHard: Record<string, unknown>;
  readonly kubeReserved: Record<string, unknown>;
}

const record = (x: unknown): Record<string, unknown> =>
  x !== null && typeof x === "object" && !Array.isArray(x) ? (x as Record<string, unknown>) : {};

/** The kubelet configuration file of `spec.files` (inline only), decoded; missing is an error. */
export function kubeletConfigOf(osc: Osc, which: string): KubeletConfigView {
  const file = (osc.spec.files ?? []).find((f) => f.path === kubeletConfigPath);
  const inline = file?.content.inline;
  if (inline === undefined) throw new KubeletConfigError(`${which} operating system config has no inline file ${kubeletConfigPath}`);
  let doc: unknown;
  try {
    doc = readYaml(new TextDecoder().decode(decodeInline(inline.encoding, inline.data)));
  } catch (err) {
    throw new KubeletConfigError(`failed decoding ${kubeletConfigPath} of the ${which} operating system config`, { cause: err });
  }
  const c = record(doc);
  return { cpuManagerPolicy: c["cpuManagerPolicy"], evictionHard: record(c["evictionHard"]), kubeReserved: record(c["kubeReserved"]) };
}

const text = (x: unknown): string | undefined => (x === undefined || x === null ? undefined : String(x));

/**
 * §9.3 (acceptance 24): (config changed, CPU-manager policy changed). The listed eviction signals
 * decide first; only when they are equal are the reservations compared, and then every reservation
 * value on both sides must be a quantity.
 */
export function kubeletConfigChanges(old: KubeletConfigView, cur: KubeletConfigView): { config: boolean; cpuManagerPolicy: boolean } {
  const cpuManagerPolicy = text(old.cpuManagerPolicy) !== text(cur.cpuManagerPolicy);
  if (evictionSignals.some((s) => text(old.evictionHard[s]) !== text(cur.evictionHard[s]))) return { config: true, cpuManagerPolicy };
  for (const [side, reserved] of [
    ["old", old.kubeReserved],
    ["new", cur.kubeReserved],
  ] as const) {
    for (const [k, value] of Object.entries(reserved)) {
      if (!quantityPattern.test(text(value) ?? "")) {
        throw new KubeletConfigError(`${side} kubeReserved ${k}: failed to parse quantity ${JSON.stringify(text(value) ?? "")}`);
      }
    }
  }
  const config = reservedResources.some((r) => text(old.kubeReserved[r]) !== text(cur.kubeReserved[r]));
  return { config, cpuManagerPolicy };
}

/** The kubelet strings differ and so do their minor numbers (`1.31.2` → `1.32.0`). */
export function kubeletMinorVersionChanged(old: string, cur: string): boolean {
  if (old === cur) return false;
  return parseSemVer(old).minor !== parseSemVer(cur).minor || parseSemVer(old).major !== parseSemVer(cur).major;
}
