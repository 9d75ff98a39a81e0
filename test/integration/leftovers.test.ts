// gardener#10972: good OSC → broken OSC (a new unit fails to start, the apply stops halfway) → the good
// OSC again. Nothing the broken one wrote may stay behind, even though last-applied never changed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "../harness/eventually.ts";
import { nodeEvents, waitForEvent } from "../harness/events.ts";
import { startSandbox, type Sandbox } from "../harness/sandbox.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(async () => {
  await sb?.stop();
});

const good = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: app.service
    content: "[Service]\\nExecStart=/opt/bin/app\\n"
    filePaths: [/etc/app/app.conf]
  files:
  - path: /etc/app/app.conf
    permissions: 420
    content: {inline: {data: "mode=good\\n"}}
`;

const broken = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: app.service
    content: "[Service]\\nExecStart=/opt/bin/app\\n"
    dropIns:
    - name: 90-broken.conf
      content: "[Service]\\nEnvironment=BROKEN=1\\n"
    filePaths: [/etc/app/app.conf]
  - name: sidecar.service
    content: "[Service]\\nExecStart=/opt/bin/sidecar\\n"
    filePaths: [/etc/sidecar/sidecar.conf]
  files:
  - path: /etc/app/app.conf
    permissions: 420
    content: {inline: {data: "mode=broken\\n"}}
  - path: /etc/sidecar/sidecar.conf
    permissions: 384
    content: {inline: {data: "sidecar\\n"}}
`;

const hostPath = (p: string) => join(sb.root, p);

describe("no leftovers after a reverted broken OSC (whole binary)", () => {
  test("should remove what the broken OSC wrote and restore what it changed when the good OSC comes back", async () => {
    const agent = sb.spawnAgent();
    try {
      const goodChecksum = sb.setOsc(good);
      await sb.waitForApplied(goodChecksum, 30_000);

      // Restarts of the new unit fail for the rest of the test (its stop does not).
      sb.systemd.failJobs("sidecar.service", { operation: "restart" });
      sb.setOsc(broken);
      await waitForEvent(sb.sim, (e) => e.reason === "OSCApplyFailed" && e.message.includes("sidecar.service"), 30_000);
      // Half applied: the broken files and units are on disk, last-applied is still the good OSC.
      expect(readFileSync(hostPath("/etc/app/app.conf"), "utf8")).toBe("mode=broken\n");
      expect(existsSync(hostPath("/etc/sidecar/sidecar.conf"))).toBe(true);
      expect(existsSync(hostPath("/etc/systemd/system/sidecar.service"))).toBe(true);
      expect(existsSync(hostPath("/etc/systemd/system/app.service.d/90-broken.conf"))).toBe(true);
      const changesFile = readFileSync(hostPath("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml"), "utf8");
      expect(changesFile).toContain("attemptedWrites:");

      // The operator reverts the Secret: same bytes, same checksum as the Node already carries.
      sb.systemd.clearActions();
      const applied = nodeEvents(sb.sim).filter((e) => e.reason === "OSCApplied").length;
      expect(sb.setOsc(good)).toBe(goodChecksum);
      const appliedEvents = () => nodeEvents(sb.sim).filter((e) => e.reason === "OSCApplied").length;
      await eventually("the good OSC applied again", appliedEvents, { until: (n) => n > applied, timeoutMs: 30_000, intervalMs: 25 });

      expect(existsSync(hostPath("/etc/sidecar/sidecar.conf"))).toBe(false);
      expect(existsSync(hostPath("/etc/systemd/system/sidecar.service"))).toBe(false);
      expect(existsSync(hostPath("/etc/systemd/system/app.service.d/90-broken.conf"))).toBe(false);
      expect(readFileSync(hostPath("/etc/app/app.conf"), "utf8")).toBe("mode=good\n");
      const actions = sb.systemd.actions.filter((a) => a.action !== "UnitProperties" && a.action !== "ListByNames" && a.action !== "List");
      expect(actions).toContainEqual({ action: "Disable", units: ["sidecar.service"] });
      expect(actions).toContainEqual({ action: "Stop", units: ["sidecar.service"] });
      expect(actions).toContainEqual({ action: "Restart", units: ["app.service"] });
      expect(sb.systemd.units.get("sidecar.service")?.unitFileState).toBe("disabled");
      // The record is dropped once the apply completed: the file reads like upstream's again.
      expect(readFileSync(hostPath("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml"), "utf8")).not.toContain(
        "attemptedWrites",
      );

      // And a later no-op reconcile stays a no-op.
      sb.systemd.clearActions();
      sb.setOsc(`${good}# same config, new checksum\n`);
      await sb.waitForApplied(new Bun.CryptoHasher("sha256").update(`${good}# same config, new checksum\n`).digest("hex"), 30_000);
      expect(sb.systemd.actions.filter((a) => a.action === "Restart" || a.action === "Stop")).toEqual([]);
    } finally {
      await agent.stop();
    }
  }, 90_000);
});
