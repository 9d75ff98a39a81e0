// Drift from the last-applied OSC, whole binary: reported by default (event, metric), repaired with
// node-agent.gardener.cloud/drift-policy=repair (files restored, secretRef fetched again, units
// re-enabled, and exactly the units an OSC change of those paths would restart).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeUnit } from "../doubles/systemd/index.ts";
import { eventually } from "../harness/eventually.ts";
import { nodeEvents, waitForEvent } from "../harness/events.ts";
import { startSandbox, type AgentProcess, type Sandbox } from "../harness/sandbox.ts";

let sb: Sandbox;
let agent: AgentProcess;

beforeAll(async () => {
  sb = await startSandbox();
  sb.sim.allowSecret(`machine-${sb.nodeName}`, "app-credentials");
  sb.sim.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "app-credentials", namespace: "kube-system" },
    data: { password: Buffer.from("s3cret\n").toString("base64") },
  });
});
afterAll(async () => {
  await agent?.stop();
  await sb?.stop();
});

const osc = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: app.service
    content: "[Service]\\nExecStart=/opt/bin/app\\n[Install]\\nWantedBy=multi-user.target\\n"
    dropIns:
    - name: 10-env.conf
      content: "[Service]\\nEnvironment=A=1\\n"
    filePaths: [/etc/app/app.conf]
  - name: creds-user.service
    content: "[Service]\\nExecStart=/opt/bin/creds-user\\n[Install]\\nWantedBy=multi-user.target\\n"
    filePaths: [/etc/app/password]
  - name: idle.service
    content: "[Service]\\nExecStart=/opt/bin/idle\\n[Install]\\nWantedBy=multi-user.target\\n"
  files:
  - path: /etc/app/app.conf
    permissions: 420
    content: {inline: {data: "level=info\\n"}}
  - path: /etc/app/password
    permissions: 384
    content: {secretRef: {name: app-credentials, dataKey: password}}
  - path: /etc/motd.d/notice
    permissions: 420
    content: {inline: {data: "managed\\n"}}
