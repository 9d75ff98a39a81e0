import type { HostFs } from "../../host/index.ts";
import type { Osc } from "../../osc/index.ts";
import { readLastAppliedWithTypeMeta } from "../shared/index.ts";
import { errorText } from "../../log/index.ts";

/** The last-applied OSC exists but is not an OperatingSystemConfig this controller can read. */
class LastAppliedOscError extends Error {
  override readonly name = "LastAppliedOscError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * The last-applied OSC, or undefined when the file does not exist yet. Upstream decodes it without
 * a target type, so `apiVersion` and `kind` must be in the file (nothing is defaulted) and must name
 * an `extensions.gardener.cloud/v1alpha1` OperatingSystemConfig.
 */
export async function readLastAppliedOsc(host: HostFs): Promise<Osc | undefined> {
  let read: Awaited<ReturnType<typeof readLastAppliedWithTypeMeta>>;
  try {
    read = await readLastAppliedWithTypeMeta(host);
  } catch (err) {
    throw new LastAppliedOscError(`unable to read last-applied OSC: ${errorText(err)}`, { cause: err });
  }
  if (read === undefined) return undefined;
  if (!read.typeMetaInFile) throw new LastAppliedOscError("unable to decode last-applied OSC: apiVersion and kind must be set");
  return read.osc;
}
