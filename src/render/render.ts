import type { Osc } from "../osc/index.ts";
import { assembleScript, wrapProvisionOscIntoOneshotScript } from "./bash.ts";
import { renderCloudConfig } from "./cloud-config.ts";
import { renderGzipUserData, renderPackedCloudConfig } from "./packed-cloud-config.ts";
import type { RenderSecrets, ResolvedFile, ResolvedUnit } from "./content.ts";
import { resolveFile, resolveUnit } from "./content.ts";
import { RenderError } from "./errors.ts";

export type UserDataFormat = "bash" | "cloud-config";

export interface RenderOptions {
  readonly format: UserDataFormat;
  /** Secrets for `secretRef` files (same namespace as the OSC), by name. */
  readonly secrets?: RenderSecrets;
  /**
   * cloud-config only: everything except the MCM placeholder files as one gzip-compressed script
   * (packed-cloud-config.ts), as `render --provision` prints it to fit providers' user-data limits.
   */
  readonly packed?: boolean;
}

/**
 * Renders a provision OSC into user data (spec §12): pure and deterministic, no I/O and no clock.
 * `bash` is byte-for-byte the upstream helpers' output (files, units, activation, run-once wrapper);
 * `cloud-config` is the same content as a #cloud-config document. Throws RenderError naming the field.
 */
export function renderUserData(osc: Osc, opts: RenderOptions): string {
  const { files, units } = resolveProvision(osc, opts.secrets);
  switch (opts.format) {
    case "bash":
      return wrapProvisionOscIntoOneshotScript(assembleScript(files, units));
    case "cloud-config":
      return opts.packed === true ? renderPackedCloudConfig(files, units) : renderCloudConfig(files, units);
  }
}

function resolveProvision(osc: Osc, secrets: RenderSecrets = {}): { files: ResolvedFile[]; units: ResolvedUnit[] } {
  if (osc.spec.purpose === "reconcile") {
    throw new RenderError("invalid", "spec.purpose", 'a "reconcile" OperatingSystemConfig has no user data');
  }
  return {
    files: (osc.spec.files ?? []).map((f, i) => resolveFile(f, i, secrets)),
    units: (osc.spec.units ?? []).map((u, i) => resolveUnit(u, i)),
  };
}

/**
 * The provision OSC as gzip-compressed binary user data (packed-cloud-config.ts renderGzipUserData):
 * the smallest form, for providers whose API carries bytes. Placeholder files ride in the gzip comment.
 */
export function renderUserDataGzip(osc: Osc, secrets?: RenderSecrets): Uint8Array {
  const { files, units } = resolveProvision(osc, secrets);
  return renderGzipUserData(files, units);
}
