// unit-failure-policy=revert, whole binary: a unit the apply restarted fails within the verification
// window → its files, unit file and drop-ins go back to last-applied, it is restarted, the checksum
// annotation stays, and that OSC version is held until the Secret changes or the annotation goes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "../harness/eventually.ts";
import { nodeEvents, waitForEvent } from "../harness/events.ts";
import { agentBinary, agentEnv, startSandbox, type AgentProcess, type Sandbox } from "../harness/sandbox.ts";

let sb: Sandbox;
let agent: AgentProcess;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(async () => {
  await agent?.stop();
  await sb?.stop();
});

const osc = (version: string, extraDropIn: boolean) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: app.service
    content: "[Service]\\nExecStart=/opt/bin/app --version=${version}\\n"
${extraDropIn ? `    dropIns:\n    - name: 50-tuning.conf\n      content: "[Service]\\nEnvironment=TUNING=${version}\\n"\n` : ""}    filePaths: [/etc/app/app.conf]
  - name: bystander.service
    content: "[Service]\\nExecStart=/opt/bin/bystander\\n"
  files:
  - path: /etc/app/app.conf
    permissions: 420
    content: {inline: {data: "version=${version}\\n"}}
`;

const host = (p: string) => join(sb.root, p);
const checksumOnNode = () =>
  (sb.node()?.["metadata"] as { annotations?: Record<string, string> }).annotations?.["checksum/cloud-config-data"];
/** `diff` of the compiled binary on this node (exit 1: changes pending); its stdout. */
async function diff(...args: string[]): Promise<string> {
  const p = Bun.spawn([agentBinary, "diff", ...args, "--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`], {
    env: agentEnv(sb.systemd.address, sb.nodeName),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect({ code, stderr }).toEqual({ code: 1, stderr: "" });
  return stdout;
}
const restarts = (unit: string) => sb.systemd.actions.filter((a) => a.action === "Restart" && a.units.includes(unit)).length;

describe("per-unit verification and revert (whole binary)", () => {
  test("should revert a unit that fails after the restart, keep the old checksum and hold that version", async () => {
    agent = sb.spawnAgent({ GARDENER_NODE_AGENT_TIMINGS: "unitVerifyWindow=1500ms" });
    const good = sb.setOsc(osc("1", false));
    await sb.waitForApplied(good, 30_000);
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/unit-failure-policy": "revert" } },
    });
    await eventually("agent output", () => agent.output().length > 0, { timeoutMs: 1_000, intervalMs: 25 });
    sb.systemd.clearActions();

    // The new version crashes 200 ms after its restart; the reverted one runs.
    sb.systemd.failAfterStart("app.service", 200, { once: true });
    const broken = sb.setOsc(osc("2", true));
    const event = await waitForEvent(sb.sim, (e) => e.reason === "UnitReverted" && e.type === "Warning", 30_000);
    expect(event.type).toBe("Warning");
    expect(event.message).toBe(
      `unit(s) app.service failed after the restart and were reverted to the last-applied configuration; operating system config ${broken} is not retried until its Secret changes or the node-agent.gardener.cloud/unit-failure-policy annotation is removed`,
    );
    expect(readFileSync(host("/etc/app/app.conf"), "utf8")).toBe("version=1\n");
    expect(readFileSync(host("/etc/systemd/system/app.service"), "utf8")).toBe("[Service]\nExecStart=/opt/bin/app --version=1\n");
    expect(existsSync(host("/etc/systemd/system/app.service.d/50-tuning.conf"))).toBe(false);
    expect(restarts("app.service")).toBe(2); // the apply's restart, then the revert's
    expect(restarts("bystander.service")).toBe(0);
    expect(sb.systemd.units.get("app.service")?.activeState).toBe("active");
    const afterRevert = sb.systemd.actions.slice(
      sb.systemd.actions.findIndex((a) => a.action === "Restart" && a.units[0] === "app.service") + 1,
    );
    expect(afterRevert.map((a) => a.action)).toContain("DaemonReload");
    expect(checksumOnNode()).toBe(good);
    expect(readFileSync(host("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml"), "utf8")).toContain(
      "unitRevert:\n  units:\n  - app.service\n",
    );

    // Held: the retry after the failed reconcile does not apply that version again.
    await eventually("the hold", () => agent.output().includes("Holding the operating system config apply"), {
      timeoutMs: 30_000,
      intervalMs: 25,
    });
    expect(restarts("app.service")).toBe(2);
    expect(nodeEvents(sb.sim).filter((e) => e.reason === "UnitReverted" && e.type === "Warning")).toHaveLength(1);
    const condition = () =>
      ((sb.node()?.["status"] as { conditions?: { type: string; status: string; reason: string }[] }).conditions ?? []).find(
        (c) => c.type === "OperatingSystemConfigApplied",
      );
    // The condition patch follows the hold's log line.
    await eventually("the condition's reason UnitReverted", condition, { until: (c) => c?.reason === "UnitReverted", intervalMs: 25 });
    expect(condition()?.status).toBe("False");
    // One event for the revert: the hold adds no Normal one of its own.
    expect(nodeEvents(sb.sim).filter((e) => e.reason === "UnitReverted")).toHaveLength(1);

    // `diff` names the same gate with the condition's reason and message, in JSON and in text.
    const revertMessage = `unit(s) app.service failed after the restart and were reverted to the last-applied configuration; operating system config ${broken} is not retried until its Secret changes or the node-agent.gardener.cloud/unit-failure-policy annotation is removed`;
    const json = JSON.parse(await diff("-o", "json")) as { gates: { gate: string; verdict: string; reason?: string; message: string }[] };
    expect(json.gates).toEqual([{ gate: "unit-revert", verdict: "stops", reason: "UnitReverted", message: revertMessage }]);
    expect(await diff()).toContain(`  unit revert holds the apply (UnitReverted): ${revertMessage}\n`);
  }, 60_000);

  test("should apply the held version again once the annotation is removed (retry policy)", async () => {
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/unit-failure-policy": null } },
    });
    const broken = new Bun.CryptoHasher("sha256").update(osc("2", true)).digest("hex");
    await sb.waitForApplied(broken, 30_000);
    expect(readFileSync(host("/etc/app/app.conf"), "utf8")).toBe("version=2\n");
    expect(readFileSync(host("/etc/systemd/system/app.service.d/50-tuning.conf"), "utf8")).toBe("[Service]\nEnvironment=TUNING=2\n");
    expect(restarts("app.service")).toBe(3);
    expect(readFileSync(host("/var/lib/gardener-node-agent/last-applied-osc.yaml"), "utf8")).toContain("--version=2");
  }, 60_000);

  test("should try a new Secret version at once while a reverted one is held", async () => {
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/unit-failure-policy": "revert" } },
    });
    sb.systemd.failAfterStart("app.service", 200, { once: true });
    const warnings = () => nodeEvents(sb.sim).filter((e) => e.reason === "UnitReverted" && e.type === "Warning").length;
    const before = warnings();
    sb.setOsc(osc("3", true));
    await eventually("the second revert", warnings, { until: (n) => n > before, timeoutMs: 30_000, intervalMs: 25 });
    expect(readFileSync(host("/etc/app/app.conf"), "utf8")).toBe("version=2\n");
    const fixed = sb.setOsc(osc("4", true));
    await sb.waitForApplied(fixed, 30_000);
    expect(readFileSync(host("/etc/app/app.conf"), "utf8")).toBe("version=4\n");
    expect(sb.systemd.units.get("app.service")?.activeState).toBe("active");
  }, 60_000);
});
