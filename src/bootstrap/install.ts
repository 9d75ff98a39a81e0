import type { HostFs } from "../host/index.ts";
import { agentUnitName, agentUnitPath, systemdUnitDir } from "./paths.ts";
import { agentUnitContent } from "./unit.ts";

const agentBinaryPath = "/opt/bin/gardener-node-agent";
/** Where `systemctl enable` links a unit with `WantedBy=multi-user.target`. */
const agentWantsLink = `${systemdUnitDir}/multi-user.target.wants/${agentUnitName}`;

/**
 * Offline installation into a root (image building, `install --root DIR`): the binary at
 * /opt/bin/gardener-node-agent (0755), the unit of spec §6.2 (0644) and the enablement symlink that
 * `systemctl --root DIR enable` would create (absolute target, as systemctl writes it).
 */
export async function installAgent(host: HostFs, binary: Uint8Array): Promise<void> {
  await host.writeFileAtomic(agentBinaryPath, binary, 0o755);
  await host.writeFileAtomic(agentUnitPath, agentUnitContent, 0o644);
  await host.ensureDir(`${systemdUnitDir}/multi-user.target.wants`);
  await host.symlink(agentUnitPath, agentWantsLink);
}
