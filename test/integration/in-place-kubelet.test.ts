// In-place kubelet and credential updates (spec osc-controller.md §9.3) of the compiled agent: kubelet
// minor version, CPU-manager policy, CA rotation, and a SIGKILL during the kubelet restart.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  changesFile,
  cleanUpWorldsAfterEach,
  expectFlagsCleared,
  expectSuccessful,
  inPlaceOsc,
  inPlaceWorld,
  kubeletConfigPath,
  prepareCaRotation,
  restartsOf,
  signAgentCsr,
  type World,
} from "../harness/in-place-world.ts";

cleanUpWorldsAfterEach();

describe("in-place kubelet and credential updates of the compiled agent", () => {
  test("updates the kubelet minor version in place and checks its health before clearing the flags", async () => {
    const w = await inPlaceWorld("inplace-kubelet");
    const { sb } = w;
    w.setReadyForUpdate();
    const before = restartsOf(sb.systemd.actions, "kubelet.service");
    const checksum = sb.setOsc(inPlaceOsc({ kubelet: "1.32.0" }));
    await sb.waitForApplied(checksum);
    expect(restartsOf(sb.systemd.actions, "kubelet.service")).toBe(before + 1);
    expect(await sb.readHostFile("/etc/systemd/system/kubelet.service")).toContain("kubelet-1.32.0");
    expect(w.agent.output()).toContain("Checking kubelet health after the in-place kubelet update");
    expectSuccessful(w);
    expectFlagsCleared(w);
  });

  test("removes the CPU manager state before kubelet restarts with a new CPU manager policy", async () => {
    let stateAtRestart: boolean | undefined;
    let root = "";
    const w = await inPlaceWorld("inplace-cpu", {
      sandbox: {
        systemd: {
          onAction: (a) => {
            if (a.action === "Restart" && a.units.includes("kubelet.service") && root !== "")
              stateAtRestart = existsSync(join(root, "var/lib/kubelet/cpu_manager_state"));
          },
        },
      },
    });
    const { sb } = w;
    await writeFile(join(sb.root, "var/lib/kubelet/cpu_manager_state"), '{"policyName":"none"}');
    root = sb.root;
    w.setReadyForUpdate();
    const checksum = sb.setOsc(inPlaceOsc({ policy: "static" }));
    await sb.waitForApplied(checksum);
    expect(stateAtRestart).toBe(false);
    expect(await sb.readHostFile(kubeletConfigPath)).toContain("cpuManagerPolicy: static");
    expectSuccessful(w);
    expectFlagsCleared(w);
  });

  test("rotates the certificate authorities: new kubelet and agent credentials, then a restart", async () => {
    const w = await inPlaceWorld("inplace-ca");
    const { sb } = w;
    const oldKubeconfig = await prepareCaRotation(sb);
    w.setReadyForUpdate();
    const before = restartsOf(sb.systemd.actions, "kubelet.service");
    const checksum = sb.setOsc(inPlaceOsc({ caRotation: "2026-11-24T10:00:00Z" }));
    await signAgentCsr(sb);
    // The agent restarts itself to use its new certificate (systemd would start it again).
    expect(await w.agent.proc.exited).toBe(0);
    const bootstrap = await sb.readHostFile("/var/lib/kubelet/kubeconfig-bootstrap");
    expect(bootstrap).toContain(`server: ${sb.sim.url}`);
    expect(bootstrap).toContain("certificate-authority: /var/lib/gardener-node-agent/cluster-ca.crt");
    expect(bootstrap).toContain(`client-certificate-data: ${Buffer.from("KUBELET-PEM").toString("base64")}`);
    expect(bootstrap).toContain("current-context: default-context");
    expect(existsSync(join(sb.root, "var/lib/kubelet/kubeconfig-real"))).toBe(false);
    expect(existsSync(join(sb.root, "var/lib/kubelet/pki"))).toBe(false);
    expect(restartsOf(sb.systemd.actions, "kubelet.service")).toBe(before + 1);
    expect(await sb.readHostFile("/var/lib/gardener-node-agent/credentials/kubeconfig")).not.toBe(oldKubeconfig);
    expect(readFileSync(join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml"), "utf8")).toContain(
      'lastInitiationTime: "2026-11-24T10:00:00Z"',
    );

    w.restart();
    await sb.waitForApplied(checksum);
    expectSuccessful(w);
    expectFlagsCleared(w);
  });

  test("resumes an in-place kubelet update after a SIGKILL during the kubelet restart", async () => {
    let agentRef: World | undefined;
    let armed = false;
    const w = await inPlaceWorld("inplace-kill", {
      sandbox: {
        systemd: {
          onAction: (a) => {
            if (armed && a.action === "Restart" && a.units.includes("kubelet.service")) {
              armed = false;
              agentRef?.agent.proc.kill("SIGKILL");
            }
          },
        },
      },
    });
    agentRef = w;
    const { sb } = w;
    w.setReadyForUpdate();
    armed = true;
    const checksum = sb.setOsc(inPlaceOsc({ kubelet: "1.32.0", policy: "static" }));
    expect(await w.agent.proc.exited).not.toBe(0);
    expect(readFileSync(join(sb.root, changesFile), "utf8")).toContain("    minorVersion: true\n");

    w.restart();
    await sb.waitForApplied(checksum);
    expectSuccessful(w);
    expectFlagsCleared(w);
    expect(await sb.readHostFile("/etc/systemd/system/kubelet.service")).toContain("kubelet-1.32.0");
  });
});
