// The OSC controller's durable memory (design.md "State on disk"): written only by the OSC controller,
// read by the checkers too, so the paths live here rather than in one controller's folder.
export const stateDir = "/var/lib/gardener-node-agent";
export const lastAppliedPath = `${stateDir}/last-applied-osc.yaml`;
export const changesPath = `${stateDir}/last-computed-osc-changes.yaml`;
