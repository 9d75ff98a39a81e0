// Crash safety of an apply: the compiled agent is SIGKILLed at every step boundary it exposes to the
// outside (each systemd call as it arrives: enables, daemon-reload, each restart; and the moment
// last-applied-osc.yaml lands), then started again. The host must converge to the desired state and no
// unit may be restarted more than once beyond what the OSC asks for.
import { describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { SystemdAction } from "../doubles/systemd/index.ts";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import type { AgentProcess, Sandbox } from "../harness/sandbox.ts";
import { eventually } from "../harness/eventually.ts";

const osc = (greeting: string) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: kubelet.service
    content: "[Service]\\nExecStart=/opt/bin/kubelet\\n"
    dropIns:
    - name: 10-args.conf
      content: "[Service]\\nEnvironment=A=1\\n"
    filePaths: [/var/lib/kubelet/config/kubelet]
  - name: greeter.service
    content: "[Service]\\nType=oneshot\\nExecStart=/bin/true\\n"
    filePaths: [/etc/demo/greeting.txt]
  - name: stopped.service
    enable: false
    content: "[Service]\\nExecStart=/bin/true\\n"
  files:
  - path: /var/lib/kubelet/config/kubelet
    permissions: 384
    content: {inline: {data: "kind: KubeletConfiguration\\n"}}
  - path: /etc/demo/greeting.txt
    permissions: 0644
    content: {inline: {data: "${greeting}\\n"}}
  - path: /opt/bin/tool
    permissions: 493
    content: {inline: {encoding: b64, data: ${Buffer.from("#!/bin/sh\necho tool\n").toString("base64")}}}
`;

const expectedFiles: [string, number, string][] = [
  ["/var/lib/kubelet/config/kubelet", 0o600, "kind: KubeletConfiguration\n"],
  ["/etc/demo/greeting.txt", 0o644, "hello\n"],
  ["/opt/bin/tool", 0o755, "#!/bin/sh\necho tool\n"],
  ["/etc/systemd/system/kubelet.service", 0o600, "[Service]\nExecStart=/opt/bin/kubelet\n"],
  ["/etc/systemd/system/kubelet.service.d/10-args.conf", 0o600, "[Service]\nEnvironment=A=1\n"],
  ["/etc/systemd/system/greeter.service", 0o600, "[Service]\nType=oneshot\nExecStart=/bin/true\n"],
  ["/etc/systemd/system/stopped.service", 0o600, "[Service]\nExecStart=/bin/true\n"],
];

/** Kill points: the n-th systemd action of a kind, as it arrives at the manager. */
const killPoints: [string, SystemdAction["action"], number][] = [
  // All units are enabled in one EnableUnitFiles call (units.ts), so there is one enable to die in.
  ["while enabling the units", "Enable", 1],
  ["while disabling the stopped unit", "Disable", 1],
  ["during daemon-reload", "DaemonReload", 1],
  ["during the first restart", "Restart", 1],
  ["during the third restart", "Restart", 3],
  ["during the stop of the disabled unit", "Stop", 1],
];

/** Resolves once no systemd action arrived for 300 ms (deadline 5 s). */
async function quiet(sb: Sandbox): Promise<void> {
  const deadline = Date.now() + 5_000;
  let count = sb.systemd.actions.length;
  let since = Date.now();
  while (Date.now() - since < 300 && Date.now() < deadline) {
    await Bun.sleep(20);
    if (sb.systemd.actions.length !== count) {
      count = sb.systemd.actions.length;
      since = Date.now();
    }
  }
}

const restartsPerUnit = (actions: readonly SystemdAction[]) => {
  const n = new Map<string, number>();
  for (const a of actions) if (a.action === "Restart") for (const u of a.units) n.set(u, (n.get(u) ?? 0) + 1);
  return n;
};

async function expectConverged(sb: Sandbox): Promise<void> {
  for (const [path, mode, content] of expectedFiles) {
    const real = join(sb.root, path);
    expect(existsSync(real)).toBe(true);
    expect(statSync(real).mode & 0o7777).toBe(mode);
    expect(await sb.readHostFile(path)).toBe(content);
  }
  expect(existsSync(join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml"))).toBe(true);
}

const startSandbox = useSandbox();

describe("an apply killed with SIGKILL", () => {
  test.each(killPoints)("converges after a restart when killed %s", async (_name, action, nth) => {
    let agent: AgentProcess | undefined;
    let seen = 0;
    let killed = false;
    const sb = await startSandbox({
      nodeName: "crash-worker",
      systemd: {
        onAction: (a) => {
          if (killed || a.action !== action) return;
          seen += 1;
          if (seen === nth) {
            killed = true;
            agent?.proc.kill("SIGKILL");
          }
        },
      },
    });
    const checksum = sb.setOsc(osc("hello"));
    agent = sb.spawnAgent();
    expect(await agent.proc.exited).not.toBe(0);
    expect(killed).toBe(true);
    // Calls the agent wrote to the bus just before it died are still being delivered: they belong to
    // the first run, so wait until the action log is quiet before taking its share.
    await quiet(sb);
    const beforeKill = [...sb.systemd.actions];

    const second = sb.spawnAgent();
    await sb.waitForApplied(checksum);
    await second.stop();
    await expectConverged(sb);

    const all = sb.systemd.actions;
    const total = restartsPerUnit(all);
    const early = restartsPerUnit(beforeKill);
    for (const unit of ["kubelet.service", "greeter.service", "containerd.service"]) {
      const count = total.get(unit) ?? 0;
      // Exactly once when its restart never began before the kill; at most once more when it did.
      expect(count).toBeGreaterThanOrEqual(1);
      expect(count).toBeLessThanOrEqual((early.get(unit) ?? 0) + 1);
    }
    expect(total.get("stopped.service")).toBeUndefined();
    expect(sb.systemd.units.get("stopped.service")?.activeState ?? "inactive").not.toBe("active");
  });

  test("converges when killed right after last-applied-osc.yaml is written", async () => {
    const sb = await startSandbox({ nodeName: "crash-worker" });
    const checksum = sb.setOsc(osc("hello"));
    const agent = sb.spawnAgent();
    const lastApplied = join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml");
    await eventually("last-applied-osc.yaml", () => existsSync(lastApplied), { timeoutMs: 20_000, intervalMs: 1 });
    agent.proc.kill("SIGKILL");
    await agent.proc.exited;
    await quiet(sb);
    const restartsBefore = restartsPerUnit(sb.systemd.actions);

    const second = sb.spawnAgent();
    await sb.waitForApplied(checksum);
    await second.stop();
    await expectConverged(sb);
    // Everything was done before the kill: the second run restarts nothing.
    expect(restartsPerUnit(sb.systemd.actions)).toEqual(restartsBefore);
  });
});
