import * as v from 'valibot';
import type { Cluster } from './cluster.ts';
import type { Guest } from './guest.ts';
import { oscSecret, reconcileOsc, type OscVersion, type ScenarioIdentity } from './osc.ts';
import { done, notYet, pollUntil } from './poll.ts';
import type { Step } from './report.ts';
import type { StepDeps } from './steps-boot.ts';

const expect = (cond: boolean, what: string): void => {
  if (!cond) throw new Error(what);
};

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

function needCluster(d: StepDeps): Cluster {
  if (d.cluster === undefined) throw new Error('API server simulator not available (stand-in in use)');
  return d.cluster;
}

/** Subject of a PEM CSR, via openssl (RFC 2253 order, e.g. `CN=…,O=…`). */
function csrSubject(requestB64: string): string {
  const res = Bun.spawnSync(['openssl', 'req', '-noout', '-subject', '-nameopt', 'RFC2253'], {
    stdin: Buffer.from(requestB64, 'base64'),
    stderr: 'pipe',
  });
  if (res.exitCode !== 0) throw new Error(`openssl cannot read the CSR: ${res.stderr.toString()}`);
  return res.stdout.toString().trim().replace(/^subject=/, '');
}

/** Step 3: the agent requests its client certificate through a CSR; the test approves and signs it. */
export function csrStep(d: StepDeps): Step {
  return {
    n: 3,
    title: 'agent obtains its client certificate through the CSR flow (test approves + signs), kubeconfig 0600',
    needs: [1],
    timeoutMs: 240_000 * d.scale,
    async run(signal) {
      const cluster = needCluster(d);
      const csr = await pollUntil(
        async (s) => {
          const list = v.parse(CsrList, await cluster.kube.request('GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests', s));
          const mine = list.items.find((c) => c.metadata.name.startsWith('node-agent-csr-'));
          return mine ? done(mine) : notYet(`${list.items.length} CSRs, none named node-agent-csr-*`);
        },
        { what: 'agent CSR', timeoutMs: 180_000 * d.scale, intervalMs: 2000, signal },
      );
      expect(csr.spec.signerName === 'kubernetes.io/kube-apiserver-client', `signerName ${csr.spec.signerName}`);
      expect(csr.spec.expirationSeconds === 2592000, `expirationSeconds ${csr.spec.expirationSeconds}`);
      expect(
        JSON.stringify(csr.spec.usages) === JSON.stringify(['digital signature', 'key encipherment', 'client auth']),
        `usages ${JSON.stringify(csr.spec.usages)}`,
      );
      const subject = csrSubject(csr.spec.request);
      const wantCn = `CN=gardener.cloud:node-agent:machine:${d.ctx.machineName}`;
      expect(subject.includes(wantCn) && subject.includes('O=gardener.cloud:node-agents'), `CSR subject "${subject}"`);
      await cluster.approveAndSign(csr.metadata.name, signal);
      const mode = await pollUntil(
        async (s) => {
          const out = (await d.guest.exec('stat -c %a /var/lib/gardener-node-agent/credentials/kubeconfig && grep -c client-certificate-data /var/lib/gardener-node-agent/credentials/kubeconfig', s)).out.trim();
          return /^\d+\n1$/.test(out) ? done(out.split('\n')[0]) : notYet(`kubeconfig: ${out}`);
        },
        { what: 'credentials/kubeconfig', timeoutMs: 60_000 * d.scale, intervalMs: 2000, signal },
      );
      expect(mode === '600', `credentials/kubeconfig mode ${mode}`);
      return `${csr.metadata.name} approved`;
    },
  };
}

const nodePath = (d: StepDeps): string => `/api/v1/nodes/${d.ctx.nodeName}`;

async function waitNodeChecksum(d: StepDeps, cluster: Cluster, checksum: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  await pollUntil(
    async (s) => {
      const node = await cluster.kube.get(nodePath(d), s);
      const got = node.metadata.annotations?.['checksum/cloud-config-data'];
      return got === checksum ? done(true) : notYet(`Node annotation checksum/cloud-config-data=${got ?? '<unset>'}, want ${checksum.slice(0, 12)}…`);
    },
    { what: 'OSC applied', timeoutMs, intervalMs: 2000, signal },
  );
}

/** Files (mode + sha256) and units (active) of an OSC version, checked inside the guest. */
async function checkOnDisk(d: StepDeps, osc: OscVersion, signal: AbortSignal): Promise<void> {
  const lines = osc.files.map((f) => `echo "${f.path} $(stat -c %a ${f.path} 2>&1) $(sha256sum < ${f.path} | cut -d' ' -f1)"`);
  const out = await d.guest.run(lines.join('\n'), signal);
  const byPath = new Map(out.trim().split('\n').map((l) => { const [p, ...rest] = l.split(' '); return [p ?? '', rest] as const; }));
  for (const f of osc.files) {
    const [mode, sha] = byPath.get(f.path) ?? [];
    expect(mode === f.mode, `${f.path}: mode ${mode}, want ${f.mode}`);
    const want = new Bun.CryptoHasher('sha256').update(f.content).digest('hex');
    expect(sha === want, `${f.path}: content differs`);
  }
  const agentless = osc.units.filter((u) => u !== 'gardener-node-agent.service');
  const states = (await d.guest.exec(`systemctl is-active ${agentless.join(' ')}`, signal)).out.trim().split('\n');
  agentless.forEach((u, i) => expect(states[i] === 'active', `${u} is ${states[i]}`));
}

