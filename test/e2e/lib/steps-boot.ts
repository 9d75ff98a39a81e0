import { expect } from "./checks.ts";
import { parseProps, type Guest } from "./guest.ts";
import type { Cluster } from "./cluster.ts";
import type { RunContext } from "./context.ts";
import { done, notYet, pollUntil } from "./poll.ts";
import type { Step } from "./report.ts";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export interface StepDeps {
  readonly ctx: RunContext;
  readonly guest: Guest;
  readonly cluster: Cluster;
  readonly qemuAlive: () => boolean;
  /** Multiplies every deadline (GNA_E2E_STEP_TIMEOUT_SCALE), for slower machines. */
  readonly scale: number;
}

/** Step 0: the VM boots, cloud-init runs our user data and the 9p exec channel answers. */
export function bootStep(d: StepDeps): Step {
  return {
    n: 0,
    title:
      d.ctx.provisionMissing === undefined
        ? "VM boots, cloud-init mounts the 9p share and the guest exec channel answers"
        : "VM boots, exec channel answers, guest reaches registry and API server (TLS, SAN 10.0.2.100) through restrict=on + guestfwd",
    needs: [],
    timeoutMs: 420_000 * d.scale,
    async run(signal) {
      const t0 = performance.now();
      await pollUntil(
        async () => {
          if (!d.qemuAlive()) throw new Error("qemu exited (see qemu.log / serial.log)");
          return d.guest.isReady() ? done(true) : notYet("share/guest-ready not written yet (boot or cloud-init bootcmd pending)");
        },
        { what: "guest exec channel", timeoutMs: 400_000 * d.scale, intervalMs: 1000, signal },
      );
      const hostname = (await d.guest.run("hostname", signal)).trim();
      expect(hostname === d.ctx.hostname, `guest hostname is "${hostname}", want "${d.ctx.hostname}" (meta-data local-hostname)`);
      const note = `exec channel up ${Math.round((performance.now() - t0) / 1000)} s after qemu start`;
      if (d.ctx.provisionMissing === undefined) return note;
      // Stand-in user data: prove the restricted network path instead (registry + API server via guestfwd).
      return `${note}; ${await pipelineProbe(d, signal)}`;
    },
  };
}

async function pipelineProbe(d: StepDeps, signal: AbortSignal): Promise<string> {
  const results = join(d.ctx.work, "share", "results");
  await pollUntil(
    async () => ((await Bun.file(join(results, "probe.done")).exists()) ? done(true) : notYet("probe script has not finished")),
    { what: "pipeline probe", timeoutMs: 280_000 * d.scale, intervalMs: 1000, signal },
  );
  const read = async (name: string): Promise<string> => (await readFile(join(results, name), "utf8")).trim();
  expect((await read("registry.code")) === "200", `registry /v2/ answered ${await read("registry.code")}: ${await read("registry.err")}`);
  expect(
    (await read("apiserver.code")) === "200",
    `API server /version answered ${await read("apiserver.code")}: ${await read("apiserver.err")}`,
  );
  return `probe user data (${d.ctx.provisionMissing ?? ""}) reached registry and API server`;
}

/** Step 1: user data → init.sh pulls by digest → bootstrap installs/starts the agent and disables the init unit. */
export function bootstrapStep(d: StepDeps): Step {
  return {
    n: 1,
    title:
      "cloud-init runs the provision user data, init.sh pulls the artifact by digest, bootstrap starts gardener-node-agent.service and disables gardener-node-init.service",
    needs: [0],
    timeoutMs: 600_000 * d.scale,
    async run(signal) {
      if (d.ctx.provisionMissing !== undefined) throw new Error(`provision user data not available: ${d.ctx.provisionMissing}`);
      const state = await pollUntil(
        async (s) => {
          const out = await d.guest.run(
            [
              'echo "agent_enabled=$(systemctl is-enabled gardener-node-agent.service 2>&1)"',
              'echo "agent_active=$(systemctl is-active gardener-node-agent.service 2>&1)"',
              'echo "init_enabled=$(systemctl is-enabled gardener-node-init.service 2>&1)"',
              'echo "init_result=$(systemctl show -P Result gardener-node-init.service 2>&1)"',
              'echo "binary_mode=$(stat -c %a /opt/bin/gardener-node-agent 2>&1)"',
              'echo "marker=$(test -e /var/lib/osc/provision-osc-applied && echo yes || echo no)"',
            ].join("\n"),
            s,
          );
          const props = parseProps(out);
          const ok =
            props.get("agent_enabled") === "enabled" &&
            ["active", "activating"].includes(props.get("agent_active") ?? "") &&
            props.get("init_enabled") === "disabled" &&
            props.get("binary_mode") === "755" &&
            props.get("marker") === "yes";
          return ok ? done(props) : notYet(out.trim().replaceAll("\n", ", "));
        },
        { what: "agent installed", timeoutMs: 590_000 * d.scale, intervalMs: 3000, signal },
      );
      const registryLog = await readFile(join(d.ctx.work, "registry.log"), "utf8");
      if (d.ctx.digest !== "") {
        expect(registryLog.includes(`/manifests/${d.ctx.digest}`), `registry log shows no manifest GET by digest ${d.ctx.digest}`);
      }
      return `init unit result ${state.get("init_result")}, agent ${state.get("agent_active")}`;
    },
  };
}

/** Step 2: the data disk is formatted ext4 with label KUBEDEV and mounted on /var/lib/kubelet. */
export function dataDiskStep(d: StepDeps): Step {
  return {
    n: 2,
    title: "data disk /dev/vdb formatted ext4 (label KUBEDEV, quota) and mounted on /var/lib/kubelet with prjquota",
    needs: [1],
    timeoutMs: 60_000 * d.scale,
    async run(signal) {
      const out = await d.guest.run(
        [
          'echo "label=$(blkid -L KUBEDEV)"',
          'echo "fstype=$(blkid -s TYPE -o value /dev/vdb)"',
          'echo "mount=$(findmnt -n -o SOURCE,FSTYPE,OPTIONS --mountpoint /var/lib/kubelet)"',
          'echo "features=$(dumpe2fs -h /dev/vdb 2>/dev/null | grep -i "features:" | head -n1)"',
        ].join("\n"),
        signal,
      );
      const props = parseProps(out);
      expect(props.get("label") === "/dev/vdb", `blkid -L KUBEDEV = "${props.get("label")}"`);
      expect(props.get("fstype") === "ext4", `/dev/vdb type "${props.get("fstype")}"`);
      const mount = props.get("mount") ?? "";
      expect(
        /^\/dev\/vdb ext4 /.test(mount) && mount.includes("prjquota") && mount.includes("errors=remount-ro"),
        `mount of /var/lib/kubelet: "${mount}"`,
      );
      expect((props.get("features") ?? "").includes("quota"), `ext4 features lack quota: "${props.get("features")}"`);
      return mount;
    },
  };
}
