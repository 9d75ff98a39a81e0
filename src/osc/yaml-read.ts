import { isScalar, parse, parseDocument, visit } from "yaml";
import { OscDecodeError } from "./errors.ts";
import { readYamlFast } from "./yaml-fast.ts";

/** Typed OSC fields whose plain scalars are resolved with YAML 1.1 rules, like Go's reader does. */
const yaml11Keys: Readonly<Record<string, "number" | "boolean">> = {
  permissions: "number",
  enable: "boolean",
  overridePath: "boolean",
  readinessProbe: "boolean",
  transmitUnencoded: "boolean",
};

/**
 * Parses YAML (or JSON) into plain data. The document is read with YAML 1.2 core rules so that
 * strings stay strings, except that typed fields (`permissions`, booleans) follow YAML 1.1 (what
 * upstream's reader does): `0644` is octal 420, decimal `420` stays 420. Texts inside a subset where
 * that makes no difference are read by Bun's native parser instead (yaml-fast.ts).
 */
export function readYaml(text: string): unknown {
  return readYamlFast(text) ?? readYamlCompat(text);
}

/** The reference reader: the `yaml` package, 1.2 core rules plus 1.1 for typed fields. */
export function readYamlCompat(text: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) {
    throw new OscDecodeError(`invalid YAML: ${doc.errors[0]?.message ?? "unknown error"}`, { cause: doc.errors[0] });
  }
  visit(doc, {
    Pair(_, pair) {
      if (!isScalar(pair.key) || !isScalar(pair.value) || typeof pair.key.value !== "string") return;
      const want = yaml11Keys[pair.key.value];
      const src = pair.value.source;
      if (want === undefined || typeof src !== "string" || pair.value.type !== "PLAIN") return;
      const v11: unknown = parse(src, { version: "1.1" });
      if (typeof v11 === want) pair.value.value = v11;
    },
  });
  return doc.toJS({ maxAliasCount: 100 });
}
