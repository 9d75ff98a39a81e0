import type { Osc, Unit } from "../../osc/index.ts";

/** A unit the OSC manages, with whether it should be running. */
export interface ManagedUnit {
  readonly name: string;
  readonly enabled: boolean;
}

/**
 * A unit without `enable` is monitored when it carries configuration (content or a drop-in): an
 * extension that only adds a drop-in to an OS unit still relies on it running. This deliberately
 * differs from the OSC controller, which treats a missing `enable` as enabled.
 */
const enabledOf = (u: Unit): boolean => u.enable ?? (u.content !== undefined || (u.dropIns?.length ?? 0) > 0);

/** Plain code-unit order (Go's strings.Compare), not locale collation. */
const byteOrder = (a: ManagedUnit, b: ManagedUnit): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The units to check (controllers.md §10 step 3): spec units, then extension units — an extension
 * unit of an existing name overrides `enabled` only when it sets `enable` — sorted by name.
 */
export function managedUnits(osc: Osc): ManagedUnit[] {
  const units: Array<{ name: string; enabled: boolean }> = (osc.spec.units ?? []).map((u) => ({ name: u.name, enabled: enabledOf(u) }));
  for (const u of osc.status.extensionUnits ?? []) {
    const existing = units.find((x) => x.name === u.name);
    if (existing === undefined) units.push({ name: u.name, enabled: enabledOf(u) });
    else if (u.enable !== undefined) existing.enabled = u.enable;
  }
  return units.sort(byteOrder);
}
