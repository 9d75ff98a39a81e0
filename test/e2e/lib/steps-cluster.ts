import * as v from "valibot";
import { checkOnDisk, expect, nodePath, unitIds, waitNodeChecksum } from "./checks.ts";
import { oscSecret, reconcileOsc, type OscVersion, type ScenarioIdentity } from "./osc.ts";
import { done, notYet, pollUntil } from "./poll.ts";
import type { Step } from "./report.ts";
import type { StepDeps } from "./steps-boot.ts";

const CsrList = v.object({
  items: v.array(
    v.looseObject({
      metadata: v.looseObject({ name: v.string() }),
      spec: v.looseObject({
        request: v.string(),
        signerName: v.string(),
        usages: v.optional(v.array(v.string())),
        expirationSeconds: v.optional(v.number()),
      }),
      status: v.optional(v.looseObject({ certificate: v.optional(v.string()) })),
    }),
  ),
});

/** Subject of a PEM CSR, via openssl (RFC 2253 order, e.g. `CN=…,O=…`). */
function csrSubject(requestB64: string): string {
  const res = Bun.spawnSync(["openssl", "req", "-noout", "-subject", "-nameopt", "RFC2253"], {
    stdin: Buffer.from(requestB64, "base64"),
    stderr: "pipe",
  });
  if (res.exitCode !== 0) throw new Error(`openssl cannot read the CSR: ${res.stderr.toString()}`);
  return res.stdout
    .toString()
    .trim()
    .replace(/^subject=/, "");
}

/** Step 3: the agent requests its client certificate through a CSR; the test approves and signs it. */
export function csrStep(d: StepDeps): Step {
  return {
    n: 3,
    title: "agent obtains its client certificate through the CSR flow (test approves + signs), kubeconfig 0600",
    needs: [1],
    timeoutMs: 240_000 * d.scale,
    async run(signal) {
      const cluster = d.cluster;
      const csr = await pollUntil(
        async (s) => {
          const list = v.parse(CsrList, await cluster.kube.request("GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests", s));
          const mine = list.items.find((c) => c.metadata.name.startsWith("node-agent-csr-"));
          return mine ? done(mine) : notYet(`${list.items.length} CSRs, none named node-agent-csr-*`);
        },
        { what: "agent CSR", timeoutMs: 180_000 * d.scale, intervalMs: 2000, signal },
      );
      expect(csr.spec.signerName === "kubernetes.io/kube-apiserver-client", `signerName ${csr.spec.signerName}`);
      expect(csr.spec.expirationSeconds === 2592000, `expirationSeconds ${csr.spec.expirationSeconds}`);
      expect(
        JSON.stringify(csr.spec.usages) === JSON.stringify(["digital signature", "key encipherment", "client auth"]),
        `usages ${JSON.stringify(csr.spec.usages)}`,
      );
      const subject = csrSubject(csr.spec.request);
      const wantCn = `CN=gardener.cloud:node-agent:machine:${d.ctx.machineName}`;
      expect(subject.includes(wantCn) && subject.includes("O=gardener.cloud:node-agents"), `CSR subject "${subject}"`);
      await cluster.approveAndSign(csr.metadata.name, signal);
      const mode = await pollUntil(
        async (s) => {
          const out = (
            await d.guest.exec(
              "stat -c %a /var/lib/gardener-node-agent/credentials/kubeconfig && grep -c client-certificate-data /var/lib/gardener-node-agent/credentials/kubeconfig",
              s,
            )
          ).out.trim();
          return /^\d+\n1$/.test(out) ? done(out.split("\n")[0]) : notYet(`kubeconfig: ${out}`);
        },
        { what: "credentials/kubeconfig", timeoutMs: 60_000 * d.scale, intervalMs: 2000, signal },
      );
      expect(mode === "600", `credentials/kubeconfig mode ${mode}`);
      return `${csr.metadata.name} approved`;
    },
  };
}

export interface OscSteps {
  readonly identity: ScenarioIdentity;
  readonly push: (osc: OscVersion, signal: AbortSignal) => Promise<void>;
}

export function oscPusher(d: StepDeps, identity: ScenarioIdentity): OscSteps {
  return {
    identity,
    push: async (osc, signal) => {
      const cluster = d.cluster;
      const secret = oscSecret(identity, osc);
      await cluster.kube.apply("/api/v1/namespaces/kube-system/secrets", secret, signal);
    },
  };
}

/** Step 4: the initial OSC is applied: files with modes, units active, Node annotation and labels. */
export function applyStep(d: StepDeps, o: OscSteps): Step {
  return {
    n: 4,
    title: "OSC applied: files with modes, units active, Node annotation checksum/cloud-config-data and labels set",
    needs: [3],
    timeoutMs: 360_000 * d.scale,
    async run(signal) {
      const cluster = d.cluster;
      const osc = reconcileOsc(o.identity, 1);
      await waitNodeChecksum(d, cluster, osc.checksum, 340_000 * d.scale, signal);
      const node = await cluster.kube.get(nodePath(d), signal);
      const labels = node.metadata.labels ?? {};
      expect(
        labels["worker.gardener.cloud/kubernetes-version"] === d.ctx.kubernetesVersion,
        `label kubernetes-version=${labels["worker.gardener.cloud/kubernetes-version"]}`,
      );
      expect(labels["node-role.kubernetes.io/worker"] === "", "label node-role.kubernetes.io/worker missing");
      await checkOnDisk(d, osc, signal);
      const env = await d.guest.run("systemctl show -P Environment gna-e2e-oneshot.service; cat /run/gna-e2e/kubelet.seen", signal);
      expect(env.includes("GNA_E2E_DROPIN=1"), `drop-in not in effect: ${env.trim()}`);
      expect(env.includes("generation=1"), `stand-in kubelet did not start with generation 1: ${env.trim()}`);
      return `${osc.files.length} files, ${osc.units.length} units, checksum ${osc.checksum.slice(0, 12)}…`;
    },
  };
}

/** Step 5: changing one unit's file restarts that unit only (systemd's InvocationID / ActiveEnterTimestamp). */
export function changeStep(d: StepDeps, o: OscSteps): Step {
  return {
    n: 5,
    title: "OSC change of one unit's file restarts that unit only (InvocationID/ActiveEnterTimestamp)",
    needs: [4],
    timeoutMs: 240_000 * d.scale,
    async run(signal) {
      const cluster = d.cluster;
      const watched = ["gna-e2e-kubelet.service", "gna-e2e-oneshot.service", "gardener-node-agent.service"];
      const before = await unitIds(d, watched, signal);
      const osc = reconcileOsc(o.identity, 2);
      await o.push(osc, signal);
      await waitNodeChecksum(d, cluster, osc.checksum, 220_000 * d.scale, signal);
      const after = await unitIds(d, watched, signal);
      expect(before.get("gna-e2e-kubelet.service") !== after.get("gna-e2e-kubelet.service"), "gna-e2e-kubelet.service was not restarted");
      expect(before.get("gna-e2e-oneshot.service") === after.get("gna-e2e-oneshot.service"), "gna-e2e-oneshot.service was restarted too");
      expect(
        before.get("gardener-node-agent.service") === after.get("gardener-node-agent.service"),
        "gardener-node-agent.service was restarted too",
      );
      const seen = await d.guest.run("cat /run/gna-e2e/kubelet.seen", signal);
      expect(seen.includes("generation=2"), `stand-in kubelet saw ${seen.trim()}`);
      await checkOnDisk(d, osc, signal);
      return "only gna-e2e-kubelet.service got a new InvocationID";
    },
  };
}
