// In-place OS updates (spec osc-controller.md §9.3) of the compiled agent against the API-server
// simulator and the systemd double: the drain gate, the OS update through a real script that rewrites
// <root>/etc/os-release, rollback detection across a "reboot", and a SIGKILL during the command.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Plain } from "../fixtures/osc/acceptance-osc.ts";
import { eventually } from "../harness/eventually.ts";
import {
  changesFile,
  cleanUpWorldsAfterEach,
  expectFlagsCleared,
  expectSuccessful,
  inPlaceOsc,
  inPlaceWorld,
  lastAppliedFile,
  prepareCaRotation,
  restartsOf,
  script,
  signAgentCsr,
} from "../harness/in-place-world.ts";

cleanUpWorldsAfterEach();

describe("in-place OS updates of the compiled agent", () => {
  test("holds the update until the node is drained, then updates the OS and reports success", async () => {
    const w = await inPlaceWorld("inplace-os");
    const { sb } = w;
    sb.sim.store.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "ds-pod", namespace: "kube-system" },
      spec: { nodeName: "inplace-os", containers: [{ name: "c", image: "i" }] },
    });
    sb.sim.store.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "other-pod", namespace: "kube-system" },
      spec: { nodeName: "elsewhere", containers: [{ name: "c", image: "i" }] },
    });
    const restartsBefore = restartsOf(sb.systemd.actions, "kubelet.service");

    const checksum = sb.setOsc(inPlaceOsc({ os: "1600.0", motd: "new", updateScript: script(w) }));
    const held = await eventually("the WaitingForDrain event", () => w.events("WaitingForDrain")[0], { timeoutMs: 30_000 });
    expect(held["type"]).toBe("Normal");
    expect(held["message"]).toBe(
      "In-place update pending (operating system update): waiting for the Node condition InPlaceUpdate with reason ReadyForUpdate (node drained by machine-controller-manager)",
    );
    // Nothing of the change is on the host; the pending flags are in the changes file (upstream format).
    await eventually("the reason in the log", () => w.agent.output().includes("WaitingForDrain"), { timeoutMs: 30_000 });
    expect(await sb.readHostFile("/etc/demo/motd")).toBe("base\n");
    expect(readFileSync(join(sb.root, changesFile), "utf8")).toContain("  operatingSystem: true\n");
    expect(w.runs()).toBe(0);
    expect(restartsOf(sb.systemd.actions, "kubelet.service")).toBe(restartsBefore);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).not.toBe(checksum);

    w.setReadyForUpdate();
    await sb.waitForApplied(checksum);
    expect(w.runs()).toBe(1);
    expect(await sb.readHostFile("/etc/os-release")).toContain("Garden Linux 1600.0");
    expect(await sb.readHostFile("/etc/demo/motd")).toBe("new\n");
    expectSuccessful(w);
    expectFlagsCleared(w);
    // Deleted (a pod bound to a node is only marked, kubelet finishes it); other nodes' pods stay.
    expect((sb.sim.store.get("pods", "kube-system", "ds-pod") as Plain)["metadata"]["deletionTimestamp"]).toBeDefined();
    expect((sb.sim.store.get("pods", "kube-system", "other-pod") as Plain)["metadata"]["deletionTimestamp"]).toBeUndefined();
    expect(w.events("WaitingForDrain")).toHaveLength(1);
  });

  test("detects a rollback after the reboot, reports it once and never runs the update again", async () => {
    const w = await inPlaceWorld("inplace-rollback", { updates: false });
    const { sb } = w;
    w.setReadyForUpdate();
    const checksum = sb.setOsc(inPlaceOsc({ os: "1600.0", updateScript: script(w) }));

    // The command succeeded but the OS is still the old one: the machine is expected to reboot.
    await eventually(
      "the wait for the reboot",
      () => w.agent.output().includes("stopping reconciliation until gardener-node-agent is restarted after the OS update"),
      { timeoutMs: 30_000 },
    );
    expect(w.runs()).toBe(1);
    expect(w.node()["metadata"]["annotations"]["node-agent.gardener.cloud/updating-operating-system-version"]).toBe("1600.0");

    // A restart of the agent alone (same boot) keeps waiting for the reboot: no failure, no second run.
    await w.agent.stop("SIGKILL");
    w.restart();
    await eventually(
      "the wait after the agent restart",
      () => w.agent.output().includes("stopping reconciliation until gardener-node-agent is restarted after the OS update"),
      { timeoutMs: 30_000 },
    );
    expect(w.node()["metadata"]["labels"]["node.machine.sapcloud.io/update-result"]).toBeUndefined();
    expect(w.runs()).toBe(1);

    // Reboot: the machine comes back on 1592.6.
    await w.agent.stop("SIGKILL");
    await w.reboot("boot-2");
    w.restart();
    const failed = await eventually(
      "the failed label",
      () => (w.node()["metadata"]["labels"]["node.machine.sapcloud.io/update-result"] === "failed" ? w.node() : undefined),
      { timeoutMs: 30_000 },
    );
    const reason: string = failed["metadata"]["annotations"]["node.machine.sapcloud.io/update-failed-reason"];
    expect(reason).toContain("1600.0");
    expect(reason).toContain("1592.6");
    expect(reason).toContain("rollback");
    await eventually("the warning event", () => w.events("OSCApplyFailed").find((e) => String(e["message"]).includes("rollback")), {
      timeoutMs: 30_000,
    });
    // Never a loop: a further start reports the same reason and runs nothing.
    await w.agent.stop("SIGKILL");
    w.restart();
    await eventually("the second report", () => w.agent.output().includes("failed before, not retrying"), { timeoutMs: 30_000 });
    expect(w.runs()).toBe(1);
    expect(w.node()["metadata"]["annotations"]["node.machine.sapcloud.io/update-failed-reason"]).toBe(reason);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).not.toBe(checksum);
  });

  test("runs an OS update command again that was interrupted by a SIGKILL of the agent", async () => {
    const w = await inPlaceWorld("inplace-kill-os", { blockFirstRun: true });
    const { sb } = w;
    w.setReadyForUpdate();
    const checksum = sb.setOsc(inPlaceOsc({ os: "1600.0", updateScript: script(w) }));
    const pid = Number(
      await eventually(
        "the hanging update command",
        () => (existsSync(join(w.dir, "pid")) ? readFileSync(join(w.dir, "pid"), "utf8").trim() || undefined : undefined),
        { timeoutMs: 30_000 },
      ),
    );
    await w.agent.stop("SIGKILL");
    process.kill(pid, "SIGKILL");
    expect(readFileSync(join(sb.root, changesFile), "utf8")).toContain(
      "  operatingSystemUpdate:\n    bootID: boot-1\n    state: running\n",
    );

    w.restart();
    await sb.waitForApplied(checksum);
    expect(w.runs()).toBe(2);
    expect(await sb.readHostFile("/etc/os-release")).toContain("Garden Linux 1600.0");
    expectSuccessful(w);
    expectFlagsCleared(w);
  });

  test("stops at an in-place field it does not implement, with a Warning event naming it", async () => {
    const w = await inPlaceWorld("inplace-unknown");
    const { sb } = w;
    w.setReadyForUpdate();
    const osc = JSON.parse(inPlaceOsc({ os: "1600.0", motd: "new", updateScript: script(w) })) as Plain;
    osc["spec"]["inPlaceUpdates"]["machineImageDigest"] = "sha256:abc";
    const checksum = sb.setOsc(JSON.stringify(osc));
    const warning = await eventually("the warning", () => w.events("OSCApplyFailed")[0], { timeoutMs: 30_000 });
    expect(warning["type"]).toBe("Warning");
    expect(warning["message"]).toContain(
      "operating system config field spec.inPlaceUpdates.machineImageDigest is not supported by this agent",
    );
    expect(await sb.readHostFile("/etc/demo/motd")).toBe("base\n");
    expect(w.runs()).toBe(0);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).not.toBe(checksum);
  });

  test("rotates the CA before a wipe-based OS update; after the reboot it applies from scratch and records the rotation", async () => {
    const w = await inPlaceWorld("inplace-wipe", { updates: false, keepsChanges: true });
    const { sb } = w;
    await prepareCaRotation(sb);
    w.setReadyForUpdate();
    const lastApplied = join(sb.root, lastAppliedFile);
    const checksum = sb.setOsc(inPlaceOsc({ os: "1600.0", motd: "new", caRotation: "2026-11-24T10:00:00Z", updateScript: script(w) }));
    await signAgentCsr(sb);

    // The OS update ran after both rotations: its snapshot of the changes file has them done, the OS still due.
    await eventually(
      "the wait for the reboot",
      () => w.agent.output().includes("stopping reconciliation until gardener-node-agent is restarted after the OS update"),
      { timeoutMs: 30_000 },
    );
    const atUpdate = readFileSync(join(w.dir, "changes-at-update"), "utf8");
    expect(atUpdate).toContain("  certificateAuthoritiesRotation:\n    kubelet: false\n    nodeAgent: false\n");
    expect(atUpdate).toContain("  operatingSystem: true\n");
    expect(existsSync(join(sb.root, "var/lib/kubelet/kubeconfig-real"))).toBe(false);
    expect(existsSync(join(sb.root, "var/lib/kubelet/pki"))).toBe(false);
    expect(w.runs()).toBe(1);

    // The reboot wipes /etc and both state files and brings the new OS; the agent applies the Secret from scratch.
    await w.agent.stop("SIGKILL");
    await w.wipe();
    await writeFile(join(sb.root, "etc/os-release"), 'NAME="Garden Linux"\nPRETTY_NAME="Garden Linux 1600.0"\n');
    await w.reboot("boot-2");
    const kubeletRestarts = restartsOf(sb.systemd.actions, "kubelet.service");
    w.restart();
    await sb.waitForApplied(checksum);
    expect(await sb.readHostFile("/etc/demo/motd")).toBe("new\n");
    expect(restartsOf(sb.systemd.actions, "kubelet.service")).toBe(kubeletRestarts + 1);
    expect(w.runs()).toBe(1);
    expect(sb.sim.store.list("certificatesigningrequests")).toHaveLength(1);
    expect(readFileSync(lastApplied, "utf8")).toContain('lastInitiationTime: "2026-11-24T10:00:00Z"');
    expectSuccessful(w);
    expectFlagsCleared(w);

    // The recorded rotation time is the one carried out: a later change of the same rotation rotates nothing.
    const later = sb.setOsc(inPlaceOsc({ os: "1600.0", motd: "later", caRotation: "2026-11-24T10:00:00Z", updateScript: script(w) }));
    await sb.waitForApplied(later);
    expect(sb.sim.store.list("certificatesigningrequests")).toHaveLength(1);
    expect(await sb.readHostFile("/etc/demo/motd")).toBe("later\n");
    expect(w.runs()).toBe(1);
  });
});
