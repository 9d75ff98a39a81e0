import { describe, expect, test } from "bun:test";
import { decodeOsc } from "../../../../osc/index.ts";
import { computeInPlaceFlags, noInPlaceFlags, rotationTriggered } from "./flags.ts";
import type { RotationTimes } from "../../plan/inplace-spec.ts";

const t1 = "2026-01-01T00:00:00Z";
const t2 = "2026-02-01T00:00:00Z";
const rot = (ca: string | null | undefined, sa: string | null | undefined): RotationTimes => ({
  certificateAuthorities: ca,
  serviceAccountKey: sa,
});

describe("rotationTriggered", () => {
  test.each<[string, RotationTimes | undefined, RotationTimes | undefined, boolean]>([
    ["new section absent", rot(t1, t1), undefined, false],
    ["old absent, new with time", undefined, rot(t1, t1), true],
    ["old absent, new sub-section without time", undefined, rot(null, undefined), false],
    ["time changed", rot(t1, t1), rot(t2, t2), true],
    ["identical", rot(t1, t1), rot(t1, t1), false],
    ["unset → set", rot(null, null), rot(t1, t1), true],
    ["set → unset", rot(t1, t1), rot(null, null), true],
    ["sub-section only in the new OSC", rot(undefined, undefined), rot(t1, t1), false],
  ])("should be %p: %s", (_name, old, cur, want) => {
    expect(rotationTriggered(old, cur, "certificateAuthorities")).toBe(want);
    expect(rotationTriggered(old, cur, "serviceAccountKey")).toBe(want);
  });
});

interface OscOpts {
  os?: string;
  kubelet?: string;
  policy?: string;
  cpu?: string;
  rotation?: Record<string, unknown>;
  inPlace?: boolean;
}
function osc(o: OscOpts = {}) {
  const cfg = `cpuManagerPolicy: ${o.policy ?? "none"}\nkubeReserved:\n  cpu: ${o.cpu ?? "80m"}\n`;
  return decodeOsc(
    JSON.stringify({
      spec: {
        files: [{ path: "/var/lib/kubelet/config/kubelet", content: { inline: { data: cfg } } }],
        ...(o.inPlace === false
          ? {}
          : {
              inPlaceUpdates: {
                operatingSystemVersion: o.os ?? "1592.6",
                kubelet: o.kubelet ?? "1.31.2",
                ...(o.rotation !== undefined ? { credentialsRotation: o.rotation } : {}),
              },
            }),
      },
    }),
  );
}

describe("computeInPlaceFlags", () => {
  test("should set nothing on a first apply", () => {
    expect(computeInPlaceFlags(undefined, osc({ os: "1600.0" }), "1592.6")).toEqual(noInPlaceFlags());
  });

  test("should set nothing when the last applied OSC had no inPlaceUpdates", () => {
    expect(computeInPlaceFlags(osc({ inPlace: false }), osc({ os: "1600.0", kubelet: "1.32.0" }), "1592.6")).toEqual(noInPlaceFlags());
  });

  test("should set nothing when nothing changed", () => {
    expect(computeInPlaceFlags(osc(), osc(), "1592.6")).toEqual(noInPlaceFlags());
  });

  test.each<[string, OscOpts, string, Partial<Record<string, unknown>>]>([
    ["the OS version", { os: "1600.0" }, "1592.6", { operatingSystem: true }],
    ["the OS differs from the running one", {}, "1500.0", { operatingSystem: true }],
    ["the kubelet minor", { kubelet: "1.32.0" }, "1592.6", { kubelet: { minorVersion: true, config: false, cpuManagerPolicy: false } }],
    ["only the kubelet patch", { kubelet: "1.31.3" }, "1592.6", {}],
    ["the CPU-manager policy", { policy: "static" }, "1592.6", { kubelet: { minorVersion: false, config: false, cpuManagerPolicy: true } }],
    ["a reservation", { cpu: "100m" }, "1592.6", { kubelet: { minorVersion: false, config: true, cpuManagerPolicy: false } }],
    [
      "both rotations",
      {
        rotation: {
          certificateAuthorities: { lastInitiationTime: "2026-01-01T00:00:00Z" },
          serviceAccountKey: { lastInitiationTime: "2026-01-01T00:00:00Z" },
        },
      },
      "1592.6",
      { certificateAuthoritiesRotation: { kubelet: true, nodeAgent: true }, serviceAccountKeyRotation: true },
    ],
  ])("should flag a change of %s", (_name, cur, running, want) => {
    expect(computeInPlaceFlags(osc(), osc(cur), running)).toEqual({ ...noInPlaceFlags(), ...want });
  });
});
