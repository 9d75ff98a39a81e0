import { nodeRef } from "../../../events.ts";
import type { ApplyExtension } from "../../apply/extension.ts";
import { policyUnitJobs } from "../../apply/policy-jobs.ts";
import { diskDisruptionPolicy, effectiveDisruptionPolicy, policyFileOf } from "../../plan/disruption-policy.ts";
import { readLastAppliedDigests } from "../../plan/state.ts";

/** The Warning's reason when the policy file cannot be used (the whole policy is then ignored). */
const invalidPolicyReason = "InvalidDisruptionPolicy";

/**
 * The disruption policy's part in the apply (issue 26): with a valid policy the unit jobs go by its actions
 * (apply/units.ts), and the daemon-reload is left out when nothing needs it. No policy file: not armed, the
 * apply is upstream's. An invalid one: a Warning once per version and error, then upstream's behaviour.
 */
export function disruptionPolicyExtension(): ApplyExtension {
  let warned: string | undefined;
  return {
    name: "disruption-policy",
    async arm({ ports, osc, checksum, node }) {
      const hostName = ports.node.hostName.toLowerCase();
      // The usual node: no policy in this OSC and none on disk. Not armed then, whatever last-applied says
      // (it only decides between the file on disk and none), so it is not read here (the planner does).
      // A file that cannot be read is left to the full look below (it may not matter there).
      const onDisk = policyFileOf(osc, hostName) === undefined ? await diskDisruptionPolicy(ports.host).catch(() => undefined) : undefined;
      if (onDisk?.kind === "none") return undefined;
      // Only paths and units are compared: a big OSC's digests do.
      const lastApplied = await readLastAppliedDigests(ports.host);
      const effective = await effectiveDisruptionPolicy(ports.host, osc, lastApplied, hostName);
      if (effective.kind === "none") return undefined;
      if (effective.kind === "invalid") {
        const key = `${checksum}/${effective.error}`;
        if (warned !== key) {
          warned = key;
          const message = `${effective.error}; the whole policy is ignored and changed units restart as without one`;
          ports.log.warn("Ignoring the disruption policy", { error: effective.error, checksum });
          if (node !== undefined) await ports.events.event(nodeRef(node), "Warning", invalidPolicyReason, "Apply", message);
        }
        return undefined;
      }
      return { unitJobs: policyUnitJobs({ osc, lastApplied, policy: effective.policy }), verify: async () => undefined };
    },
  };
}
