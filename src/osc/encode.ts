import { type Osc, oscApiVersion, oscKind } from "./schema.ts";
import { toPlain, writeYaml } from "./yaml-write.ts";

/** The plain (JSON-shaped) form of an OSC with apiVersion/kind always set — what last-applied stores. */
export function oscToPlain(osc: Osc): Record<string, unknown> {
  const spec = toPlain(osc.spec) as Record<string, unknown>;
  // Go always serialises these two (no omitempty); keep them so a Go agent reads the same object.
  spec["type"] = osc.spec.type;
  spec["purpose"] = osc.spec.purpose;
  return { apiVersion: oscApiVersion, kind: oscKind, metadata: {}, spec, status: toPlain(osc.status) };
}

/** `last-applied-osc.yaml` bytes: keys sorted, permissions decimal, Kubernetes JSON field names. */
export function encodeOsc(osc: Osc): string {
  return writeYaml(oscToPlain(osc));
}
