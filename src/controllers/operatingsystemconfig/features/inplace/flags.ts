import type { Osc, OscChanges } from "../../../../osc/index.ts";
import { kubeletConfigChanges, kubeletConfigOf, kubeletMinorVersionChanged } from "./kubelet-config.ts";
import { osVersionsEqual } from "./os-version.ts";
import { inPlaceSpecOf, type RotationTimes } from "../../plan/inplace-spec.ts";

export type InPlaceFlags = OscChanges["inPlaceUpdates"];

export const noInPlaceFlags = (): InPlaceFlags => ({
  operatingSystem: false,
  kubelet: { minorVersion: false, config: false, cpuManagerPolicy: false },
  certificateAuthoritiesRotation: { kubelet: false, nodeAgent: false },
  serviceAccountKeyRotation: false,
});

/**
 * One rotation kind (§9.3, acceptance 25): triggers when the new OSC has credentialsRotation and
 * either the old one had none and the new sub-section carries a time, or both have the sub-section
 * and the time differs (unset vs. set counts as different).
 */
export function rotationTriggered(old: RotationTimes | undefined, cur: RotationTimes | undefined, kind: keyof RotationTimes): boolean {
  if (cur === undefined) return false;
  const now = cur[kind];
  if (old === undefined) return now !== undefined && now !== null;
  const before = old[kind];
  if (before === undefined || now === undefined) return false;
  return before !== now;
}

/**
 * The in-place part of a fresh change set (§9.3): only when both the last applied and the new OSC have
 * spec.inPlaceUpdates. `currentOsVersion` is read from /etc/os-release before.
 */
export function computeInPlaceFlags(old: Osc | undefined, cur: Osc, currentOsVersion: string | undefined): InPlaceFlags {
  const flags = noInPlaceFlags();
  const before = old === undefined ? undefined : inPlaceSpecOf(old);
  const now = inPlaceSpecOf(cur);
  if (old === undefined || before === undefined || now === undefined) return flags;
  flags.operatingSystem = currentOsVersion === undefined || !osVersionsEqual(currentOsVersion, now.operatingSystemVersion);
  flags.kubelet.minorVersion = kubeletMinorVersionChanged(before.kubeletVersion, now.kubeletVersion);
  const kc = kubeletConfigChanges(kubeletConfigOf(old, "last applied"), kubeletConfigOf(cur, "new"));
  flags.kubelet.config = kc.config;
  flags.kubelet.cpuManagerPolicy = kc.cpuManagerPolicy;
  const ca = rotationTriggered(before.credentialsRotation, now.credentialsRotation, "certificateAuthorities");
  flags.certificateAuthoritiesRotation = { kubelet: ca, nodeAgent: ca };
  flags.serviceAccountKeyRotation = rotationTriggered(before.credentialsRotation, now.credentialsRotation, "serviceAccountKey");
  return flags;
}

export const kubeletFlagSet = (f: InPlaceFlags): boolean => f.kubelet.minorVersion || f.kubelet.config || f.kubelet.cpuManagerPolicy;

/** Service account key or certificate authority rotation work (§9.3 steps 3–5). */
export const rotationFlagSet = (f: InPlaceFlags): boolean =>
  f.serviceAccountKeyRotation || f.certificateAuthoritiesRotation.nodeAgent || f.certificateAuthoritiesRotation.kubelet;

export const anyInPlaceFlag = (f: InPlaceFlags): boolean => f.operatingSystem || kubeletFlagSet(f) || rotationFlagSet(f);
