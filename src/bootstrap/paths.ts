/** Fixed host paths of the bootstrap procedure (spec bootstrap-and-config.md §2). */
const baseDir = "/var/lib/gardener-node-agent";
export const tempDir = `${baseDir}/tmp`;
const credentialsDir = `${baseDir}/credentials`;
export const bootstrapTokenPath = `${credentialsDir}/bootstrap-token`;
export const kubeletDir = "/var/lib/kubelet";
export const systemdUnitDir = "/etc/systemd/system";
export const agentUnitName = "gardener-node-agent.service";
export const initUnitName = "gardener-node-init.service";
export const agentUnitPath = `${systemdUnitDir}/${agentUnitName}`;
