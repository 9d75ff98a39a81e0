import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap, createProcessRunner } from "../../src/bootstrap/index.ts";
import type { CommandRunner, ConnectivityProbe } from "../../src/bootstrap/index.ts";
import { createHostFs } from "../../src/host/index.ts";
import type { HostFs } from "../../src/host/types.ts";
import type { Logger } from "../../src/log/types.ts";
import { SystemdJobError } from "../../src/systemd/types.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { startApiServer } from "../doubles/apiserver/index.ts";
import { FakeSystemd, startSystemdDouble } from "../doubles/systemd/index.ts";
import type { SystemdAction } from "../doubles/systemd/index.ts";
import { eventually } from "../harness/eventually.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

class Buffer {
  text = "";
  write(t: string) {
    this.text += t;
  }
}

const unit = `[Unit]
Description=Gardener Node Agent
After=network-online.target

[Service]
LimitMEMLOCK=infinity
ExecStart=/opt/bin/gardener-node-agent --config-dir=/var/lib/gardener-node-agent
Restart=always
RestartSec=5
StandardOutput=journal+console
StandardError=journal

[Install]
WantedBy=multi-user.target`;

const expectedActions: SystemdAction[] = [
  { action: "DaemonReload", units: [] },
  { action: "Enable", units: ["gardener-node-agent.service"] },
  { action: "Start", units: ["gardener-node-agent.service"] },
  { action: "Disable", units: ["gardener-node-init.service"] },
];

