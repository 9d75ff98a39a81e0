import { describe, expect, test } from "bun:test";
import { decodeOsc } from "../../../../osc/index.ts";
import type { DriftItem } from "./detect.ts";
import { policyUnitJobs } from "../../apply/policy-jobs.ts";
import { parseDisruptionPolicy } from "../../plan/disruption-policy.ts";
import { repairChanges } from "./repair-plan.ts";
import { createDriftStatus, driftConditionMessage, driftPolicyOf } from "./status.ts";

const lastApplied = decodeOsc(
  JSON.stringify({
    spec: {
      files: [
        { path: "/etc/app.conf", permissions: 420, content: { inline: { data: "a" } } },
        { path: "/etc/shared.conf", content: { inline: { data: "s" } } },
        { path: "/etc/alone.conf", content: { inline: { data: "x" } } },
      ],
      units: [
        {
          name: "app.service",
          content: "[Service]\n",
          filePaths: ["/etc/app.conf", "/etc/shared.conf"],
          dropIns: [
            { name: "10-a.conf", content: "A" },
            { name: "20-b.conf", content: "B" },
          ],
        },
        { name: "side.service", content: "[Service]\n", filePaths: ["/etc/shared.conf"] },
        { name: "off.service", enable: false, content: "[Service]\n" },
        { name: "gardener-node-agent.service", content: "[Service]\n", filePaths: ["/etc/shared.conf"] },
      ],
    },
  }),
);

const file = (path: string, kind: DriftItem["kind"] = "content"): DriftItem => ({ type: "file", path, kind });

describe("repairChanges", () => {
  test.each<[string, DriftItem[], string[], [string, string][]]>([
    ["a file only one unit lists", [file("/etc/app.conf")], ["/etc/app.conf"], [["app.service", "restart"]]],
    [
      "a file two units list (the agent's own unit is never restarted)",
      [file("/etc/shared.conf", "mode")],
      ["/etc/shared.conf"],
      [
        ["app.service", "restart"],
        ["side.service", "restart"],
      ],
    ],
    ["a file no unit lists", [file("/etc/alone.conf", "missing")], ["/etc/alone.conf"], []],
    [
      "a drop-in",
      [{ type: "dropIn", path: "/etc/systemd/system/app.service.d/20-b.conf", kind: "content", unit: "app.service", dropIn: "20-b.conf" }],
      [],
      [["app.service", "restart"]],
    ],
    [
      "a deleted unit file",
      [{ type: "unit", path: "/etc/systemd/system/side.service", kind: "missing", unit: "side.service" }],
      [],
      [["side.service", "restart"]],
    ],
    [
      "a disabled unit's file (stopped, as an OSC change would)",
      [{ type: "unit", path: "/etc/systemd/system/off.service", kind: "content", unit: "off.service" }],
      [],
      [["off.service", "stop"]],
    ],
    [
      "enablement only (no restart)",
      [{ type: "enablement", path: "side.service", kind: "enablement", unit: "side.service", want: true }],
      [],
      [],
    ],
  ])("should rewrite and restart what an OSC change of %s would", (_, items, files, commands) => {
    const c = repairChanges(lastApplied, items, "h").changes;
    expect(c.files.changed.map((f) => f.path)).toEqual(files);
    expect(c.files.deleted).toEqual([]);
    expect(c.units.deleted).toEqual([]);
    expect(c.units.commands.map((x) => [x.name, x.command])).toEqual(commands);
  });

  test("should rewrite only the drifted drop-in and re-enable an enablement-drifted unit", () => {
    const c = repairChanges(
      lastApplied,
      [
        { type: "dropIn", path: "/etc/systemd/system/app.service.d/20-b.conf", kind: "content", unit: "app.service", dropIn: "20-b.conf" },
        { type: "enablement", path: "side.service", kind: "enablement", unit: "side.service", want: true },
      ],
      "h",
    ).changes;
    expect(c.units.changed.map((u) => [u.name, u.dropInsChanges.changed.map((d) => d.name)])).toEqual([
      ["app.service", ["20-b.conf"]],
      ["side.service", []],
    ]);
  });
});

describe("a repair under a disruption policy", () => {
  test("should take each drifted unit's action from the policy, as for an OSC change of the same paths", () => {
    const { changes, asFound } = repairChanges(
      lastApplied,
      [file("/etc/shared.conf"), { type: "unit", path: "/etc/systemd/system/off.service", kind: "content", unit: "off.service" }],
      "h",
    );
    const policy = parseDisruptionPolicy(
      "rules:\n- units: [side.service]\n  action: none\n- files: [/etc/shared.conf]\n  action: reload\n",
    );
    const jobs = policyUnitJobs({ osc: lastApplied, lastApplied: asFound, policy });
    expect([...jobs.actions(changes).values()].map((u) => `${u.unit}=${u.action} (${u.why})`)).toEqual([
      "app.service=reload (file /etc/shared.conf changed)",
      "side.service=none (file /etc/shared.conf changed)",
      // A stop is never the policy's to change.
      "off.service=stop (unit stopped or disabled)",
    ]);
    // A unit file drifted: systemd re-reads the definitions.
    expect(jobs.daemonReload(changes)).toBe(true);
  });
});

describe("drift status", () => {
  test("should read the policy from the Node annotation, report by default", () => {
    const node = (a?: Record<string, string>) => ({ metadata: { name: "n", ...(a ? { annotations: a } : {}) } });
    expect(driftPolicyOf(node())).toBe("report");
    expect(driftPolicyOf(node({ "node-agent.gardener.cloud/drift-policy": "repair" }))).toBe("repair");
    expect(driftPolicyOf(node({ "node-agent.gardener.cloud/drift-policy": "yes" }))).toBe("report");
  });

  test("should summarise the last pass for the apply condition, naming at most 20 paths", () => {
    const status = createDriftStatus();
    expect(driftConditionMessage(status)).toBeUndefined();
    status.record({ at: 1, found: [], policy: "report" });
    expect(driftConditionMessage(status)).toBeUndefined();
    const found = Array.from({ length: 22 }, (_, i) => `/etc/f${i} (content)`);
    status.record({ at: 2, found, policy: "report" });
    expect(driftConditionMessage(status)).toBe(
      `22 managed path(s) drifted from the last-applied operating system config: ${found.slice(0, 20).join(", ")} and 2 more`,
    );
    status.record({ at: 3, found: ["/etc/a (mode)"], policy: "repair", repair: { restarted: ["a.service"], remaining: 0 } });
    expect(driftConditionMessage(status)).toBe(
      "1 managed path(s) drifted from the last-applied operating system config: /etc/a (mode); repaired",
    );
  });
});
