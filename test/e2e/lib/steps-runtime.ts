import * as v from "valibot";
import { checkOnDisk, expect, nodePath, unitIds, waitNodeChecksum } from "./checks.ts";
import { reconcileOsc } from "./osc.ts";
import { done, notYet, pollUntil } from "./poll.ts";
import type { Step } from "./report.ts";
import type { StepDeps } from "./steps-boot.ts";
import type { OscSteps } from "./steps-cluster.ts";

const LeaseSpec = v.looseObject({
  spec: v.looseObject({
    holderIdentity: v.optional(v.string()),
    renewTime: v.optional(v.string()),
    leaseDurationSeconds: v.optional(v.number()),
  }),
});

/** Step 6: restart annotation handled and removed; token Secret synced 0640; Lease renewed. */
export function nodeTokenLeaseStep(d: StepDeps): Step {
  return {
    n: 6,
    title: "restart annotation restarts the unit and is removed; token Secret synced with 0640; Lease renewed",
    needs: [4],
    timeoutMs: 240_000 * d.scale,
    async run(signal) {
      const cluster = d.cluster;
      const problems: string[] = [];
      const attempt = async (what: string, fn: () => Promise<void>): Promise<void> => {
        try {
          await fn();
        } catch (err) {
          problems.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
        }
      };
      await attempt("restart annotation", async () => {
        const before = await unitIds(d, ["gna-e2e-oneshot.service"], signal);
        await cluster.kube.mergePatch(
          nodePath(d),
          { metadata: { annotations: { "worker.gardener.cloud/restart-systemd-services": "gna-e2e-oneshot" } } },
          signal,
        );
        await pollUntil(
          async (s) => {
            const node = await cluster.kube.get(nodePath(d), s);
            const ann = node.metadata.annotations?.["worker.gardener.cloud/restart-systemd-services"];
            if (ann !== undefined) return notYet(`annotation still "${ann}"`);
            const after = await unitIds(d, ["gna-e2e-oneshot.service"], s);
            return after.get("gna-e2e-oneshot.service") !== before.get("gna-e2e-oneshot.service")
              ? done(true)
              : notYet("annotation removed but gna-e2e-oneshot.service not restarted");
          },
          { what: "restart annotation", timeoutMs: 90_000 * d.scale, intervalMs: 2000, signal },
        );
      });
      await attempt("token", async () => {
        const out = await pollUntil(
          async (s) => {
            const r = await d.guest.exec(`stat -c %a ${d.ctx.tokenPath} && cat ${d.ctx.tokenPath}`, s);
            return r.rc === 0 ? done(r.out) : notYet(r.out.trim());
          },
          { what: "token file", timeoutMs: 60_000 * d.scale, intervalMs: 2000, signal },
        );
        const [mode, ...rest] = out.split("\n");
        expect(mode === "640", `${d.ctx.tokenPath} mode ${mode}`);
        expect(rest.join("\n").trim() === d.ctx.tokenValue, `${d.ctx.tokenPath} content differs`);
      });
      await attempt("lease", async () => {
        const path = `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gardener-node-agent-${d.ctx.nodeName}`;
        const first = await pollUntil(
          async (s) => {
            const lease = await cluster.kube.find(path, s);
            return lease ? done(v.parse(LeaseSpec, lease).spec) : notYet("Lease absent");
          },
          { what: "Lease", timeoutMs: 60_000 * d.scale, intervalMs: 2000, signal },
        );
        expect(first.holderIdentity === `gardener-node-agent-${d.ctx.nodeName}`, `holderIdentity ${first.holderIdentity}`);
        expect(first.leaseDurationSeconds === 40, `leaseDurationSeconds ${first.leaseDurationSeconds}`);
        await pollUntil(
          async (s) => {
            const spec = v.parse(LeaseSpec, await cluster.kube.get(path, s)).spec;
            return spec.renewTime !== first.renewTime ? done(true) : notYet(`renewTime still ${first.renewTime}`);
          },
          { what: "Lease renewal", timeoutMs: 45_000 * d.scale, intervalMs: 2000, signal },
        );
      });
      if (problems.length > 0) throw new Error(problems.join("; "));
      return "annotation removed after restart, token 0640, renewTime advanced";
    },
  };
}

/** Step 7: SIGKILL of the agent in the middle of an apply; systemd restarts it and the apply converges. */
export function killStep(d: StepDeps, o: OscSteps): Step {
  return {
    n: 7,
    title: "systemctl kill -s KILL gardener-node-agent mid-apply → systemd restarts it and it converges",
    needs: [4],
    timeoutMs: 300_000 * d.scale,
    async run(signal) {
      const cluster = d.cluster;
      const before = await d.guest.unitProps("gardener-node-agent.service", ["InvocationID", "NRestarts"], signal);
      const osc = reconcileOsc(o.identity, 3);
      await o.push(osc, signal);
      // Kill as soon as the agent has persisted the change set of the new checksum (the apply is under way).
      const killed = await d.guest.exec(
        `for i in $(seq 600); do grep -q ${osc.checksum} /var/lib/gardener-node-agent/last-computed-osc-changes.yaml 2>/dev/null && break; sleep 0.2; done
grep -q ${osc.checksum} /var/lib/gardener-node-agent/last-computed-osc-changes.yaml || { echo "change set never written"; exit 3; }
systemctl kill -s KILL gardener-node-agent.service && echo killed`,
        signal,
        150_000 * d.scale,
      );
      expect(killed.rc === 0, `kill: ${killed.out.trim()}`);
      const node = await cluster.kube.get(nodePath(d), signal);
      const midApply = node.metadata.annotations?.["checksum/cloud-config-data"] !== osc.checksum;
      await waitNodeChecksum(d, cluster, osc.checksum, 200_000 * d.scale, signal);
      const after = await d.guest.unitProps("gardener-node-agent.service", ["InvocationID", "NRestarts", "ActiveState"], signal);
      expect(after.get("InvocationID") !== before.get("InvocationID"), "agent InvocationID unchanged: systemd did not restart it");
      expect(after.get("ActiveState") === "active", `agent is ${after.get("ActiveState")}`);
      await checkOnDisk(d, osc, signal);
      const slow = await d.guest.exec("cat /run/gna-e2e-slow.done", signal);
      expect(slow.rc === 0, "gna-e2e-slow.service never completed");
      expect(midApply, "the kill landed after the apply had finished (Node already had the new checksum)");
      return `killed mid-apply, NRestarts ${before.get("NRestarts")}→${after.get("NRestarts")}`;
    },
  };
}
