import { describe, expect, test } from "bun:test";
import type { StatusReport } from "./status-gather.ts";
import { formatStatus } from "./status-format.ts";

const base: StatusReport = { secret: "kube-system/pool", lastAppliedFile: true, problems: [], pending: {}, units: [] };

describe("formatStatus: disruption control (issue 26)", () => {
  test("shows the policy's rules and the Node's window", () => {
    const text = formatStatus({
      ...base,
      disruptionPolicy: {
        path: "/var/lib/gardener-node-agent/disruption-policy.yaml",
        rules: ["rule 1 (line 2): files [/etc/ssh/*] → none", "rule 2 (line 4): units [kubelet.service] → reload"],
      },
      node: { name: "n1", maintenanceWindow: "Mon-Fri 02:00-04:00 Europe/Berlin" },
    });
    expect(text).toContain(
      [
        "  Disruption    policy /var/lib/gardener-node-agent/disruption-policy.yaml: 2 rules, first match wins",
        "                rule 1 (line 2): files [/etc/ssh/*] → none",
        "                rule 2 (line 4): units [kubelet.service] → reload",
      ].join("\n"),
    );
    expect(text).toContain("  Window        Mon-Fri 02:00-04:00 Europe/Berlin\n");
  });

  test("says why an unusable policy is ignored, and nothing without a policy file or window", () => {
    const error = "/var/lib/gardener-node-agent/disruption-policy.yaml: line 3: action must be one of none, reload, restart, daemon-reload";
    expect(formatStatus({ ...base, disruptionPolicy: { path: "p", rules: [], error } })).toContain(
      `  Disruption    policy ignored (changed units restart): ${error}\n`,
    );
    const plain = formatStatus({ ...base, node: { name: "n1" } });
    expect(plain).not.toContain("Disruption");
    expect(plain).not.toContain("Window");
  });
});
