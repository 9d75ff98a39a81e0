import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdir, readFile, lstat } from "node:fs/promises";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import type { FileWrite, HostFs } from "../../src/host/index.ts";
import { RestartRequested } from "../../src/kube/reconcile.ts";
import { createDbusSystemd } from "../../src/systemd/dbus.ts";
import type { Systemd } from "../../src/systemd/types.ts";
import { startSystemdDouble, type SystemdDouble } from "../doubles/systemd/index.ts";
import { acceptanceOsc, defaultHostsToml, k8sHostsToml, type Plain } from "../fixtures/osc/acceptance-osc.ts";
import { fakeElf, type OscWorld, silentLog } from "../fixtures/osc/harness.ts";
import { useOscWorlds } from "../harness/osc-worlds.ts";

const env = useOscWorlds();
const world = env.world;

const sorted = (xs: string[]) => [...xs].sort();
const units = (...n: (string | number)[]) => n.map((x) => (typeof x === "number" ? `unit${x}.service` : x));
const lastAppliedPath = "/var/lib/gardener-node-agent/last-applied-osc.yaml";
const changesPath = "/var/lib/gardener-node-agent/last-computed-osc-changes.yaml";
const emptyChanges = (sum: string) =>
  `containerd:\n  configFileChanged: false\n  registries: {}\nfiles: {}\ninPlaceUpdates:\n  certificateAuthoritiesRotation:\n    kubelet: false\n    nodeAgent: false\n  kubelet:\n    config: false\n    cpuManagerPolicy: false\n    minorVersion: false\n  operatingSystem: false\n  serviceAccountKeyRotation: false\nmustRestartNodeAgent: false\noperatingSystemConfigChecksum: ${sum}\nunits: {}\n`;

/** Splits the action log at the single daemon-reload: [before, after]. */
function aroundReload(w: OscWorld): [string[], string[]] {
  const a = w.actions();
  const i = a.indexOf("DaemonReload");
  expect(i).toBeGreaterThanOrEqual(0);
  expect(a.filter((x) => x === "DaemonReload")).toHaveLength(1);
  return [a.slice(0, i), a.slice(i + 1)];
}

/** Scenario 1 applied, action log cleared. */
async function applied(): Promise<OscWorld> {
  const w = await world();
  w.setOsc(acceptanceOsc());
  await w.reconcile();
  w.systemd.clearActions();
  return w;
}

