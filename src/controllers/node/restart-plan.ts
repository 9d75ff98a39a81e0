/** What the restart annotation asks for, split into units to restart, rejected pieces and the agent itself. */
export interface RestartPlan {
  /** Units to restart now, in annotation order (duplicates kept, as upstream). */
  readonly restart: readonly string[];
  /** Pieces whose unit name systemd would refuse (not restarted; reported as a Warning event). */
  readonly invalid: readonly string[];
  /** `gardener-node-agent.service` was requested: restart it last, after the annotation is gone. */
  readonly restartAgent: boolean;
}

export const agentUnitName = "gardener-node-agent.service";
const serviceSuffix = ".service";
/** systemd's UNIT_NAME_MAX (256) includes the terminating NUL. */
const unitNameMax = 255;
/** Characters systemd allows in unit names (unit_name_is_valid: VALID_CHARS plus "@" and the suffix dot). */
const validChars = /^[A-Za-z0-9:_.\\@-]+$/;

/**
 * A plain (`foo.service`) or instance (`foo@bar.service`) service name systemd accepts. Templates
 * (`foo@.service`) are rejected too: systemd cannot restart a template, only its instances.
 */
export function isValidServiceName(unit: string): boolean {
  if (unit.length > unitNameMax || !validChars.test(unit) || !unit.endsWith(serviceSuffix)) return false;
  const prefix = unit.slice(0, -serviceSuffix.length);
  if (prefix === "") return false;
  const at = prefix.indexOf("@");
  if (at < 0) return true;
  return at > 0 && prefix.indexOf("@", at + 1) < 0 && at < prefix.length - 1;
}

/**
 * Splits the annotation value on "," (no trimming, empty pieces kept — as upstream), appends
 * ".service" where missing and sorts each piece into restart / invalid / agent.
 */
export function restartPlan(value: string): RestartPlan {
  const restart: string[] = [];
  const invalid: string[] = [];
  let restartAgent = false;
  for (const piece of value.split(",")) {
    const unit = piece.endsWith(serviceSuffix) ? piece : `${piece}${serviceSuffix}`;
    if (unit === agentUnitName) restartAgent = true;
    else if (isValidServiceName(unit)) restart.push(unit);
    else invalid.push(unit);
  }
  return { restart, invalid, restartAgent };
}