/** Every file and dir under a root with its mode and content, to show a re-run changes nothing. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const mode = ((await stat(p)).mode & 0o7777).toString(8);
      if (e.isDirectory()) {
        out[p.slice(root.length)] = `dir ${mode}`;
        await walk(p);
      } else out[p.slice(root.length)] = `file ${mode} ${await readFile(p, "utf8")}`;
    }
  };
  await walk(root);
  return out;
}

const noRunner: CommandRunner = {
  run: async (argv) => {
    throw new Error(`unexpected command ${argv.join(" ")}`);
  },
};
const okProbe: ConnectivityProbe = async () => {};

describe("bootstrap", () => {
  let root: string;
  let host: HostFs;
  let systemd: FakeSystemd;
  let stdout: Buffer;
  let ac: AbortController;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-bootstrap-"));
    host = createHostFs(root);
    systemd = new FakeSystemd();
    stdout = new Buffer();
    ac = new AbortController();
  });
  afterEach(async () => {
    ac.abort();
    await rm(root, { recursive: true, force: true });
  });

  test("installs the exact unit file with mode 0644 and hands over from the init unit", async () => {
    await bootstrap({ host, systemd, log: silent, runner: noRunner, probe: okProbe, stdout }, {}, ac.signal);
    expect(await readFile(join(root, "etc/systemd/system/gardener-node-agent.service"), "utf8")).toBe(unit);
    expect((await stat(join(root, "etc/systemd/system/gardener-node-agent.service"))).mode & 0o777).toBe(0o644);
    expect((await stat(join(root, "var/lib/gardener-node-agent/tmp"))).isDirectory()).toBe(true);
    expect(systemd.actions).toEqual(expectedActions);
    expect(stdout.text).toBe("");
  });

  test("changes nothing when run again on a bootstrapped node", async () => {
    const deps = { host, systemd, log: silent, runner: noRunner, probe: okProbe, stdout };
    await bootstrap(deps, { bootstrap: {} }, ac.signal);
    const first = await snapshot(root);
    await bootstrap(deps, { bootstrap: {} }, ac.signal);
    expect(await snapshot(root)).toEqual(first);
    expect(systemd.actions).toEqual([...expectedActions, ...expectedActions]);
  });

  test("prepares the kubelet data device before installing the unit when a size is configured", async () => {
    const calls: string[] = [];
    const runner: CommandRunner = {
      run: async (argv) => {
        calls.push(argv[0] ?? "");
        return { code: 0, stdout: argv[0] === "blkid" ? "/dev/sdb\n" : "", stderr: "" };
      },
    };
    await bootstrap(
      { host, systemd, log: silent, runner, probe: okProbe, stdout },
      { bootstrap: { kubeletDataVolumeSize: 1234 } },
      ac.signal,
    );
    expect(calls).toEqual(["blkid"]);
    expect((await stat(join(root, "var/lib/kubelet"))).isDirectory()).toBe(true);
    expect(systemd.actions).toEqual(expectedActions);
  });

  test("fails before touching systemd when no data device matches", async () => {
    const runner: CommandRunner = {
      run: async (argv) =>
        argv[0] === "blkid"
          ? { code: 2, stdout: "", stderr: "" }
          : { code: 0, stdout: 'NAME="vdb" PARTTYPE="" FSTYPE="" SIZE="999" PATH="/dev/vdb" TYPE="disk"\n', stderr: "" },
    };
    const err = await bootstrap(
      { host, systemd, log: silent, runner, probe: okProbe, stdout },
      { bootstrap: { kubeletDataVolumeSize: 1234 } },
      ac.signal,
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe("failed formatting kubelet data volume: No kubelet data device found");
    expect(await host.stat("/etc/systemd/system/gardener-node-agent.service")).toBeUndefined();
    expect(systemd.actions).toEqual([]);
  });

  test("fails naming the unit when the agent's start job fails", async () => {
    systemd.failNextJob("gardener-node-agent.service");
    const err = await bootstrap({ host, systemd, log: silent, runner: noRunner, probe: okProbe, stdout }, {}, ac.signal).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toBe(
      "failed starting unit gardener-node-agent.service: start failed for gardener-node-agent.service, due failed",
    );
    expect((err as Error).cause).toBeInstanceOf(SystemdJobError);
    expect(systemd.actions.map((a) => a.action)).toEqual(["DaemonReload", "Enable", "Start"]);
  });

  test("carries on after 10 s when the start job does not finish", async () => {
    const clock = new FakeClock();
    const slow = new FakeSystemd({ clock });
    slow.stallJobs("gardener-node-agent.service", "start");
    const run = bootstrap({ host, systemd: slow, log: silent, runner: noRunner, probe: okProbe, stdout }, {}, ac.signal);
    await eventually("the start job to wait on the clock", () => clock.pending(), { until: (n) => n > 0, timeoutMs: 4_000, intervalMs: 0 });
    clock.step(10_000);
    await run;
    expect(slow.actions).toEqual(expectedActions);
  });

  test("prints the two warning lines and still succeeds when the API server is unreachable", async () => {
    const probe: ConnectivityProbe = async () => {
      throw new Error("connection refused");
    };
    await bootstrap({ host, systemd, log: silent, runner: noRunner, probe, stdout }, {}, ac.signal);
    expect(stdout.text).toBe(
      "WARNING: API server connectivity test failed: connection refused\n" +
        "Node may fail to join the cluster - check network configuration and API server endpoint\n",
    );
    expect(systemd.actions).toEqual(expectedActions);
  });
});

describe("kubelet data device on a real ext4 image", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "gna-mkfs-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("formats the matching disk as ext4 labelled KUBEDEV with quota features", async () => {
    const { prepareKubeletDataDevice } = await import("../../src/bootstrap/index.ts");
    const image = join(dir, "sdb.img");
    expect(Bun.spawnSync(["truncate", "-s", "64M", image]).exitCode).toBe(0);
    const real = createProcessRunner();
    const mountSteps: string[] = [];
    // blkid/lsblk answer from a recorded machine whose 64 MiB disk `sdb` is this image; mkfs.ext4 runs for
    // real with /dev/sdb mapped onto the image; mount/cp/umount are only recorded (no loop devices in tests).
    const runner: CommandRunner = {
      run: async (argv) => {
        switch (argv[0]) {
          case "blkid":
            return { code: 2, stdout: "", stderr: "" };
          case "lsblk":
            return {
              code: 0,
              stdout: argv.includes("NAME,MOUNTPOINT,TYPE")
                ? 'NAME="sda1" MOUNTPOINT="/" TYPE="part"\nNAME="sdb" MOUNTPOINT="" TYPE="disk"\n'
                : 'NAME="sda1" PARTTYPE="0fc63daf-8483-4772-8e79-3d69d8477de4" FSTYPE="ext4" SIZE="21367462400" PATH="/dev/sda1" TYPE="part"\n' +
                  'NAME="sdb" PARTTYPE="" FSTYPE="" SIZE="67108864" PATH="/dev/sdb" TYPE="disk"\n',
              stderr: "",
            };
          case "mkfs.ext4":
            return real.run(argv.map((a) => (a === "/dev/sdb" ? image : a)));
          default:
            mountSteps.push(argv[0] ?? "");
            return { code: 0, stdout: "", stderr: "" };
        }
      },
    };
    await mkdir(join(dir, "root"));
    const host = createHostFs(join(dir, "root"));
    expect(await prepareKubeletDataDevice({ host, runner, log: silent }, 67108864)).toEqual({ action: "formatted", device: "sdb" });
    expect(mountSteps).toEqual(["mount", "cp", "umount", "mount"]);

    const blkid = Bun.spawnSync(["blkid", "-o", "export", image]).stdout.toString();
    expect(blkid).toContain("LABEL=KUBEDEV");
    expect(blkid).toContain("TYPE=ext4");
    const header = Bun.spawnSync(["dumpe2fs", "-h", image]).stdout.toString();
    const features = header.split("\n").find((l) => l.startsWith("Filesystem features:")) ?? "";
    expect(features.split(/\s+/)).toEqual(expect.arrayContaining(["quota", "project"]));
    expect(header).toMatch(/Project quota inode:\s+\d+/);
  });
});

describe("gardener-node-agent bootstrap (CLI over D-Bus)", () => {
  const repo = join(import.meta.dir, "../..");
  let root: string;
  let bus: Awaited<ReturnType<typeof startSystemdDouble>>;
  beforeAll(async () => {
    bus = await startSystemdDouble();
  });
  afterAll(async () => {
    await bus.stop();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-bootstrap-cli-"));
    bus.clearActions();
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const config = (server: string) =>
    [
      "apiVersion: nodeagent.config.gardener.cloud/v1alpha1",
      "kind: NodeAgentConfiguration",
      "apiServer:",
      `  server: ${server}`,
      "  caFile: /var/lib/gardener-node-agent/cluster-ca.crt",
      "bootstrap: {}",
      "controllers:",
      "  operatingSystemConfig:",
      "    kubernetesVersion: 1.33.0",
      "    secretName: gardener-node-agent-pool",
      "",
    ].join("\n");

  const run = async () => {
    const p = Bun.spawn(
      [process.execPath, join(repo, "src/cli/main.ts"), "bootstrap", `--root=${root}`, "--config-dir=/var/lib/gardener-node-agent"],
      {
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", DBUS_SYSTEM_BUS_ADDRESS: bus.address },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, stdout, stderr };
  };

  test("installs and starts the agent unit through systemd's D-Bus API and warns about an unreachable API server", async () => {
    const host = createHostFs(root);
    await host.writeFileAtomic("/var/lib/gardener-node-agent/config-v9.9.9.yaml", config("https://127.0.0.1:1"), 0o600);
    await host.writeFileAtomic("/var/lib/gardener-node-agent/cluster-ca.crt", "", 0o640);
    const out = await run();
    expect(out.code).toBe(0);
    expect(await readFile(join(root, "etc/systemd/system/gardener-node-agent.service"), "utf8")).toBe(unit);
    expect(bus.actions.filter((a) => a.action !== "UnitProperties")).toEqual(expectedActions);
    expect(out.stdout).toContain("\nWARNING: API server connectivity test failed: ");
    expect(out.stdout).toContain("\nNode may fail to join the cluster - check network configuration and API server endpoint\n");
  });

  test("prints no warning when the API server answers with the configured CA", async () => {
    const sim = await startApiServer();
    try {
      const host = createHostFs(root);
      await host.writeFileAtomic("/var/lib/gardener-node-agent/config-v9.9.9.yaml", config(sim.url), 0o600);
      await host.writeFileAtomic("/var/lib/gardener-node-agent/cluster-ca.crt", sim.caPem, 0o640);
      await host.writeFileAtomic(
        "/var/lib/gardener-node-agent/credentials/bootstrap-token",
        `${sim.addBootstrapToken("abcdef", "0123456789abcdef")}\n`,
        0o640,
      );
      const out = await run();
      expect(out.code).toBe(0);
      expect(out.stdout).toContain("API server connectivity test succeeded");
      expect(out.stdout).not.toContain("WARNING");
      expect(sim.requests.some((r) => r.path === "/version" && r.user === "system:bootstrap:abcdef" && r.code === 200)).toBe(true);
    } finally {
      await sim.stop();
    }
  });

  test("fails with exit code 1 and touches nothing when the config file is missing", async () => {
    await createHostFs(root).ensureDir("/var/lib/gardener-node-agent");
    const out = await run();
    expect(out.code).toBe(1);
    expect(out.stdout + out.stderr).toContain("error reading config file");
    expect(bus.actions).toEqual([]);
    expect(await createHostFs(root).stat("/etc/systemd/system/gardener-node-agent.service")).toBeUndefined();
  });
});
