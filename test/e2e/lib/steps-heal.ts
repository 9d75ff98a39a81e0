import { expect, nodePath, unitIds } from "./checks.ts";
import { standinUnit, oneshotUnit } from "./osc.ts";
import { done, notYet, pollUntil } from "./poll.ts";
import type { Step } from "./report.ts";
import type { StepDeps } from "./steps-boot.ts";

const driftPolicy = "node-agent.gardener.cloud/drift-policy";
const tampered = "/etc/gna-e2e/kubelet.conf";

/**
 * Step 8: with drift-policy=repair, a managed file edited in the guest is restored (content and mode) by
 * the agent's periodic drift check, and exactly the unit listing it in filePaths is restarted.
 */
export function driftRepairStep(d: StepDeps): Step {
  return {
    n: 8,
    title: `drift-policy=repair: an edited managed file is restored and only ${standinUnit} restarts`,
    needs: [4],
    timeoutMs: 180_000 * d.scale,
    async run(signal) {
      const cluster = d.cluster;
      await cluster.kube.mergePatch(nodePath(d), { metadata: { annotations: { [driftPolicy]: "repair" } } }, signal);
      const want = (await d.guest.run(`stat -c %a ${tampered} && sha256sum < ${tampered} | cut -d' ' -f1`, signal)).trim();
      const before = await unitIds(d, [standinUnit, oneshotUnit], signal);
      // Different bytes and a looser mode, as a hand edit would leave them.
      await d.guest.run(`echo 'edited by hand' > ${tampered} && chmod 0666 ${tampered}`, signal);
      const started = Date.now();
      await pollUntil(
        async (s) => {
          const got = (await d.guest.run(`stat -c %a ${tampered} && sha256sum < ${tampered} | cut -d' ' -f1`, s)).trim();
          return got === want ? done(true) : notYet(`${tampered} is "${got.replace("\n", " ")}", want "${want.replace("\n", " ")}"`);
        },
        { what: "drifted file restored", timeoutMs: 120_000 * d.scale, intervalMs: 1000, signal },
      );
      const repairedIn = Math.round((Date.now() - started) / 1000);
      const after = await pollUntil(
        async (s) => {
          const ids = await unitIds(d, [standinUnit, oneshotUnit], s);
          return ids.get(standinUnit) !== before.get(standinUnit) ? done(ids) : notYet(`${standinUnit} not restarted yet`);
        },
        { what: `${standinUnit} restarted`, timeoutMs: 30_000 * d.scale, intervalMs: 1000, signal },
      );
      expect(after.get(oneshotUnit) === before.get(oneshotUnit), `${oneshotUnit} was restarted too`);
      const seen = (await d.guest.run("cat /run/gna-e2e/kubelet.seen", signal)).trim();
      expect(!seen.includes("edited by hand"), `${standinUnit} started with the edited file`);
      const events = await cluster.kube.list("/api/v1/namespaces/default/events", signal);
      const repaired = events.find((e) => (e as Record<string, unknown>)["reason"] === "DriftRepaired");
      expect(repaired !== undefined, "no DriftRepaired event on the Node");
      await cluster.kube.mergePatch(nodePath(d), { metadata: { annotations: { [driftPolicy]: null } } }, signal);
      return `restored within ${repairedIn} s, ${standinUnit} restarted, ${oneshotUnit} untouched`;
    },
  };
}
