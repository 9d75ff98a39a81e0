import type { Osc } from "../../../osc/index.ts";
import { containerdUnitName } from "../constants.ts";

export const envDropInName = "30-env_config.conf";

/**
 * Returns the OSC with the env drop-in, which puts /var/bin/containerruntimes in front of the agent's
 * own PATH (§7.3), appended to the first spec unit `containerd.service` (or a new spec unit carrying
 * only that drop-in). It then takes part in the diff and last-applied.
 */
export function injectEnvDropIn(osc: Osc, processPath: string): Osc {
  const dropIn = { name: envDropInName, content: `[Service]\nEnvironment="PATH=/var/bin/containerruntimes:${processPath}"\n` };
  const units = [...(osc.spec.units ?? [])];
  const i = units.findIndex((u) => u.name === containerdUnitName);
  if (i < 0) units.push({ name: containerdUnitName, dropIns: [dropIn] });
  else {
    const u = units[i] as (typeof units)[number];
    units[i] = { ...u, dropIns: [...(u.dropIns ?? []), dropIn] };
  }
  return { ...osc, spec: { ...osc.spec, units } };
}
