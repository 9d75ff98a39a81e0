import type { HostFs } from "../../host/index.ts";
import { decodeOsc, type Osc, readYaml } from "../../osc/index.ts";
import { errorText } from "./errors.ts";

/** Written by the OSC controller after every successful apply (absolute host path). */
export const lastAppliedOscPath = "/var/lib/gardener-node-agent/last-applied-osc.yaml";

/** The last-applied OSC exists but is not an OperatingSystemConfig this controller can read. */
export class LastAppliedOscError extends Error {
  override readonly name = "LastAppliedOscError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

const present = (doc: unknown, key: string): boolean =>
  typeof doc === "object" && doc !== null && !Array.isArray(doc) && typeof (doc as Record<string, unknown>)[key] === "string" && (doc as Record<string, unknown>)[key] !== "";

/**
 * The last-applied OSC, or undefined when the file does not exist yet. Upstream decodes it without
 * a target type, so `apiVersion` and `kind` must be in the file (nothing is defaulted) and must name
 * an `extensions.gardener.cloud/v1alpha1` OperatingSystemConfig.
 */
export async function readLastAppliedOsc(host: HostFs): Promise<Osc | undefined> {
  let text: string | undefined;
  try {
    text = await host.readText(lastAppliedOscPath);
  } catch (err) {
    throw new LastAppliedOscError(`unable to read last-applied OSC: ${errorText(err)}`, { cause: err });
  }
  if (text === undefined) return undefined;
  try {
    const doc = readYaml(text);
    if (!present(doc, "apiVersion") || !present(doc, "kind")) throw new Error("apiVersion and kind must be set");
    return decodeOsc(text);
  } catch (err) {
    throw new LastAppliedOscError(`unable to decode last-applied OSC: ${errorText(err)}`, { cause: err });
  }
}