describe("OSC controller", () => {
  test("applies everything on the first run without state (scenario 1)", async () => {
    const w = await world();
    const sum = w.setOsc(acceptanceOsc());
    const res = await w.reconcile();
    expect(res).toEqual({ requeueAfterMs: 600_000 });

    for (const [path, content, mode] of [
      ["/example/file", "file1", 0o777],
      ["/another/file", "file2", 0o600],
      ["/third/file", "file3", 0o750],
      ["/unchanged/file", "file4", 0o750],
      ["/changed/file", "file5", 0o750],
      ["/sixth/file", "file6", 0o750],
      ["/seventh/file", "file7", 0o750],
      ["/opt/bin/init-containerd", "file8", 0o644],
      ["/secretref/file", "file9", 0o750],
    ] as const) {
      expect(await w.text(path)).toBe(content);
      expect(await w.mode(path)).toBe(mode);
    }
    for (const n of [1, 2, 4, 5, 6, 7, 8]) {
      expect(await w.text(`/etc/systemd/system/unit${n}.service`)).toBe(`#unit${n}`);
      expect(await w.mode(`/etc/systemd/system/unit${n}.service`)).toBe(0o600);
    }
    expect(await w.exists("/etc/systemd/system/unit3.service")).toBe(false);
    expect(await w.exists("/etc/systemd/system/unit9.service")).toBe(false);
    expect(await w.host.list("/etc/systemd/system/unit5.service.d")).toEqual(["drop1", "drop2", "extensionsdrop"]);
    expect(await w.mode("/etc/systemd/system/unit1.service.d/drop")).toBe(0o600);
    expect(await w.text("/etc/systemd/system/existing-unit.service")).toBe("#existingunit");
    expect(await w.text("/etc/systemd/system/existing-unit.service.d/existing-dropin.conf")).toBe("#existingdropin");
    expect(await w.text("/etc/systemd/system/existing-unit.service.d/drop")).toBe("#existingunitdrop");

    for (const d of [
      "/var/bin/containerruntimes",
      "/etc/containerd/certs.d",
      "/etc/containerd/conf.d",
      "/etc/systemd/system/containerd.service.d",
    ]) {
      expect((await w.host.stat(d))?.kind).toBe("dir");
    }
    expect(await w.text("/etc/systemd/system/containerd.service.d/30-env_config.conf")).toBe(
      '[Service]\nEnvironment="PATH=/var/bin/containerruntimes:/usr/local/bin:/usr/bin:/bin"\n',
    );
    expect(await w.text("/etc/systemd/system/containerd.service.d/extensionsdrop.conf")).toBe("#containerdextensionsdrop");
    expect(await w.mode("/etc/containerd/config.toml")).toBe(0o644);
    const toml = parseToml((await w.text("/etc/containerd/config.toml")) ?? "") as Plain;
    expect(toml["imports"]).toEqual(["/etc/containerd/conf.d/*.toml"]);
    expect(toml["plugins"]["bar"]).toEqual({});
    expect(toml["plugins"]["foo"]["bar"]).toEqual({ someKey2: "someValue2", "foo.bar": { someKey: "someValue" } });
    const cri = toml["plugins"]["io.containerd.grpc.v1.cri"];
    expect(cri["sandbox_image"]).toBe("registry.k8s.io/pause:latest");
    expect(cri["cni"]["bin_dir"]).toBe("/opt/cni/bin");
    expect(cri["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"]).toBe(true);
    expect(cri["registry"]["config_path"]).toBe("/etc/containerd/certs.d");
    expect(await w.text("/etc/containerd/certs.d/_default/hosts.toml")).toBe(defaultHostsToml);
    expect(await w.text("/etc/containerd/certs.d/registry.k8s.io/hosts.toml")).toBe(k8sHostsToml);

    const [before, after] = aroundReload(w);
    const enabled = units(1, 3, 4, 5, 6, 7, 8, 9, "containerd.service", "existing-unit.service");
    expect(sorted(before)).toEqual(sorted([...enabled.map((u) => `Enable ${u}`), "Disable unit2.service"]));
    expect(sorted(after)).toEqual(sorted([...enabled.map((u) => `Restart ${u}`), "Stop unit2.service"]));

    expect(await w.exists("/var/lib/gardener-node-agent/credentials/bootstrap-token")).toBe(false);
    expect(await w.exists("/var/lib/kubelet/kubeconfig-bootstrap")).toBe(false);
    expect(await w.text(changesPath)).toBe(emptyChanges(sum));
    expect(await w.mode(changesPath)).toBe(0o600);
    expect(await w.mode(lastAppliedPath)).toBe(0o600);
    expect(await w.text(lastAppliedPath)).toContain("30-env_config.conf");
    const node = w.node();
    expect(node["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(sum);
    expect(node["metadata"]["labels"]["worker.gardener.cloud/kubernetes-version"]).toBe("1.2.3");
    expect(node["metadata"]["labels"]["node-role.kubernetes.io/worker"]).toBe("");
    const reasons = w.events().map((e) => `${e["type"]} ${e["reason"]}`);
    expect(reasons).toContain("Normal OSCApplied");
    expect(reasons.filter((r) => r === "Normal SystemDUnitRestart")).toHaveLength(10);
    expect(reasons.filter((r) => r === "Normal SystemDUnitStop")).toHaveLength(1);
    expect(w.events().find((e) => e["reason"] === "OSCApplied")?.["message"]).toBe("Operating system config has been applied successfully");
  });

  test("resumes a partially failed apply with only the failed work (scenario 2)", async () => {
    const w = await applied();
    const osc = acceptanceOsc();
    osc["spec"]["units"][0].command = "stop";
    Object.assign(osc["spec"]["units"][1], { enable: true, command: "start" });
    const sum = w.setOsc(osc);
    w.systemd.failNextJob("unit2.service", { operation: "restart" });
    await expect(w.reconcile()).rejects.toThrow("failed executing unit commands");
    const [before, after] = aroundReload(w);
    expect(sorted(before)).toEqual(["Enable unit1.service", "Enable unit2.service"]);
    expect(sorted(after)).toEqual(["Restart unit2.service", "Stop unit1.service"]);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).not.toBe(sum);
    expect(w.events().some((e) => e["type"] === "Warning" && e["reason"] === "SystemDUnitRestart")).toBe(true);

    w.systemd.clearActions();
    await w.reconcile();
    expect(w.actions()).toEqual(["DaemonReload", "Restart unit2.service"]);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(sum);
    expect(await w.text(changesPath)).toBe(emptyChanges(sum));
  });

  test("applies the difference to the previous OSC and hands deleted synced files to the token controller (scenarios 3, 4)", async () => {
    const w = await applied();
    await w.host.chmod("/etc/systemd/system/unit2.service", 0o777);
    await w.host.writeFileAtomic("/etc/containerd/certs.d/_default/hosts.toml", "foo", 0o644);
    const osc = acceptanceOsc();
    const spec = osc["spec"];
    const status = osc["status"];
    spec["units"] = spec["units"].filter((u: Plain) => u.name !== "unit1.service");
    Object.assign(
      spec["units"].find((u: Plain) => u.name === "unit2.service"),
      {
        enable: true,
        command: "start",
        dropIns: [{ name: "dropdropdrop", content: "#dropdropdrop" }],
      },
    );
    spec["units"][1].dropIns = spec["units"][1].dropIns.filter((d: Plain) => d.name !== "drop1");
    delete spec["units"].find((u: Plain) => u.name === "unit6.service").filePaths;
    spec["files"].find((f: Plain) => f.path === "/changed/file").content.inline.data = "changeme";
    status["extensionFiles"] = status["extensionFiles"].filter((f: Plain) => f.path !== "/another/file");
    status["extensionFiles"].find((f: Plain) => f.path === "/sixth/file").content.inline.data = "changed";
    status["extensionFiles"].find((f: Plain) => f.path === "/seventh/file").content.inline.data = "changed-as-well";
    Object.assign(
      status["extensionUnits"].find((u: Plain) => u.name === "unit4.service"),
      { enable: false },
    );
    delete status["extensionUnits"].find((u: Plain) => u.name === "unit4.service").dropIns;
    status["extensionUnits"] = status["extensionUnits"].filter(
      (u: Plain) => u.name !== "existing-unit.service" && u.name !== "containerd.service",
    );
    const sum = w.setOsc(osc);
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 600_000 });

    expect(await w.exists("/another/file")).toBe(false);
    expect(await w.exists("/etc/systemd/system/unit1.service")).toBe(false);
    expect(await w.exists("/etc/systemd/system/unit1.service.d")).toBe(false);
    expect(await w.mode("/etc/systemd/system/unit2.service")).toBe(0o600);
    expect(await w.text("/etc/systemd/system/unit2.service.d/dropdropdrop")).toBe("#dropdropdrop");
    expect(await w.exists("/etc/systemd/system/unit4.service.d")).toBe(false);
    expect(await w.text("/etc/systemd/system/unit4.service")).toBe("#unit4");
    expect(await w.host.list("/etc/systemd/system/unit5.service.d")).toEqual(["drop2", "extensionsdrop"]);
    expect(await w.text("/changed/file")).toBe("changeme");
    expect(await w.text("/sixth/file")).toBe("changed");
    expect(await w.text("/seventh/file")).toBe("changed-as-well");
    expect(await w.host.list("/etc/systemd/system/existing-unit.service.d")).toEqual(["existing-dropin.conf"]);
    expect(await w.text("/etc/systemd/system/existing-unit.service")).toBe("#existingunit");
    expect(await w.host.list("/etc/systemd/system/containerd.service.d")).toEqual(["30-env_config.conf"]);
    expect(await w.text("/etc/containerd/certs.d/_default/hosts.toml")).toBe(defaultHostsToml);

    const all = w.actions();
    expect(sorted(all)).toEqual(
      sorted([
        ...units(2, 5, 6, 7, 8, 9, "containerd.service").flatMap((u) => [`Enable ${u}`, `Restart ${u}`]),
        "Disable unit4.service",
        "Stop unit4.service",
        "Disable unit1.service",
        "Stop unit1.service",
        "Restart existing-unit.service",
        "DaemonReload",
      ]),
    );
    const reload = all.indexOf("DaemonReload");
    for (const u of units(2, 5, 6, 7, 8, 9, "containerd.service")) {
      expect(all.indexOf(`Enable ${u}`)).toBeLessThan(reload);
      expect(all.indexOf(`Restart ${u}`)).toBeGreaterThan(reload);
    }
    expect(all.indexOf("Stop unit4.service")).toBeGreaterThan(reload);
    expect(all.some((a) => a.includes("unit3.service"))).toBe(false);
    expect(w.resyncs).toEqual([{ namespace: "kube-system", name: "test-secret-1" }]);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(sum);
  });

  test("changes registries and sandbox image with one containerd restart (scenario 5)", async () => {
    const w = await applied();
    const osc = acceptanceOsc();
    const cd = osc["spec"]["criConfig"]["containerd"];
    cd.registries = cd.registries.filter((r: Plain) => r.upstream === "registry.k8s.io");
    cd.sandboxImage = "registry.k8s.io/pause:new";
    w.setOsc(osc);
    await w.reconcile();
    expect(await w.exists("/etc/containerd/certs.d/_default")).toBe(false);
    expect(await w.text("/etc/containerd/certs.d/registry.k8s.io/hosts.toml")).toBe(k8sHostsToml);
    const toml = parseToml((await w.text("/etc/containerd/config.toml")) ?? "") as Plain;
    expect(toml["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"]).toBe("registry.k8s.io/pause:new");
    expect(w.actions()).toEqual(["DaemonReload", "Restart containerd.service"]);
  });

  test("removes a plugin subtree from config.toml (scenario 6)", async () => {
    const w = await applied();
    const osc = acceptanceOsc();
    osc["spec"]["criConfig"]["containerd"].plugins.push({ op: "remove", path: ["foo"] });
    w.setOsc(osc);
    await w.reconcile();
    const toml = parseToml((await w.text("/etc/containerd/config.toml")) ?? "") as Plain;
    expect(toml["plugins"]["foo"]).toBeUndefined();
    expect(toml["plugins"]["bar"]).toEqual({});
    expect(toml["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"]).toBe("registry.k8s.io/pause:latest");
    expect(w.actions()).toEqual(["DaemonReload", "Restart containerd.service"]);
  });

  test("flips only SystemdCgroup when the cgroup driver changes (scenario 7)", async () => {
    const w = await applied();
    const before = parseToml((await w.text("/etc/containerd/config.toml")) ?? "") as Plain;
    const osc = acceptanceOsc();
    osc["spec"]["criConfig"].cgroupDriver = "cgroupfs";
    w.setOsc(osc);
    await w.reconcile();
    const after = parseToml((await w.text("/etc/containerd/config.toml")) ?? "") as Plain;
    before["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"] = false;
    expect(after).toEqual(before);
    expect(w.actions()).toEqual(["DaemonReload", "Restart containerd.service"]);
  });

  test("restarts itself for a new agent unit without asking systemd to restart it (scenario 8)", async () => {
    const w = await applied();
    const osc = acceptanceOsc();
    osc["spec"]["units"].push({ name: "gardener-node-agent.service", enable: false, content: "#gna" });
    const sum = w.setOsc(osc);
    await expect(w.reconcile()).rejects.toBeInstanceOf(RestartRequested);
    expect(await w.text("/etc/systemd/system/gardener-node-agent.service")).toBe("#gna");
    expect(await w.mode("/etc/systemd/system/gardener-node-agent.service")).toBe(0o600);
    expect(w.actions()).toEqual(["Enable gardener-node-agent.service", "DaemonReload"]);
    expect(await w.text(changesPath)).toContain("mustRestartNodeAgent: false");

    w.systemd.clearActions();
    await w.reconcile();
    expect(w.actions()).toEqual(["DaemonReload"]);
    expect(await w.text(lastAppliedPath)).toContain("#gna");
    expect(await w.text(changesPath)).toBe(emptyChanges(sum));
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(sum);
  });

  test("restarts itself even when another unit's restart would fail (scenario 9)", async () => {
    const w = await applied();
    const osc = acceptanceOsc();
    osc["spec"]["units"].push({ name: "gardener-node-agent.service", content: "#gna" }, { name: "broken.service", content: "#broken" });
    w.setOsc(osc);
    w.systemd.failJobs("broken.service");
    await expect(w.reconcile()).rejects.toBeInstanceOf(RestartRequested);
    expect(w.actions().some((a) => a.startsWith("Restart"))).toBe(false);
  });

  test("leaves containerd alone without a CRI config but restarts it on the first apply (scenario 10)", async () => {
    const w = await world();
    const osc = acceptanceOsc();
    delete osc["spec"]["criConfig"];
    osc["status"]["extensionUnits"] = osc["status"]["extensionUnits"].filter((u: Plain) => u.name !== "containerd.service");
    w.setOsc(osc);
    await w.reconcile();
    for (const p of ["/var/bin/containerruntimes", "/etc/containerd", "/etc/systemd/system/containerd.service.d"]) {
      expect(await w.exists(p)).toBe(false);
    }
    expect(w.actions().filter((a) => a.includes("containerd"))).toEqual(["Restart containerd.service"]);
  });

  test.each([
    ["a worker", false, "node-role.kubernetes.io/worker"],
    ["a control plane", true, "node-role.kubernetes.io/control-plane"],
  ])("labels %s node by its role (scenario 11)", async (_n, controlPlane, label) => {
    const w = await world();
    const osc = acceptanceOsc();
    // A decodable Pod: an undecodable static pod manifest fails the reconcile (9.1) after the labels.
    const apiserver = "apiVersion: v1\nkind: Pod\nmetadata: {name: kube-apiserver}\n";
    if (controlPlane)
      osc["spec"]["files"].push({
        path: "/etc/kubernetes/manifests/kube-apiserver.yaml",
        content: { inline: { encoding: "", data: apiserver } },
      });
    w.setOsc(osc);
    await w.reconcile();
    expect(w.node()["metadata"]["labels"][label]).toBe("");
  });

  test("labels the zone from the zone file and sets no zone without it (scenario 12)", async () => {
    const a = await world();
    await a.host.writeFileAtomic("/var/lib/gardener-node-agent/zone", "zone-a\n", 0o644);
    a.setOsc(acceptanceOsc());
    await a.reconcile();
    expect(a.node()["metadata"]["labels"]["topology.kubernetes.io/zone"]).toBe("zone-a");
    const b = await world();
    b.setOsc(acceptanceOsc());
    await b.reconcile();
    expect(b.node()["metadata"]["labels"]["topology.kubernetes.io/zone"]).toBeUndefined();
  });

  test("only patches labels when the node is up to date (scenario 14)", async () => {
    const w = await applied();
    await w.host.writeFileAtomic("/var/lib/gardener-node-agent/zone", "zone-b", 0o644);
    const before = await w.text(changesPath);
    await w.host.remove("/example/file");
    expect(await w.reconcile()).toEqual({});
    expect(w.actions()).toEqual([]);
    expect(await w.exists("/example/file")).toBe(false);
    expect(await w.text(changesPath)).toBe(before);
    expect(w.node()["metadata"]["labels"]["topology.kubernetes.io/zone"]).toBe("zone-b");
  });

  test("writes and deletes only files meant for this host (scenario 20)", async () => {
    const w = await world();
    const osc = acceptanceOsc();
    osc["spec"]["files"].push(
      { path: "/mine", hostName: w.hostName, content: { inline: { encoding: "", data: "mine" } } },
      { path: "/theirs", hostName: "some-other-hostname", content: { inline: { encoding: "", data: "theirs" } } },
    );
    w.setOsc(osc);
    await w.reconcile();
    expect(await w.text("/mine")).toBe("mine");
    expect(await w.exists("/theirs")).toBe(false);

    await w.host.writeFileAtomic("/theirs", "local", 0o644);
    osc["spec"]["files"] = osc["spec"]["files"].filter((f: Plain) => f.path !== "/theirs");
    w.setOsc(osc);
    await w.reconcile();
    expect(await w.text("/theirs")).toBe("local");
    expect(await w.text("/mine")).toBe("mine");
  });

  test.each([
    ["plain", "", "hello", "hello"],
    ["b64", "b64", "aGVsbG8=", "hello"],
  ])("writes %s content (scenario 21)", async (_n, encoding, data, want) => {
    const w = await world();
    const osc = acceptanceOsc();
    osc["spec"]["files"].push({ path: "/enc", content: { inline: { encoding, data } } });
    w.setOsc(osc);
    await w.reconcile();
    expect(await w.text("/enc")).toBe(want);
  });

  test.each([
    [
      "an unknown encoding",
      { path: "/bad", content: { inline: { encoding: "gzip", data: "x" } } },
      'invalid file codec id: expected "" or "b64"',
    ],
    [
      "the base64 encoding name",
      { path: "/bad", content: { inline: { encoding: "base64", data: "eA==" } } },
      'invalid file codec id: expected "" or "b64"',
    ],
    ["invalid base64", { path: "/bad", content: { inline: { encoding: "b64", data: "!!!" } } }, "illegal base64"],
    ["a relative path", { path: "bad", content: { inline: { encoding: "", data: "x" } } }, "is not absolute"],
    ["an escaping path", { path: "/../../bad", content: { inline: { encoding: "", data: "x" } } }, '".." segments'],
    [
      "a missing secret key",
      { path: "/bad", content: { secretRef: { name: "file9-secret", dataKey: "nope" } } },
      'does not contain key "nope"',
    ],
  ])("fails on %s before touching the host (scenario 21)", async (_n, file, message) => {
    const w = await applied();
    const lastApplied = await w.text(lastAppliedPath);
    const changes = await w.text(changesPath);
    const osc = acceptanceOsc();
    osc["spec"]["files"].find((f: Plain) => f.path === "/example/file").content.inline.data = "new";
    osc["spec"]["files"].push(file);
    w.setOsc(osc);
    await expect(w.reconcile()).rejects.toThrow(message);
    expect(await w.text("/example/file")).toBe("file1");
    expect(await w.text(lastAppliedPath)).toBe(lastApplied);
    expect(await w.text(changesPath)).toBe(changes);
    expect(w.actions()).toEqual([]);
    const warning = w.events().find((e) => e["type"] === "Warning" && e["reason"] === "OSCApplyFailed");
    expect(warning?.["message"]).toContain(message);
  });

  test("fails on an undecodable osc.yaml with an event and keeps the state", async () => {
    const w = await applied();
    const lastApplied = await w.text(lastAppliedPath);
    w.setOsc("apiVersion: v1\nkind: Secret\n");
    await expect(w.reconcile()).rejects.toThrow("failed decoding osc.yaml");
    expect(await w.text(lastAppliedPath)).toBe(lastApplied);
    expect(w.events().some((e) => e["type"] === "Warning" && String(e["message"]).includes("osc.yaml"))).toBe(true);
    // The Node still runs the old version, and says the new one cannot be applied.
    const conditions = (w.node()["status"] as { conditions?: Record<string, string>[] } | undefined)?.conditions ?? [];
    const osc = conditions.find((c) => c["type"] === "OperatingSystemConfigApplied");
    expect(osc?.["reason"]).toBe("ApplyFailed");
    expect(osc?.["message"]).toContain("failed decoding osc.yaml");
  });

  test("fails when the secret has no checksum annotation", async () => {
    const w = await world();
    w.setOsc(acceptanceOsc());
    env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", { metadata: { annotations: { "checksum/data-script": null } } });
    await expect(w.reconcile()).rejects.toThrow("has no checksum/data-script annotation");
  });

  test("changes nothing on the host when the secret does not exist, checks again and warns once (also across restarts)", async () => {
    const w = await world();
    // Each reconcile here is a fresh reconciler, as after a restart: the backoff starts again, the event does not.
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 5000 });
    expect(w.actions()).toEqual([]);
    expect(w.events().filter((e) => e["reason"] === "OSCSecretMissing")).toHaveLength(1);
  });

  test("keeps the old agent binary when the new one is not an executable for this machine", async () => {
    const w = await applied();
    await w.host.writeFileAtomic("/opt/bin/gardener-node-agent", fakeElf(), 0o755);
    w.images.set("agent-image:v2 /gardener-node-agent", new TextEncoder().encode("#!/bin/sh\necho not elf\n"));
    w.images.set("agent-image:v3 /gardener-node-agent", fakeElf(183));
    const osc = acceptanceOsc();
    osc["spec"]["files"].push({
      path: "/opt/bin/gardener-node-agent",
      permissions: 0o755,
      content: { imageRef: { image: "agent-image:v2", filePathInImage: "/gardener-node-agent" } },
    });
    w.setOsc(osc);
    await expect(w.reconcile()).rejects.toThrow("not an executable for amd64");
    expect(await w.host.readFile("/opt/bin/gardener-node-agent")).toEqual(fakeElf());
    expect(w.events().some((e) => e["type"] === "Warning" && String(e["message"]).includes("not an executable"))).toBe(true);

    osc["spec"]["files"].at(-1).content.imageRef.image = "agent-image:v3";
    w.setOsc(osc);
    await expect(w.reconcile()).rejects.toThrow("not an executable for amd64");
    expect(await w.host.readFile("/opt/bin/gardener-node-agent")).toEqual(fakeElf());
  });

  test("installs a new agent binary for this machine and restarts itself", async () => {
    const w = await applied();
    w.images.set("agent-image:v2 /gardener-node-agent", fakeElf());
    const osc = acceptanceOsc();
    osc["spec"]["files"].push({
      path: "/opt/bin/gardener-node-agent",
      permissions: 0o755,
      content: { imageRef: { image: "agent-image:v2", filePathInImage: "/gardener-node-agent" } },
    });
    osc["spec"]["units"].push({ name: "gardener-node-agent.service", content: "#gna", filePaths: ["/opt/bin/gardener-node-agent"] });
    w.setOsc(osc);
    await expect(w.reconcile()).rejects.toBeInstanceOf(RestartRequested);
    expect(await w.host.readFile("/opt/bin/gardener-node-agent")).toEqual(fakeElf());
    expect(await w.mode("/opt/bin/gardener-node-agent")).toBe(0o755);
  });

  test("applies before the node exists, restarts when it appears, then finishes (scenario 33)", async () => {
    const w = await world({ withNode: false });
    const sum = w.setOsc(acceptanceOsc());
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 5_000 });
    expect(await w.exists(lastAppliedPath)).toBe(true);
    expect(await w.exists("/var/lib/gardener-node-agent/credentials/bootstrap-token")).toBe(true);
    expect(await w.exists("/var/lib/kubelet/kubeconfig-bootstrap")).toBe(true);
    expect(w.events()).toEqual([]);

    w.createNode();
    const deps = w.deps();
    await expect(w.reconcile()).rejects.toBeInstanceOf(RestartRequested);
    expect(deps.node.nodeName).toBeUndefined(); // each process start gets fresh deps

    w.knownNodeName = w.nodeName;
    w.systemd.clearActions();
    await w.reconcile();
    expect(await w.exists("/var/lib/gardener-node-agent/credentials/bootstrap-token")).toBe(false);
    expect(await w.exists("/var/lib/kubelet/kubeconfig-bootstrap")).toBe(false);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(sum);
    expect(w.actions()).toEqual(["DaemonReload"]);
  });

  test("reconciles through the watch: create at once, new osc.yaml after the node's delay", async () => {
    const w = await world();
    w.startController();
    const annotated = (sum: string) => (o: Record<string, any> | undefined) =>
      o?.["metadata"]?.["annotations"]?.["checksum/cloud-config-data"] === sum;

    const first = w.setOsc(acceptanceOsc());
    await env.sim.waitFor("nodes", "", w.nodeName, annotated(first), 20_000);

    env.sim.store.patch("nodes", "", w.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/reconciliation-delay": "0s" } },
    });
    const osc = acceptanceOsc();
    osc["spec"]["files"][0].content.inline.data = "file1-v2";
    const second = w.setOsc(osc);
    await env.sim.waitFor("nodes", "", w.nodeName, annotated(second), 20_000);
    expect(await w.text("/example/file")).toBe("file1-v2");
  });

  test("queues a new Secret version behind the running apply and applies it after (one apply at a time)", async () => {
    const w = await world();
    env.sim.store.patch("nodes", "", w.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/reconciliation-delay": "0s" } },
    });
    // Cues: the first version's unit1 start waits for the test; the handler's log line says the update was enqueued.
    const unitStarted = w.systemd.holdNextJob("unit1.service");
    const enqueued = Promise.withResolvers<void>();
    const log = {
      ...silentLog,
      info: (msg: string) => void (msg.startsWith("Enqueuing operating system config secret") && enqueued.resolve()),
    };
    const seen: string[] = [];
    let active = 0;
    let maxActive = 0;
    w.startController({
      log,
      wrapReconcile: (reconcile) => async (key, signal) => {
        maxActive = Math.max(maxActive, ++active);
        seen.push("start");
        try {
          return await reconcile(key, signal);
        } finally {
          active--;
          seen.push("end");
        }
      },
    });
    const annotated = (sum: string) => (o: Record<string, any> | undefined) =>
      o?.["metadata"]?.["annotations"]?.["checksum/cloud-config-data"] === sum;

    w.setOsc(acceptanceOsc());
    await unitStarted.reached; // the first apply is in its unit commands now
    const osc = acceptanceOsc();
    osc["spec"]["files"][0].content.inline.data = "file1-v2";
    const second = w.setOsc(osc);
    await enqueued.promise;
    // The new version waits in the queue: nothing of it is written while the first apply runs.
    expect(await w.text("/example/file")).toBe("file1");
    expect(seen).toEqual(["start"]);

    unitStarted.release();
    await env.sim.waitFor("nodes", "", w.nodeName, annotated(second), 20_000);
    expect(await w.text("/example/file")).toBe("file1-v2");
    expect(maxActive).toBe(1);
    expect(seen.slice(0, 3)).toEqual(["start", "end", "start"]);
  });

  /** `host` whose changes-file writes are counted, the `crashAt`-th one failing like a crash before it. */
  const crashingChanges = (host: HostFs, crashAt = 0) => {
    let writes = 0;
    const wrapped: HostFs = Object.create(host, {
      writeFileAtomic: {
        value: async (path: string, data: Uint8Array | string, mode: number) => {
          if (path === changesPath && ++writes === crashAt) throw new Error("simulated crash");
          return host.writeFileAtomic(path, data, mode);
        },
      },
    });
    return { host: wrapped, writes: () => writes };
  };

  // Crash points relative to the clean run's count: completions are recorded per group, so the count moves.
  test.each(["first", "second", "middle", "second-to-last", "last"] as const)(
    "ends in the same state after a crash at the %s changes-file write and a resume",
    async (which) => {
      const clean = await world();
      clean.setOsc(acceptanceOsc());
      const counted = crashingChanges(clean.host);
      await clean.reconcile({ host: counted.host });
      const total = counted.writes();
      const crashAt = { first: 1, second: 2, middle: Math.ceil(total / 2), "second-to-last": total - 1, last: total }[which];

      const w = await world();
      w.setOsc(acceptanceOsc());
      await expect(w.reconcile({ host: crashingChanges(w.host, crashAt).host })).rejects.toThrow("simulated crash");
      expect(w.node()["metadata"]["annotations"]?.["checksum/cloud-config-data"]).toBeUndefined();
      await w.reconcile();
      expect(await snapshot(w.root)).toEqual(await snapshot(clean.root));
      expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(clean.checksum);
    },
  );

  test("ends in the same state after a crash halfway through a group of file writes and a resume", async () => {
    const clean = await world();
    clean.setOsc(acceptanceOsc());
    await clean.reconcile();

    const w = await world();
    w.setOsc(acceptanceOsc());
    let crashed = false;
    const crashing: HostFs = Object.create(w.host, {
      writeFilesAtomic: {
        value: async (files: readonly FileWrite[]) => {
          if (crashed || files.length < 2) return w.host.writeFilesAtomic(files);
          crashed = true;
          await w.host.writeFilesAtomic(files.slice(0, files.length >> 1));
          throw new Error("simulated crash");
        },
      },
    });
    await expect(w.reconcile({ host: crashing })).rejects.toThrow("simulated crash");
    expect(crashed).toBe(true);
    await w.reconcile();
    expect(await snapshot(w.root)).toEqual(await snapshot(clean.root));
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(clean.checksum);
  });

  test("resumes a change set written by the Go agent as-is", async () => {
    const w = await applied();
    const osc = acceptanceOsc();
    osc["spec"]["files"][0].content.inline.data = "from-go";
    osc["spec"]["units"][0].content = "#unit1-new";
    const sum = w.setOsc(osc);
    // Go's format: only the one file and the unit's restart are left; the drop-in bookkeeping quirk emptied dropIns.
    await w.host.writeFileAtomic(
      changesPath,
      `containerd:\n  configFileChanged: false\n  registries: {}\nfiles:\n  changed:\n  - content:\n      inline:\n        data: from-go\n        encoding: ""\n    path: /example/file\n    permissions: 511\ninPlaceUpdates:\n  certificateAuthoritiesRotation:\n    kubelet: false\n    nodeAgent: false\n  kubelet:\n    config: false\n    cpuManagerPolicy: false\n    minorVersion: false\n  operatingSystem: false\n  serviceAccountKeyRotation: false\nmustRestartNodeAgent: false\noperatingSystemConfigChecksum: ${sum}\nunits:\n  commands:\n  - command: restart\n    name: unit1.service\n`,
      0o600,
    );
    await w.reconcile();
    expect(await w.text("/example/file")).toBe("from-go");
    expect(await w.text("/etc/systemd/system/unit1.service")).toBe("#unit1");
    expect(w.actions()).toEqual(["DaemonReload", "Restart unit1.service"]);
    expect(await w.text(changesPath)).toBe(emptyChanges(sum));
    expect(await w.text(lastAppliedPath)).toContain("#unit1-new");
  });

  test("fails when the secret has no osc.yaml key", async () => {
    const w = await world();
    w.setOsc(acceptanceOsc());
    env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", { data: { "osc.yaml": null, cloud_config: "eA==" } });
    await expect(w.reconcile()).rejects.toThrow(`no osc.yaml key found in secret kube-system/${w.secretName}`);
    expect(w.actions()).toEqual([]);
  });
});

