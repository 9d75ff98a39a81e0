import { guestShare } from "./user-data.ts";
import type { StepDeps } from "./steps-boot.ts";

/** After a failure: the guest's view (journal of the relevant units, failed units, agent state files) into the share. */
export async function collectDiagnostics(d: StepDeps, signal: AbortSignal): Promise<void> {
  const script = `exec > ${guestShare}/diagnostics.txt 2>&1
set -x
systemctl --no-pager list-units --failed
systemctl --no-pager status gardener-node-agent.service gardener-node-init.service gna-e2e-kubelet.service gna-e2e-oneshot.service gna-e2e-slow.service
ls -la /var/lib/gardener-node-agent /var/lib/gardener-node-agent/credentials /opt/bin
cat /var/lib/gardener-node-agent/last-computed-osc-changes.yaml
cloud-init status --long
journalctl -b --no-pager -o short-monotonic -u gardener-node-init.service -u gardener-node-agent.service | tail -n 400
journalctl -b --no-pager -o short-monotonic -u cloud-final.service | tail -n 100`;
  try {
    await d.guest.exec(script, signal, 60_000);
    console.log(`[e2e] guest diagnostics: ${d.ctx.work}/share/diagnostics.txt`);
  } catch (err) {
    console.log(`[e2e] guest diagnostics not collected: ${err instanceof Error ? err.message : String(err)}`);
  }
}
