import type { Osc } from "../../../osc/index.ts";

export const envDropInName = "30-env_config.conf";

/** The drop-in that puts /var/bin/containerruntimes in front of the agent's own PATH (§7.3). */
function envDropInContent(processPath: string): string {
  return `[Service]\nEnvironment="PATH=/var/bin/containerruntimes:${processPath}"\n`;
}

/**
 * Returns the OSC with the env drop-in appended to the first spec unit `containerd.service`
 * (or a new spec unit carrying only that drop-in). It then takes part in the diff and last-applied.
 */
export function injectEnvDropIn(osc: Osc, processPath: string): Osc {
  const dropIn = { name: envDropInName, content: envDropInContent(processPath) };
  const units = [...(osc.spec.units ?? [])];
  const i = units.findIndex((u) => u.name === "containerd.service");
  if (i < 0) units.push({ name: "containerd.service", dropIns: [dropIn] });
  else {
    const u = units[i] as (typeof units)[number];
    units[i] = { ...u, dropIns: [...(u.dropIns ?? []), dropIn] };
  }
  return { ...osc, spec: { ...osc.spec, units } };
}
