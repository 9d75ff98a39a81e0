import { keepOutOfTopTier } from "../jit/index.ts";
import { yamlPackage } from "../config/index.ts";
import { type ChunkedText, type EncodedSize, streamYamlFast, writeYamlFast } from "./yaml-write-fast.ts";

/** Drops undefined keys and empty lists (Go omitempty); keeps everything else verbatim. */
export function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    const from = value as Record<string, unknown>;
    for (const k of Object.keys(from)) {
      const v = from[k];
      if (v === undefined) continue;
      if (Array.isArray(v) && v.length === 0) continue;
      out[k] = toPlain(v);
    }
    return out;
  }
  return value;
}

// Once per node of the state files, like the writer's functions (yaml-write-fast.ts): kept below the FTL tier.
keepOutOfTopTier(toPlain);

/** YAML shaped like Go's sigs.k8s.io/yaml output: sorted keys, sequences not indented, no folding. */
export function writeYaml(value: unknown): string {
  return writeYamlFast(value) ?? writeYamlCompat(value);
}

/**
 * `writeYaml`'s bytes pushed out in chunks (yaml-write-fast.ts streamYamlFast); `value` must not change before
 * they are. `size`: the same record's length when last encoded (its buffer's size), updated.
 */
export function streamYaml(value: unknown, size?: EncodedSize): ChunkedText {
  const streamed = streamYamlFast(value, undefined, undefined, size);
  if (streamed !== undefined) return streamed;
  const text = writeYamlCompat(value);
  return { writeTo: (write) => write(new TextEncoder().encode(text)) };
}

/** The reference writer: the `yaml` package (yaml-write-fast.ts reproduces its bytes for common shapes). */
export function writeYamlCompat(value: unknown): string {
  return yamlPackage().stringify(value, { sortMapEntries: true, indentSeq: false, lineWidth: 0, minContentWidth: 0, version: "1.1" });
}
