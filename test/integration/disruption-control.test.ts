// Issue 26, whole binary against the simulator and the systemd D-Bus double: the disruption policy turns
// restarts into exactly the systemd calls its rules name, a bad policy line is ignored as a whole with a
// Warning, and the maintenance window holds a disruptive change (visible in the condition, an event, a
// metric, `status` and `diff`, without the serial Lease) while a change that disturbs nothing applies.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eventually } from "../harness/eventually.ts";
import { nodeEvents, waitForEvent } from "../harness/events.ts";
import { agentBinary, agentEnv, startSandbox, type AgentProcess, type Sandbox } from "../harness/sandbox.ts";

let sb: Sandbox;
let agent: AgentProcess;
beforeAll(async () => {
  sb = await startSandbox();
  // In the pool: the node-agent authorizer then lets it use the pool's serial Lease.
  sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
    metadata: { labels: { "worker.gardener.cloud/gardener-node-agent-secret-name": sb.secretName } },
  });
  agent = sb.spawnAgent();
});
afterAll(async () => {
  await agent?.stop();
  await sb?.stop();
});

const policyPath = "/var/lib/gardener-node-agent/disruption-policy.yaml";
const b64 = (s: string) => Buffer.from(s).toString("base64");
const goodPolicy = [
  "rules:",
  "- files: [/etc/quiet/*]",
  "  action: none",
  "- units: [reloadable.service]",
  "  action: reload",
  "- files: ['/etc/plain/*.conf']",
  "  action: restart",
  "",
].join("\n");

/** Three units, each listing one file; `v` versions the files, `policy` is delivered as an OSC file. */
const osc = (
  v: { quiet: number; reloadable: number; plain: number; motd?: number },
  policy?: string,
) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: quiet.service
    content: "[Service]\\nExecStart=/opt/bin/quiet\\n"
    filePaths: [/etc/quiet/quiet.conf]
  - name: reloadable.service
    content: "[Service]\\nExecStart=/opt/bin/reloadable\\nExecReload=/bin/kill -HUP $MAINPID\\n"
    filePaths: [/etc/reloadable/r.conf]
  - name: plain.service
    content: "[Service]\\nExecStart=/opt/bin/plain\\n"
    filePaths: [/etc/plain/p.conf]
  files:
  - {path: /etc/quiet/quiet.conf, permissions: 420, content: {inline: {data: "v${v.quiet}\\n"}}}
  - {path: /etc/reloadable/r.conf, permissions: 420, content: {inline: {data: "v${v.reloadable}\\n"}}}
  - {path: /etc/plain/p.conf, permissions: 420, content: {inline: {data: "v${v.plain}\\n"}}}
  - {path: /etc/motd, permissions: 420, content: {inline: {data: "motd ${v.motd ?? 0}\\n"}}}
