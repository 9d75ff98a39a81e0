import { describe, expect, test } from "bun:test";
import { tokenSyncConfigs } from "./token-sync.ts";

describe("tokenSyncConfigs", () => {
  test("should add the three shoot-access tokens on a control-plane pool (scenario 15)", () => {
    expect(tokenSyncConfigs({ controlPlane: true })).toEqual([
      { secretName: "shoot-access-kube-controller-manager", path: "/var/lib/static-pods/kube-controller-manager/kubeconfig/token" },
      { secretName: "shoot-access-kube-scheduler", path: "/var/lib/static-pods/kube-scheduler/kubeconfig/token" },
      { secretName: "shoot-access-cluster-admin", path: "/etc/kubernetes/admin-token" },
    ]);
  });

  test.each([
    [
      "the OpenTelemetry collector wins over valitail",
      { openTelemetryCollector: true, valitail: true },
      ["gardener-opentelemetry-collector"],
    ],
    ["valitail alone", { valitail: true }, ["gardener-valitail"]],
    ["no log shipping on a worker pool", {}, []],
    [
      "log shipping first, then the control-plane tokens",
      { valitail: true, controlPlane: true },
      ["gardener-valitail", "shoot-access-kube-controller-manager", "shoot-access-kube-scheduler", "shoot-access-cluster-admin"],
    ],
  ] as const)("should list %s", (_what, pool, names) => {
    expect(tokenSyncConfigs(pool).map((c) => c.secretName)).toEqual([...names]);
  });

  test("should give the log shippers their upstream paths", () => {
    expect(tokenSyncConfigs({ openTelemetryCollector: true })).toEqual([
      { secretName: "gardener-opentelemetry-collector", path: "/var/lib/opentelemetry-collector/auth-token" },
    ]);
    expect(tokenSyncConfigs({ valitail: true })).toEqual([{ secretName: "gardener-valitail", path: "/var/lib/valitail/auth-token" }]);
  });
});
