import { describe, expect, test } from "bun:test";
import { kubeletConfigChanges, kubeletConfigOf, kubeletMinorVersionChanged } from "./kubelet-config.ts";
import { decodeOsc } from "../../../../osc/index.ts";

type View = Parameters<typeof kubeletConfigChanges>[0];
const base = (): View => ({
  cpuManagerPolicy: "none",
  evictionHard: { "memory.available": "100Mi", "nodefs.available": "5%", "pid.available": "10%" },
  kubeReserved: { cpu: "80m", memory: "1Gi", "ephemeral-storage": "1Gi", pid: "20k" },
});
const withChange = (
  f: (v: { cpuManagerPolicy: unknown; evictionHard: Record<string, unknown>; kubeReserved: Record<string, unknown> }) => void,
): View => {
  const v = structuredClone(base()) as {
    cpuManagerPolicy: unknown;
    evictionHard: Record<string, unknown>;
    kubeReserved: Record<string, unknown>;
  };
  f(v);
  return v;
};

describe("kubeletConfigChanges", () => {
  test.each<[string, View, { config: boolean; cpuManagerPolicy: boolean }]>([
    ["identical", base(), { config: false, cpuManagerPolicy: false }],
    ["policy static→none", withChange((v) => (v.cpuManagerPolicy = "static")), { config: false, cpuManagerPolicy: true }],
    ["kubeReserved cpu", withChange((v) => (v.kubeReserved["cpu"] = "100m")), { config: true, cpuManagerPolicy: false }],
    ["kubeReserved memory", withChange((v) => (v.kubeReserved["memory"] = "2Gi")), { config: true, cpuManagerPolicy: false }],
    [
      "kubeReserved ephemeral-storage",
      withChange((v) => delete v.kubeReserved["ephemeral-storage"]),
      { config: true, cpuManagerPolicy: false },
    ],
    ["kubeReserved pid", withChange((v) => (v.kubeReserved["pid"] = "30k")), { config: true, cpuManagerPolicy: false }],
    [
      "evictionHard memory.available",
      withChange((v) => (v.evictionHard["memory.available"] = "200Mi")),
      { config: true, cpuManagerPolicy: false },
    ],
    [
      "evictionHard imagefs.inodesFree",
      withChange((v) => (v.evictionHard["imagefs.inodesFree"] = "5%")),
      { config: true, cpuManagerPolicy: false },
    ],
    [
      "unrelated evictionHard key",
      withChange((v) => (v.evictionHard["pid.available"] = "20%")),
      { config: false, cpuManagerPolicy: false },
    ],
    [
      "unrelated kubeReserved key",
      withChange((v) => (v.kubeReserved["hugepages-2Mi"] = "1Gi")),
      { config: false, cpuManagerPolicy: false },
    ],
  ])("should detect %s", (_name, cur, want) => {
    expect(kubeletConfigChanges(base(), cur)).toEqual(want);
  });

  test("should fail when a reservation is no quantity", () => {
    expect(() =>
      kubeletConfigChanges(
        base(),
        withChange((v) => (v.kubeReserved["cpu"] = "aoeu")),
      ),
    ).toThrow("failed to parse quantity");
  });

  test("should not parse reservations when an eviction signal already changed", () => {
    const cur = withChange((v) => {
      v.evictionHard["nodefs.available"] = "10%";
      v.kubeReserved["cpu"] = "aoeu";
    });
    expect(kubeletConfigChanges(base(), cur)).toEqual({ config: true, cpuManagerPolicy: false });
  });
});

describe("kubeletConfigOf", () => {
  test("should read the kubelet config file of spec.files (b64)", () => {
    const data = Buffer.from("cpuManagerPolicy: static\nkubeReserved:\n  cpu: 80m\n").toString("base64");
    const osc = decodeOsc(
      JSON.stringify({ spec: { files: [{ path: "/var/lib/kubelet/config/kubelet", content: { inline: { encoding: "b64", data } } }] } }),
    );
    expect(kubeletConfigOf(osc, "new")).toEqual({ cpuManagerPolicy: "static", evictionHard: {}, kubeReserved: { cpu: "80m" } });
  });

  test("should fail when the file is missing", () => {
    expect(() => kubeletConfigOf(decodeOsc("spec: {}\n"), "new")).toThrow(
      "new operating system config has no inline file /var/lib/kubelet/config/kubelet",
    );
  });
});

describe("kubeletMinorVersionChanged", () => {
  test.each([
    ["1.31.2", "1.31.2", false],
    ["1.31.2", "1.31.3", false],
    ["1.31.2", "1.32.0", true],
    ["v1.31.2", "1.32.0", true],
  ])("%p → %p should be %p", (a, b, want) => {
    expect(kubeletMinorVersionChanged(a, b)).toBe(want);
  });
});