describe("OSC controller over D-Bus", () => {
  let double: SystemdDouble;
  let systemd: Systemd;
  beforeAll(async () => {
    double = await startSystemdDouble();
    systemd = await createDbusSystemd({ address: double.address, log: silentLog });
  });
  afterAll(async () => {
    systemd.close();
    await double.stop();
  });

  const dbusActions = () => double.actions.map((a) => [a.action, ...a.units].join(" "));

  test("applies the first OSC and resumes a failed restart through the real systemd client (scenarios 1, 2)", async () => {
    const w = await world();
    w.setOsc(acceptanceOsc());
    double.clearActions();
    await w.reconcile({ systemd });
    const a = dbusActions();
    const reload = a.indexOf("DaemonReload");
    expect(a.filter((x) => x === "DaemonReload")).toHaveLength(1);
    const enabled = units(1, 3, 4, 5, 6, 7, 8, 9, "containerd.service", "existing-unit.service");
    // One EnableUnitFiles call names every enabled unit, before the reload.
    const enables = double.actions.filter((x) => x.action === "Enable");
    expect(enables).toHaveLength(1);
    expect(sorted([...(enables[0]?.units ?? [])])).toEqual(sorted(enabled));
    expect(sorted(a.slice(0, reload))).toEqual(sorted([`Enable ${enables[0]?.units.join(" ")}`, "Disable unit2.service"]));
    expect(sorted(a.slice(reload + 1))).toEqual(sorted([...enabled.map((u) => `Restart ${u}`), "Stop unit2.service"]));

    const osc = acceptanceOsc();
    Object.assign(osc["spec"]["units"][1], { enable: true, command: "start" });
    const sum = w.setOsc(osc);
    double.clearActions();
    double.failNextJob("unit2.service", { operation: "restart" });
    await expect(w.reconcile({ systemd })).rejects.toThrow("unit2.service");
    expect(dbusActions()).toEqual(["Enable unit2.service", "DaemonReload", "Restart unit2.service"]);
    double.clearActions();
    await w.reconcile({ systemd });
    expect(dbusActions()).toEqual(["DaemonReload", "Restart unit2.service"]);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).toBe(sum);
  });
});

/** Every file and directory under a root with its mode and content (not the apply report, which has times). */
async function snapshot(root: string, dir = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(root, dir))).sort()) {
    const rel = `${dir}/${name}`;
    if (rel === "/var/lib/gardener-node-agent/apply-status.json") continue;
    const st = await lstat(join(root, rel));
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isDirectory()) {
      out[rel] = `dir ${mode}`;
      Object.assign(out, await snapshot(root, rel));
    } else {
      out[rel] = `${mode} ${await readFile(join(root, rel), "utf8")}`;
    }
  }
  return out;
}