export interface OscSteps {
  readonly identity: ScenarioIdentity;
  readonly push: (osc: OscVersion, signal: AbortSignal) => Promise<void>;
}

export function oscPusher(d: StepDeps, identity: ScenarioIdentity): OscSteps {
  return {
    identity,
    push: async (osc, signal) => {
      const cluster = needCluster(d);
      const secret = oscSecret(identity, osc);
      await cluster.kube.apply('/api/v1/namespaces/kube-system/secrets', secret, signal);
    },
  };
}

/** Step 4: the initial OSC is applied: files with modes, units active, Node annotation and labels. */
export function applyStep(d: StepDeps, o: OscSteps): Step {
  return {
    n: 4,
    title: 'OSC applied: files with modes, units active, Node annotation checksum/cloud-config-data and labels set',
    needs: [3],
    timeoutMs: 360_000 * d.scale,
    async run(signal) {
      const cluster = needCluster(d);
      const osc = reconcileOsc(o.identity, 1);
      await waitNodeChecksum(d, cluster, osc.checksum, 340_000 * d.scale, signal);
      const node = await cluster.kube.get(nodePath(d), signal);
      const labels = node.metadata.labels ?? {};
      expect(labels['worker.gardener.cloud/kubernetes-version'] === d.ctx.kubernetesVersion, `label kubernetes-version=${labels['worker.gardener.cloud/kubernetes-version']}`);
      expect(labels['node-role.kubernetes.io/worker'] === '', 'label node-role.kubernetes.io/worker missing');
      await checkOnDisk(d, osc, signal);
      const env = await d.guest.run('systemctl show -P Environment gna-e2e-oneshot.service; cat /run/gna-e2e/kubelet.seen', signal);
      expect(env.includes('GNA_E2E_DROPIN=1'), `drop-in not in effect: ${env.trim()}`);
      expect(env.includes('generation=1'), `stand-in kubelet did not start with generation 1: ${env.trim()}`);
      return `${osc.files.length} files, ${osc.units.length} units, checksum ${osc.checksum.slice(0, 12)}…`;
    },
  };
}

const unitIds = async (d: StepDeps, units: readonly string[], signal: AbortSignal): Promise<Map<string, string>> => {
  const ids = new Map<string, string>();
  for (const u of units) {
    const props = await d.guest.unitProps(u, ['InvocationID', 'ActiveEnterTimestamp', 'ActiveState'], signal);
    ids.set(u, `${props.get('InvocationID')}@${props.get('ActiveEnterTimestamp')}`);
  }
  return ids;
};

/** Step 5: changing one unit's file restarts that unit only (systemd's InvocationID / ActiveEnterTimestamp). */
export function changeStep(d: StepDeps, o: OscSteps): Step {
  return {
    n: 5,
    title: "OSC change of one unit's file restarts that unit only (InvocationID/ActiveEnterTimestamp)",
    needs: [4],
    timeoutMs: 240_000 * d.scale,
    async run(signal) {
      const cluster = needCluster(d);
      const watched = ['gna-e2e-kubelet.service', 'gna-e2e-oneshot.service', 'gardener-node-agent.service'];
      const before = await unitIds(d, watched, signal);
      const osc = reconcileOsc(o.identity, 2);
      await o.push(osc, signal);
      await waitNodeChecksum(d, cluster, osc.checksum, 220_000 * d.scale, signal);
      const after = await unitIds(d, watched, signal);
      expect(before.get('gna-e2e-kubelet.service') !== after.get('gna-e2e-kubelet.service'), 'gna-e2e-kubelet.service was not restarted');
      expect(before.get('gna-e2e-oneshot.service') === after.get('gna-e2e-oneshot.service'), 'gna-e2e-oneshot.service was restarted too');
      expect(before.get('gardener-node-agent.service') === after.get('gardener-node-agent.service'), 'gardener-node-agent.service was restarted too');
      const seen = await d.guest.run('cat /run/gna-e2e/kubelet.seen', signal);
      expect(seen.includes('generation=2'), `stand-in kubelet saw ${seen.trim()}`);
      await checkOnDisk(d, osc, signal);
      return 'only gna-e2e-kubelet.service got a new InvocationID';
    },
  };
}

const LeaseSpec = v.looseObject({
  spec: v.looseObject({ holderIdentity: v.optional(v.string()), renewTime: v.optional(v.string()), leaseDurationSeconds: v.optional(v.number()) }),
});

