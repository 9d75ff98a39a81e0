import { decodeOscDocument } from "./decode.ts";
import { type Osc, oscApiVersion, oscKind } from "./schema.ts";
import type { ChunkedText } from "./yaml-write-fast.ts";
import { streamYaml, toPlain, writeYaml } from "./yaml-write.ts";

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

/**
 * `encodeOsc(osc)`'s bytes, pushed out a piece at a time when written (issue 27: a 20 MB OSC's text, its
 * UTF-8 copy for the write and the one for the digest were ~60 MB at once at the end of an apply), and
 * what `decodeOsc` returns for them, without reading the YAML back: the writer's output reads as the plain
 * document it was written from (round-trip tests), so validating that document gives the same OSC
 * (reading back a 1000-file OSC's YAML costs ~9 ms and ~3 MB of garbage). Taken now: `osc` may change
 * before the write.
 */
export function encodeOscChunked(osc: Osc): { readonly chunks: ChunkedText; readonly decoded: Osc } {
  const plain = oscToPlain(osc);
  return { chunks: streamYaml(plain, lastAppliedEncodedSize), decoded: decodeOscDocument(plain) };
}

/** last-applied's length when last encoded: the size of the next encode's buffer. */
const lastAppliedEncodedSize = { bytes: 0 };