`;

const host = (p: string) => join(sb.root, p);
const restartsAndStops = () =>
  sb.systemd.actions.filter((a) => a.action === "Restart" || a.action === "Stop").map((a) => `${a.action} ${a.units.join(",")}`);
async function metric(): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)).text();
  return text.split("\n").find((l) => l.startsWith("gardener_node_agent_drift_paths ")) ?? "";
}
const count = (reason: string) => nodeEvents(sb.sim).filter((e) => e.reason === reason).length;
/** The DriftRepaired event that comes after the first `before` of them. */
async function nextRepair(before: number) {
  await eventually("a further repair", () => count("DriftRepaired"), { until: (n) => n > before, timeoutMs: 15_000, intervalMs: 25 });
  return nodeEvents(sb.sim)
    .filter((e) => e.reason === "DriftRepaired")
    .at(-1)!;
}

describe("drift detection and repair (whole binary)", () => {
  test("should report drift by default without touching anything", async () => {
    agent = sb.spawnAgent({ GARDENER_NODE_AGENT_TIMINGS: "driftCheckPeriod=300ms" });
    await sb.waitForApplied(sb.setOsc(osc), 30_000).catch((err: unknown) => {
      throw new Error(`not applied: ${agent.output().slice(-3000)}`, { cause: err });
    });
    sb.systemd.clearActions();

    writeFileSync(host("/etc/app/app.conf"), "level=debug\n");
    chmodSync(host("/etc/motd.d/notice"), 0o666);
    rmSync(host("/etc/systemd/system/idle.service"));
    const event = await waitForEvent(sb.sim, (e) => e.reason === "DriftDetected" && e.message.startsWith("3 "), 15_000);
    expect(event.type).toBe("Warning");
    expect(event.message).toBe(
      "3 managed path(s) differ from the last-applied operating system config: /etc/app/app.conf (content), /etc/motd.d/notice (mode), /etc/systemd/system/idle.service (missing)",
    );
    await eventually("the drift metric at 3", metric, { until: (line) => line === "gardener_node_agent_drift_paths 3", intervalMs: 25 });
    expect(readFileSync(host("/etc/app/app.conf"), "utf8")).toBe("level=debug\n");
    expect(existsSync(host("/etc/systemd/system/idle.service"))).toBe(false);
    expect(restartsAndStops()).toEqual([]);
    expect(count("DriftRepaired")).toBe(0);
  }, 60_000);

  test("should repair with drift-policy=repair and restart exactly the units of the drifted paths", async () => {
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/drift-policy": "repair" } },
    });
    const repaired = await waitForEvent(sb.sim, (e) => e.reason === "DriftRepaired", 15_000);
    expect(repaired.type).toBe("Normal");
    expect(repaired.message).toBe(
      "restored /etc/app/app.conf (content), /etc/motd.d/notice (mode), /etc/systemd/system/idle.service (missing); restarted: app.service, idle.service",
    );
    expect(readFileSync(host("/etc/app/app.conf"), "utf8")).toBe("level=info\n");
    expect(statSync(host("/etc/motd.d/notice")).mode & 0o7777).toBe(0o644);
    expect(readFileSync(host("/etc/systemd/system/idle.service"), "utf8")).toContain("ExecStart=/opt/bin/idle");
    expect(statSync(host("/etc/systemd/system/idle.service")).mode & 0o7777).toBe(0o600);
    expect(restartsAndStops().sort()).toEqual(["Restart app.service", "Restart idle.service"]);
    await eventually("the drift metric back at 0", metric, {
      until: (line) => line === "gardener_node_agent_drift_paths 0",
      intervalMs: 25,
    });
  }, 60_000);

  test("should fetch secretRef content again, restore a drop-in and re-enable a unit without restarting it", async () => {
    sb.systemd.clearActions();
    const before = count("DriftRepaired");
    writeFileSync(host("/etc/app/password"), "guessed\n");
    writeFileSync(host("/etc/systemd/system/app.service.d/10-env.conf"), "[Service]\nEnvironment=A=2\n");
    (sb.systemd.units.get("idle.service") as FakeUnit).unitFileState = "disabled";
    const repaired = await nextRepair(before);
    expect(repaired.message).toBe(
      "restored /etc/app/password (content), /etc/systemd/system/app.service.d/10-env.conf (content), idle.service (enablement); restarted: app.service, creds-user.service",
    );
    expect(readFileSync(host("/etc/app/password"), "utf8")).toBe("s3cret\n");
    expect(statSync(host("/etc/app/password")).mode & 0o7777).toBe(0o600);
    expect(readFileSync(host("/etc/systemd/system/app.service.d/10-env.conf"), "utf8")).toBe("[Service]\nEnvironment=A=1\n");
    expect(sb.systemd.units.get("idle.service")?.unitFileState).toBe("enabled");
    expect(restartsAndStops().sort()).toEqual(["Restart app.service", "Restart creds-user.service"]);
    expect(sb.systemd.actions.some((a) => a.action === "Enable" && a.units.includes("idle.service"))).toBe(true);
  }, 60_000);

  test("should restart, reload or leave the repaired units as the disruption policy says, as an apply does", async () => {
    // Baked into the image (the OSC does not deliver it): it governs applies and repairs alike.
    mkdirSync(host("/var/lib/gardener-node-agent"), { recursive: true });
    writeFileSync(
      host("/var/lib/gardener-node-agent/disruption-policy.yaml"),
      "rules:\n- files: [/etc/app/app.conf]\n  action: reload\n- units: [creds-user.service]\n  action: none\n",
    );
    sb.systemd.clearActions();
    const before = count("DriftRepaired");
    writeFileSync(host("/etc/app/app.conf"), "level=trace\n");
    writeFileSync(host("/etc/app/password"), "guessed\n");
    rmSync(host("/etc/systemd/system/idle.service"));
    const repaired = await nextRepair(before);
    expect(repaired.message).toBe(
      "restored /etc/app/app.conf (content), /etc/app/password (content), /etc/systemd/system/idle.service (missing); restarted: idle.service",
    );
    expect(readFileSync(host("/etc/app/app.conf"), "utf8")).toBe("level=info\n");
    expect(readFileSync(host("/etc/app/password"), "utf8")).toBe("s3cret\n");
    const jobs = sb.systemd.actions
      .filter((a) => ["Restart", "Stop", "Reload"].includes(a.action))
      .map((a) => `${a.action} ${a.units.join(",")}`);
    expect(jobs.sort()).toEqual(["Reload app.service", "Restart idle.service"]);
  }, 60_000);
});
