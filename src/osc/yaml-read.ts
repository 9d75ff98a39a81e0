import { unsafeStructure, unsafeTree, yamlErrorText, yamlPackage } from "../config/index.ts";
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
 * that makes no difference are read by Bun's native parser instead (yaml-fast.ts). UTF-8 bytes are
 * given to that parser as they are: a big OSC's text then does not exist beside its parse (issue 27).
 */
export function readYaml(text: string | Uint8Array): unknown {
  const fast = readYamlFast(text);
  // The fast path reads no aliases (yaml-fast.ts): its document is a tree.
  const doc = fast ?? readYamlCompat(typeof text === "string" ? text : new TextDecoder().decode(text));
  const unsafe = fast !== undefined ? unsafeTree(fast) : unsafeStructure(doc);
  if (unsafe !== undefined) throw new OscDecodeError(`invalid YAML: ${unsafe}`);
  return doc;
}

/** The reference reader: the `yaml` package, 1.2 core rules plus 1.1 for typed fields. */
export function readYamlCompat(text: string): unknown {
  // logLevel "error": the package would print warnings quoting keys to stderr, outside the logger.
  const { isScalar, parse, parseDocument, visit } = yamlPackage();
  const doc = parseDocument(text, { uniqueKeys: false, logLevel: "error" });
  const first = doc.errors[0];
  // The package's message quotes the offending line (an inline file may hold a credential): not kept as cause.
  if (first !== undefined) throw new OscDecodeError(`invalid YAML: ${yamlErrorText(first)}`);
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
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // toJS throws a plain ReferenceError for alias bombs and unresolvable aliases.
    if (err instanceof ReferenceError) throw new OscDecodeError("invalid YAML: an alias is unresolvable or expands too often");
    throw err;
  }
}