${policy === undefined ? "" : `  - {path: ${policyPath}, permissions: 384, content: {inline: {encoding: b64, data: ${b64(policy)}}}}\n`}`;

/** The systemd calls that act on units or reload systemd, as "Verb unit", sorted (unit commands run concurrently). */
const jobs = () =>
  sb.systemd.actions
    .filter((a) => ["DaemonReload", "Start", "Stop", "Restart", "Reload"].includes(a.action))
    .flatMap((a) => (a.units.length === 0 ? [a.action] : a.units.map((u) => `${a.action} ${u}`)))
    .sort();

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([agentBinary, ...args, "--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`], {
    env: agentEnv(sb.systemd.address, sb.nodeName),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** `diff --offline` of a pending OSC file against this root (nothing applied). */
async function offlineDiff(yaml: string): Promise<string> {
  const file = join(sb.root, "pending-osc.yaml");
  await Bun.write(file, yaml);
  const out = await cli("diff", "--offline", file);
  expect(out.stderr).toBe("");
  return out.stdout;
}

const annotate = (annotations: Record<string, string | null>) =>
  sb.sim.store.patch("nodes", "", sb.nodeName, "merge", { metadata: { annotations } });
const condition = () =>
  ((sb.node()?.["status"] as { conditions?: { type: string; status: string; reason: string; message: string }[] }).conditions ?? []).find(
    (c) => c.type === "OperatingSystemConfigApplied",
  );
const dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

describe("disruption policy (whole binary)", () => {
  test("none, reload and restart rules produce exactly those systemd calls, and diff names the rule per unit", async () => {
    const first = sb.setOsc(osc({ quiet: 1, reloadable: 1, plain: 1 }, goodPolicy));
    await sb.waitForApplied(first, 30_000);
    // New units are started whatever the policy says (and containerd for its first config).
    expect(jobs()).toEqual([
      "DaemonReload",
      "Restart containerd.service",
      "Restart plain.service",
      "Restart quiet.service",
      "Restart reloadable.service",
    ]);

    const next = osc({ quiet: 2, reloadable: 2, plain: 2 }, goodPolicy);
    const shown = await offlineDiff(next);
    expect(shown).toContain(
      [
        "Units:",
        "  quiet.service: enable [rule 1 (line 2): files [/etc/quiet/*] → none; file /etc/quiet/quiet.conf changed]",
        "  reloadable.service: enable, reload [rule 2 (line 4): units [reloadable.service] → reload; file /etc/reloadable/r.conf changed]",
        "  plain.service: enable, restart [rule 3 (line 6): files [/etc/plain/*.conf] → restart; file /etc/plain/p.conf changed]",
        "Disruption policy (as the new config delivers it): 3 rules",
        "  rule 1 (line 2): files [/etc/quiet/*] → none",
        "  rule 2 (line 4): units [reloadable.service] → reload",
        "  rule 3 (line 6): files [/etc/plain/*.conf] → restart",
        "  this apply is disruptive (restarts or stops a unit, or an in-place step)",
      ].join("\n"),
    );

    sb.systemd.clearActions();
    const invocation = sb.systemd.units.get("reloadable.service")?.invocationId;
    await sb.waitForApplied(sb.setOsc(next), 30_000);
    // No unit file changed and no rule asks for a daemon-reload: none is sent.
    expect(jobs()).toEqual(["Reload reloadable.service", "Restart plain.service"]);
    expect(await sb.readHostFile("/etc/quiet/quiet.conf")).toBe("v2\n");
    expect(sb.systemd.units.get("reloadable.service")?.invocationId).toBe(invocation);
    expect(
      nodeEvents(sb.sim)
        .filter((e) => e.reason === "SystemDUnitReload")
        .map((e) => e.message),
    ).toEqual(["processed reload of unit reloadable.service"]);
    // The history names only the unit really restarted.
    const status = JSON.parse((await cli("status", "-o", "json")).stdout) as { lastSuccess?: { unitsRestarted?: string[] } };
    expect(status.lastSuccess?.unitsRestarted).toEqual(["plain.service"]);

    // daemon-reload: the policy (itself changed, which restarts nothing) asks for only that.
    const daemonReloadOnly = `rules:\n- units: [quiet.service, plain.service]\n  action: daemon-reload\n`;
    sb.systemd.clearActions();
    await sb.waitForApplied(sb.setOsc(osc({ quiet: 3, reloadable: 2, plain: 3 }, daemonReloadOnly)), 30_000);
    expect(jobs()).toEqual(["DaemonReload"]);
  }, 60_000);

  test("a bad policy line: a Warning naming the line, the whole policy ignored, units restart as upstream", async () => {
    const bad = `rules:\n- units: [plain.service]\n  action: bounce-it\n- files: [/etc/quiet/*]\n  action: none\n`;
    const next = osc({ quiet: 4, reloadable: 2, plain: 4 }, bad);
    const error = `${policyPath}: line 3: action must be one of none, reload, restart, daemon-reload`;
    expect(await offlineDiff(next)).toContain(
      `Disruption policy (as the new config delivers it): ignored, ${error}; changed units restart as without one\n`,
    );
    sb.systemd.clearActions();
    const sum = sb.setOsc(next);
    const warning = await waitForEvent(sb.sim, (e) => e.reason === "InvalidDisruptionPolicy", 30_000);
    expect(warning).toEqual({
      type: "Warning",
      reason: "InvalidDisruptionPolicy",
      message: `${error}; the whole policy is ignored and changed units restart as without one`,
    });
    expect(warning.message).not.toContain("bounce-it");
    await sb.waitForApplied(sum, 30_000);
    expect(jobs()).toEqual(["DaemonReload", "Restart plain.service", "Restart quiet.service"]);
    // status shows the policy on the node: the same error.
    const status = JSON.parse((await cli("status", "-o", "json")).stdout) as { disruptionPolicy?: { error?: string } };
    expect(status.disruptionPolicy?.error).toBe(error);
  }, 60_000);
});

describe("maintenance window (whole binary)", () => {
  // A window three days from now (UTC) is closed now, whatever the time of day.
  const closed = `${dayNames[(new Date().getUTCDay() + 3) % 7]} 02:00-04:00 Europe/Berlin`;

  test("a change that disturbs nothing applies at once outside the window", async () => {
    annotate({ "node-agent.gardener.cloud/maintenance-window": closed });
    // Back to the good policy: quiet.conf changes are write-only; motd is listed by no unit.
    sb.systemd.clearActions();
    const sum = sb.setOsc(osc({ quiet: 5, reloadable: 2, plain: 4, motd: 1 }, goodPolicy));
    await sb.waitForApplied(sum, 30_000);
    expect(jobs()).toEqual([]);
    expect(await sb.readHostFile("/etc/motd")).toBe("motd 1\n");
    expect(await sb.readHostFile("/etc/quiet/quiet.conf")).toBe("v5\n");
  }, 60_000);

  test("a disruptive change waits without the serial Lease (condition, event, metric, status, diff), then applies when the window opens", async () => {
    sb.systemd.clearActions();
    const next = osc({ quiet: 5, reloadable: 2, plain: 5, motd: 1 }, goodPolicy);
    const sum = sb.setOsc(next);
    sb.sim.store.patch("secrets", "kube-system", sb.secretName, "merge", {
      metadata: { annotations: { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" } },
    });
    const waiting = await eventually("the window wait", condition, {
      until: (c) => c?.reason === "WaitingForMaintenanceWindow",
      timeoutMs: 30_000,
      intervalMs: 25,
    });
    expect(waiting?.status).toBe("False");
    expect(waiting?.message).toStartWith(
      `Waiting for the maintenance window (node-agent.gardener.cloud/maintenance-window: ${closed}), next opening `,
    );
    expect(waiting?.message).toEndWith(`; operating system config ${sum.slice(0, 12)} restarts plain.service`);
    expect(nodeEvents(sb.sim).filter((e) => e.reason === "WaitingForMaintenanceWindow")).toEqual([
      { type: "Normal", reason: "WaitingForMaintenanceWindow", message: waiting?.message ?? "" },
    ]);
    const metrics = await (await fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)).text();
    expect(metrics).toContain('gardener_node_agent_osc_waiting{reason="WaitingForMaintenanceWindow"} 1');
    const status = JSON.parse((await cli("status", "-o", "json")).stdout) as {
      pending: { gate?: { reason: string; message: string; checksum: string } };
      node?: { maintenanceWindow?: string };
    };
    expect(status.pending.gate).toMatchObject({ reason: "WaitingForMaintenanceWindow", message: waiting?.message, checksum: sum });
    expect(status.node?.maintenanceWindow).toBe(closed);
    const diff = await cli("diff");
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain(`  window      holds the apply (WaitingForMaintenanceWindow): ${waiting?.message}\n`);
    // Nothing restarted, and the serial Lease was never taken.
    expect(jobs()).toEqual([]);
    expect(await sb.readHostFile("/etc/plain/p.conf")).toBe("v4\n");
    expect(sb.sim.store.get("leases", "kube-system", sb.secretName)).toBeUndefined();

    // The window opens (an annotation the watch sees): the apply runs at once, under the serial Lease.
    annotate({ "node-agent.gardener.cloud/maintenance-window": "Mon-Sun 00:00-24:00 UTC" });
    await sb.waitForApplied(sum, 30_000);
    expect(jobs()).toEqual(["Restart plain.service"]);
    expect(sb.sim.store.get("leases", "kube-system", sb.secretName)).toBeDefined();
    const after = await (await fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)).text();
    expect(after).toContain('gardener_node_agent_osc_waiting{reason="WaitingForMaintenanceWindow"} 0');
  }, 60_000);

  test("bad syntax: a Warning naming the annotation, and the node behaves as if no window were set", async () => {
    annotate({ "node-agent.gardener.cloud/maintenance-window": "Mon-Fry 02:00-04:00 Europe/Berlin" });
    sb.systemd.clearActions();
    const sum = sb.setOsc(osc({ quiet: 5, reloadable: 2, plain: 6, motd: 1 }, goodPolicy));
    const warning = await waitForEvent(sb.sim, (e) => e.reason === "InvalidMaintenanceWindow", 30_000);
    expect(warning).toEqual({
      type: "Warning",
      reason: "InvalidMaintenanceWindow",
      message:
        "annotation node-agent.gardener.cloud/maintenance-window: the window: the day must be one of Mon…Sun, or a range like Mon-Fri; the node applies as if no window were set",
    });
    await sb.waitForApplied(sum, 30_000);
    expect(jobs()).toEqual(["Restart plain.service"]);
  }, 60_000);
});