/** Step 6: restart annotation handled and removed; token Secret synced 0640; Lease renewed. */
export function nodeTokenLeaseStep(d: StepDeps): Step {
  return {
    n: 6,
    title: 'restart annotation restarts the unit and is removed; token Secret synced with 0640; Lease renewed',
    needs: [4],
    timeoutMs: 240_000 * d.scale,
    async run(signal) {
      const cluster = needCluster(d);
      const problems: string[] = [];
      const attempt = async (what: string, fn: () => Promise<void>): Promise<void> => {
        try {
          await fn();
        } catch (err) {
          problems.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
        }
      };
      await attempt('restart annotation', async () => {
        const before = await unitIds(d, ['gna-e2e-oneshot.service'], signal);
        await cluster.kube.mergePatch(nodePath(d), { metadata: { annotations: { 'worker.gardener.cloud/restart-systemd-services': 'gna-e2e-oneshot' } } }, signal);
        await pollUntil(
          async (s) => {
            const node = await cluster.kube.get(nodePath(d), s);
            const ann = node.metadata.annotations?.['worker.gardener.cloud/restart-systemd-services'];
            if (ann !== undefined) return notYet(`annotation still "${ann}"`);
            const after = await unitIds(d, ['gna-e2e-oneshot.service'], s);
            return after.get('gna-e2e-oneshot.service') !== before.get('gna-e2e-oneshot.service') ? done(true) : notYet('annotation removed but gna-e2e-oneshot.service not restarted');
          },
          { what: 'restart annotation', timeoutMs: 90_000 * d.scale, intervalMs: 2000, signal },
        );
      });
      await attempt('token', async () => {
        const out = await pollUntil(
          async (s) => {
            const r = await d.guest.exec(`stat -c %a ${d.ctx.tokenPath} && cat ${d.ctx.tokenPath}`, s);
            return r.rc === 0 ? done(r.out) : notYet(r.out.trim());
          },
          { what: 'token file', timeoutMs: 60_000 * d.scale, intervalMs: 2000, signal },
        );
        const [mode, ...rest] = out.split('\n');
        expect(mode === '640', `${d.ctx.tokenPath} mode ${mode}`);
        expect(rest.join('\n').trim() === d.ctx.tokenValue, `${d.ctx.tokenPath} content differs`);
      });
      await attempt('lease', async () => {
        const path = `/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gardener-node-agent-${d.ctx.nodeName}`;
        const first = await pollUntil(
          async (s) => {
            const lease = await cluster.kube.find(path, s);
            return lease ? done(v.parse(LeaseSpec, lease).spec) : notYet('Lease absent');
          },
          { what: 'Lease', timeoutMs: 60_000 * d.scale, intervalMs: 2000, signal },
        );
        expect(first.holderIdentity === `gardener-node-agent-${d.ctx.nodeName}`, `holderIdentity ${first.holderIdentity}`);
        expect(first.leaseDurationSeconds === 40, `leaseDurationSeconds ${first.leaseDurationSeconds}`);
        await pollUntil(
          async (s) => {
            const spec = v.parse(LeaseSpec, await cluster.kube.get(path, s)).spec;
            return spec.renewTime !== first.renewTime ? done(true) : notYet(`renewTime still ${first.renewTime}`);
          },
          { what: 'Lease renewal', timeoutMs: 45_000 * d.scale, intervalMs: 2000, signal },
        );
      });
      if (problems.length > 0) throw new Error(problems.join('; '));
      return 'annotation removed after restart, token 0640, renewTime advanced';
    },
  };
}

/** Step 7: SIGKILL of the agent in the middle of an apply; systemd restarts it and the apply converges. */
export function killStep(d: StepDeps, o: OscSteps): Step {
  return {
    n: 7,
    title: 'systemctl kill -s KILL gardener-node-agent mid-apply → systemd restarts it and it converges',
    needs: [4],
    timeoutMs: 300_000 * d.scale,
    async run(signal) {
      const cluster = needCluster(d);
      const before = await d.guest.unitProps('gardener-node-agent.service', ['InvocationID', 'NRestarts'], signal);
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
      const midApply = node.metadata.annotations?.['checksum/cloud-config-data'] !== osc.checksum;
      await waitNodeChecksum(d, cluster, osc.checksum, 200_000 * d.scale, signal);
      const after = await d.guest.unitProps('gardener-node-agent.service', ['InvocationID', 'NRestarts', 'ActiveState'], signal);
      expect(after.get('InvocationID') !== before.get('InvocationID'), 'agent InvocationID unchanged: systemd did not restart it');
      expect(after.get('ActiveState') === 'active', `agent is ${after.get('ActiveState')}`);
      await checkOnDisk(d, osc, signal);
      const slow = await d.guest.exec('cat /run/gna-e2e-slow.done', signal);
      expect(slow.rc === 0, 'gna-e2e-slow.service never completed');
      expect(midApply, 'the kill landed after the apply had finished (Node already had the new checksum)');
      return `killed mid-apply, NRestarts ${before.get('NRestarts')}→${after.get('NRestarts')}`;
    },
  };
}
