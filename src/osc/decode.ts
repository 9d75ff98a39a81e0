import * as v from "valibot";
import { issuesMessage } from "../untrusted/index.ts";
import { OscDecodeError } from "./errors.ts";
import { type Osc, oscApiVersion, oscKind, oscSchema } from "./schema.ts";
import { readYaml } from "./yaml-read.ts";

/** Kept here too: OSC code and the controllers import it from the OSC module. */
export { issuesMessage };

/**
 * Decodes `osc.yaml` (YAML or JSON). Unknown fields are ignored; missing apiVersion/kind are tolerated,
 * any other apiVersion/kind is rejected.
 */
export function decodeOsc(text: string | Uint8Array): Osc {
  return decodeOscDocument(readYaml(text));
}

/** decodeOsc for a document already read from YAML (or built as plain data): validated and defaulted. */
export function decodeOscDocument(raw: unknown): Osc {
  if (raw === null || raw === undefined) throw new OscDecodeError("empty OperatingSystemConfig document");
  if (typeof raw !== "object" || Array.isArray(raw)) throw new OscDecodeError("OperatingSystemConfig document is not a mapping");
  const res = v.safeParse(oscSchema, raw);
  if (!res.success) throw new OscDecodeError(`invalid OperatingSystemConfig: ${issuesMessage(res.issues)}`);
  const osc = res.output;
  if (osc.apiVersion !== undefined && osc.apiVersion !== "" && osc.apiVersion !== oscApiVersion) {
    throw new OscDecodeError(`apiVersion: unexpected value, expected "${oscApiVersion}"`);
  }
  if (osc.kind !== undefined && osc.kind !== "" && osc.kind !== oscKind) {
    throw new OscDecodeError(`kind: unexpected value, expected "${oscKind}"`);
  }
  return { ...osc, apiVersion: oscApiVersion, kind: oscKind };
}
